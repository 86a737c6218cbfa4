"""Tagged unions, open fallbacks, untagged variants and their names."""

from __future__ import annotations

from generator.ir.model import Primitive, Ref, UnionType, Variant
from tests.support.helpers import error_for, fields, ir_of


def test_const_tagged_objects_are_a_tagged_union_with_an_open_fallback(rules):
    shape = rules["Shape"]
    assert isinstance(shape, UnionType)
    assert shape.tag_key == "kind"
    assert [(v.tag, v.type) for v in shape.variants] == [("circle", Ref("ShapeCircle")), ("square", Ref("ShapeSquare"))]
    assert shape.fallback == "ShapeOther"


def test_a_variant_wrapping_an_object_subclasses_it_and_adds_the_tag(rules):
    circle = rules["ShapeCircle"]
    assert circle.base == "Circle"
    assert (circle.tag.key, circle.tag.attribute, circle.tag.value) == ("kind", "kind", "circle")
    assert [f.wire_name for f in circle.fields] == ["radius"]


def test_an_inline_variant_gets_union_plus_tag_as_its_name(rules):
    square = rules["ShapeSquare"]
    assert square.base is None and [f.wire_name for f in square.fields] == ["side"]


def test_the_fallback_keeps_the_tag_as_a_string_field(rules):
    other = rules["ShapeOther"]
    assert fields(other)["kind"].type == Primitive("str")
    assert other.keep_unknown == "keep"


def test_untagged_unions_keep_schema_order(rules):
    assert [v.type.kind for v in rules["Id"].variants] == ["int", "str"]


def test_untitled_inline_variants_are_named_by_their_required_keys(tmp_path):
    schema = {
        "$defs": {
            "Shape": {
                "anyOf": [
                    {"type": "object", "properties": {"radius": {"type": "number"}}, "required": ["radius"]},
                    {"type": "object", "properties": {"side": {"type": "number"}}, "required": ["side"]},
                ]
            }
        }
    }
    variants = ir_of(schema, tmp_path).by_name()["Shape"].variants
    assert [variant.type for variant in variants] == [Ref("ShapeWithRadius"), Ref("ShapeWithSide")]


def test_one_of_is_exclusive_and_any_of_is_not(tmp_path):
    variants = [{"type": "integer"}, {"type": "string"}]
    types = ir_of({"$defs": {"A": {"oneOf": variants}, "B": {"anyOf": variants}}}, tmp_path).by_name()
    assert types["A"].exclusive and not types["B"].exclusive


def test_a_fallback_not_that_excludes_exactly_the_known_tags_is_left_to_dispatch(rules):
    assert rules["ShapeOther"].checks is None


def test_a_fallback_not_that_says_something_else_is_checked_and_the_variant_is_untagged(tmp_path):
    tagged = {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}, "required": ["kind"]}
    other = {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "required": ["kind"],
        "not": {"anyOf": [tagged, {"required": ["x"]}]},
    }
    types = ir_of({"$defs": {"U": {"anyOf": [tagged, other]}}}, tmp_path).by_name()
    assert types["U"].fallback is None
    assert types["U"].variants[1] == Variant(Ref("UOther"))
    assert types["UOther"].checks.never == ("UOtherNot",)


TAGGED = {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}, "required": ["kind"]}
FALLBACK = {
    "type": "object",
    "properties": {"kind": {"type": "string"}},
    "required": ["kind"],
    "not": {"anyOf": [TAGGED]},
}


def test_a_tag_used_twice_is_an_error_naming_both_variants(tmp_path):
    twice = {**TAGGED, "properties": {**TAGGED["properties"], "x": {}}}
    error = error_for({"$defs": {"U": {"anyOf": [TAGGED, twice]}}}, tmp_path)
    assert error.pointer == "#/$defs/U/anyOf/1" and error.message == "tag kind='a' is also used by #/$defs/U/anyOf/0"


def test_a_second_open_fallback_is_an_error(tmp_path):
    error = error_for({"$defs": {"U": {"anyOf": [TAGGED, FALLBACK, FALLBACK]}}}, tmp_path)
    assert error.pointer == "#/$defs/U/anyOf/2" and error.message == "a second open fallback variant (first: UOther)"


def test_a_variant_that_declares_the_tag_without_a_const_is_an_error(tmp_path):
    untagged = {"type": "object", "properties": {"kind": {"type": "integer"}}}
    error = error_for({"$defs": {"U": {"anyOf": [TAGGED, untagged]}}}, tmp_path)
    assert error.pointer == "#/$defs/U/anyOf/1" and "declares the tag 'kind' without a const" in error.message
