"""Object types: attributes, presence, fields merged from allOf, attribute collisions."""

from __future__ import annotations

from tests.support.helpers import error_for, fields


def test_attributes_keep_their_wire_names(rules):
    item = fields(rules["Item"])
    assert item["itemId"].name == "item_id"
    assert item["_meta"].name == "meta"
    assert item["class"].name == "class_"


def test_presence_required_optional_and_nullable(rules):
    item = fields(rules["Item"])
    assert (item["itemId"].required, item["itemId"].nullable) == (True, False)
    assert (item["label"].required, item["label"].nullable) == (True, True)
    assert (item["count"].required, item["count"].nullable) == (False, False)
    assert (item["parent"].required, item["parent"].nullable) == (False, True)


def test_properties_that_map_to_the_same_attribute_collide(tmp_path):
    error = error_for({"$defs": {"A": {"type": "object", "properties": {"fooBar": {}, "foo_bar": {}}}}}, tmp_path)
    assert "'fooBar' and 'foo_bar' both map to foo_bar" in str(error)
    assert error.pointer == "#/$defs/A/properties/foo_bar" and "#/$defs/A/properties/fooBar" in str(error)


def test_a_property_that_meets_the_tag_attribute_collides(tmp_path):
    tag = {"type": "string", "const": "a"}
    variant = {"type": "object", "properties": {"kind": tag, "Kind": {}}, "required": ["kind"]}
    error = error_for({"$defs": {"U": {"anyOf": [variant]}}}, tmp_path)
    assert "'Kind' and 'kind' both map to kind" in str(error)


def test_default_on_error_on_a_required_property_needs_an_array(tmp_path):
    hinted = {"type": "string", "x-deserialize-default-on-error": True}
    error = error_for({"$defs": {"A": {"type": "object", "properties": {"x": hinted}, "required": ["x"]}}}, tmp_path)
    assert error.pointer == "#/$defs/A/properties/x" and "needs an array type" in error.message


def test_a_closed_object_with_a_flattened_union_is_refused(tmp_path):
    closed = {"type": "object", "properties": {"x": {}}, "anyOf": [{"required": ["x"]}], "additionalProperties": False}
    error = error_for({"$defs": {"A": closed}}, tmp_path)
    assert error.pointer == "#/$defs/A" and "additionalProperties: false beside anyOf/oneOf" in error.message
