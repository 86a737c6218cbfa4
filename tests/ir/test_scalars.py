"""Primitives with their bounds, and enums of constants."""

from __future__ import annotations

from generator.ir import scalars
from generator.ir.model import Alias, EnumType, Primitive
from generator.schema.load import Node
from tests.support.helpers import error_for, fields, ir_of


def test_integer_formats_become_bounds_combined_with_minimum(rules):
    assert rules["Port"] == Alias("Port", "#/$defs/Port", None, Primitive("int", 1, 65535, None, "uint16"))
    assert fields(rules["Item"])["count"].type == Primitive("int", 0, 2**32 - 1, None, "uint32")


def test_an_unknown_integer_format_is_an_error(tmp_path):
    error = error_for({"$defs": {"A": {"type": "integer", "format": "uint7"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/format"


def test_string_constants_with_a_final_plain_string_are_an_open_enum(rules):
    color = rules["Color"]
    assert isinstance(color, EnumType) and color.open
    assert [(m.name, m.value, m.doc) for m in color.members] == [
        ("RED", "red", "Red."),
        ("LIGHT_BLUE", "light_blue", None),
    ]
    assert not rules["Size"].open


def test_a_repeated_enum_value_is_one_member(tmp_path):
    (enum,) = ir_of({"$defs": {"E": {"enum": ["a", "b", "a"]}}}, tmp_path).types
    assert [(member.name, member.value) for member in enum.members] == [("A", "a"), ("B", "b")]


def test_enum_values_that_differ_in_a_control_character_get_distinct_members(tmp_path):
    (enum,) = ir_of({"$defs": {"A": {"enum": ["foo\nbar", "foo\rbar"]}}}, tmp_path).types
    assert [member.value for member in enum.members] == ["foo\nbar", "foo\rbar"]
    assert len({member.name for member in enum.members}) == 2


def test_integer_bounds_round_inwards_and_meet_the_format():
    bounded = Node("#", {"type": "integer", "minimum": 1.5, "maximum": 300.5, "format": "uint8"})
    assert scalars.primitive(bounded, "int") == (Primitive("int", 2, 255, None, "uint8"), {"minimum", "maximum"})


def test_a_constant_twice_in_a_one_of_is_no_enum_but_in_an_any_of_is_one_member():
    same = [Node(f"#/{index}", {"const": "a"}) for index in range(2)]
    assert scalars.enum_members_of(Node("#", {}), same, exclusive=True) is None
    members, other = scalars.enum_members_of(Node("#", {}), same)
    assert [(member.name, member.value) for member in members] == [("A", "a")] and other is None


def test_integer_members_are_named_by_their_title():
    codes = [Node("#/0", {"const": -32700, "title": "Parse error"}), Node("#/1", {"const": 7})]
    members, _ = scalars.enum_members_of(Node("#", {}), codes)
    assert [(member.name, member.value) for member in members] == [("PARSE_ERROR", -32700), ("V_7", 7)]
