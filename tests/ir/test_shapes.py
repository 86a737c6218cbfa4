"""Schema nodes to type expressions: references, wrappers, lists, free-form values, nulls."""

from __future__ import annotations

from generator.ir.model import AnyValue, JsonObject, ListOf, Primitive, Ref
from tests.support.helpers import error_for, fields, ir_of


def test_allof_wrapper_resolves_to_its_target_and_keeps_the_outer_description(rules):
    item_id = fields(rules["Item"])["itemId"]
    assert item_id.type == Ref("ItemId")
    assert item_id.doc == "Its id."


def test_recursive_references_are_plain_refs(rules):
    assert fields(rules["Item"])["parent"].type == Ref("Item")


def test_arrays_record_min_items_and_the_skip_hint(rules):
    assert fields(rules["Item"])["tags"].type == ListOf(Primitive("str"), min_items=1, skip_invalid_items=True)


def test_free_form_objects_and_any_values(rules):
    item = fields(rules["Item"])
    assert item["extra"].type == JsonObject()
    assert item["raw"].type == AnyValue()
    assert rules["Anything"].target == AnyValue()


def test_a_nested_any_of_of_one_null_is_null(tmp_path):
    types = ir_of({"$defs": {"A": {"anyOf": [{"anyOf": [{"type": "null"}]}]}}}, tmp_path).by_name()
    assert types["A"].variants[0].type == Primitive("none")


def test_a_definition_that_includes_itself_through_all_of_is_an_error(tmp_path):
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"a": {}}, "allOf": [{"$ref": "#/$defs/B"}]},
            "B": {"type": "object", "properties": {"b": {}}, "allOf": [{"$ref": "#/$defs/A"}]},
        }
    }
    error = error_for(schema, tmp_path)
    assert error.pointer == "#/$defs/A" and error.message == "A includes itself through allOf"


def test_an_unknown_type_is_an_error_at_its_pointer(tmp_path):
    error = error_for({"$defs": {"A": {"type": "strin"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/type" and error.message == "unknown type 'strin'"
