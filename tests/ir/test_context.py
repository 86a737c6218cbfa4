"""Claimed Python names, made-up names that step aside, $ref targets, alias cycles."""

from __future__ import annotations

from generator.ir.model import Alias, Primitive, Ref
from tests.support.helpers import error_for, fields, ir_of


def test_a_dangling_ref_names_its_pointer(tmp_path):
    error = error_for({"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/Nope"}}}}}, tmp_path)
    assert error.pointer == "#/$defs/A/properties/b/$ref"
    assert "dangling $ref '#/$defs/Nope'" in str(error)


def test_defs_names_that_meet_as_python_names_collide_naming_both_pointers(tmp_path):
    error = error_for({"$defs": {"Foo": {"type": "string"}, "foo": {"type": "string"}}}, tmp_path)
    assert error.pointer == "#/$defs/foo" and "#/$defs/Foo" in str(error)


def test_a_defs_name_and_a_builder_class_collide(tmp_path):
    schema = {"$defs": {"Foo": {"type": "object", "properties": {"a": {}}}, "FooBuilder": {"type": "string"}}}
    error = error_for(schema, tmp_path)
    assert "FooBuilder" in str(error) and "#/$defs/Foo" in str(error) and "#/$defs/FooBuilder" in str(error)


def test_made_up_names_step_aside_for_defs_names(tmp_path):
    schema = {
        "$defs": {
            "Shape": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle", "type": "string"}},
                        "required": ["kind"],
                    }
                ]
            },
            "ShapeCircle": {"type": "string"},
        }
    }
    types = ir_of(schema, tmp_path).by_name()
    assert isinstance(types["ShapeCircle"], Alias)
    assert [variant.type for variant in types["Shape"].variants] == [Ref("ShapeCircleVariant")]


def test_inline_variants_whose_content_is_the_same_are_named_by_their_position(tmp_path):
    same = {"type": "object", "properties": {"a": {"type": "string"}}}
    variants = ir_of({"$defs": {"U": {"anyOf": [same, same]}}}, tmp_path).by_name()["U"].variants
    assert [variant.type for variant in variants] == [Ref("UAnyOf0"), Ref("UAnyOf1")]


def test_made_up_names_of_properties_that_meet_step_aside(tmp_path):
    inline = {"type": "object", "properties": {"x": {"type": "string"}}}
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"bC": inline}},
            "AB": {"type": "object", "properties": {"c": inline}},
        }
    }
    types = ir_of(schema, tmp_path).by_name()
    assert fields(types["A"])["bC"].type == Ref("ABC")
    assert fields(types["AB"])["c"].type == Ref("ABPropertiesC")  # the name of its place


def test_an_alias_cycle_is_an_error(tmp_path):
    error = error_for({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}, tmp_path)
    assert "alias cycle" in str(error)


def test_a_ref_reaches_any_pointer_and_anchor_of_the_document(tmp_path):
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"$ref": "#/$defs/A/properties/x"}}},
            "B": {"$ref": "#here"},
            "C": {"$defs": {"inner": {"$anchor": "here", "type": "string"}}},
        }
    }
    types = ir_of(schema, tmp_path).by_name()
    assert fields(types["A"])["y"].type == Ref("RefDefsAPropertiesX")
    assert types["RefDefsAPropertiesX"].target == Primitive("int")
    assert types["B"].target == Ref("RefDefsCDefsInner")


def test_a_ref_to_another_document_that_is_not_there_names_its_file(tmp_path):
    error = error_for({"$defs": {"A": {"$ref": "other.json#/x"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/$ref"
    assert (
        error.message == f"$ref 'other.json#/x': {tmp_path / 'other.json'}: cannot read it (No such file or directory)"
    )
