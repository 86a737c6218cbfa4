"""What the templates print for each kind of type expression, and that they never ask for the kind."""

from __future__ import annotations

import re

from generator.emit.exprs import describe, helper_name
from generator.emit.pytypes import Queries
from generator.emit.render import TEMPLATES
from generator.emit.views import Call, Container, Conversion, Decoding, Encoding, IfInvalid, MemberRef
from generator.ir import model
from generator.ir.assertions import Checks
from generator.ir.model import (
    Alias,
    AnyValue,
    Checked,
    EnumMember,
    EnumType,
    Field,
    JsonObject,
    ListOf,
    MapOf,
    Module,
    Nullable,
    ObjectType,
    Primitive,
    Ref,
    TupleOf,
)

STR, INT = Primitive("str"), Primitive("int")
MODE = EnumType("Mode", "#/$defs/Mode", None, (EnumMember("FAST", "fast", None),), other=STR)
LEVEL = EnumType("Level", "#/$defs/Level", None, (EnumMember("ONE", 1, None),), other=None)
TYPES = (
    MODE,
    LEVEL,
    ObjectType("Point", "#/$defs/Point", None, ()),
    Alias("Path", "#/$defs/Path", None, STR),
    Alias("Count", "#/$defs/Count", None, Primitive("int", minimum=0)),
    Alias("Names", "#/$defs/Names", None, ListOf(STR)),
    Alias("MaybeMode", "#/$defs/MaybeMode", None, Nullable(Ref("Mode"))),
)
QUERIES = Queries(Module("pkg", "schema.json", "0" * 64, TYPES, (), path_types=("Path",)))


def field(expr: model.TypeExpr, required: bool = True, nullable: bool = False) -> Field:
    return Field("x", "x", expr, required, nullable, None)


def test_annotations_show_open_enums_with_their_plain_values():
    assert QUERIES.annotation(Ref("Mode")) == "Mode | str"
    assert QUERIES.annotation(Ref("Level")) == "Level"
    assert QUERIES.annotation(MapOf(ListOf(Nullable(INT)))) == "dict[str, list[int | None]]"
    assert QUERIES.annotation(Checked(JsonObject(), Checks(min_properties=1))) == "dict[str, Any]"


def test_field_annotations_say_presence_and_nullability():
    assert QUERIES.field(field(STR)).annotation == "str"
    assert QUERIES.field(field(STR, nullable=True)).annotation == "str | None"
    assert QUERIES.field(field(STR, required=False)).annotation == "str | Undefined"
    assert QUERIES.field(field(Primitive("none"), required=False)).annotation == "Undefined | None"
    assert QUERIES.field(field(STR, required=False, nullable=True)).annotation == "MaybeUndefined[str]"


def test_init_takes_the_plain_values_of_a_closed_enum_and_turns_them_into_members():
    closed = QUERIES.field(field(Ref("Level"), required=False, nullable=True))
    assert (closed.init_annotation, closed.init_enum) == ("MaybeUndefined[Level | Literal[1]]", "Level")
    assert closed.annotation == "MaybeUndefined[Level]"
    opened = QUERIES.field(field(Ref("Mode")))
    assert (opened.init_annotation, opened.init_enum) == ("Mode | str", None)


def test_a_required_field_whose_type_one_if_tests_finds_a_missing_value_with_it():
    assert QUERIES.field(field(STR)).required_check == IfInvalid("string", "str")
    assert QUERIES.field(field(Ref("Path"))).required_check == IfInvalid("string", "str")
    assert QUERIES.field(field(STR, required=False)).required_check is None
    assert QUERIES.field(field(STR, nullable=True)).required_check is None  # null is a value
    assert QUERIES.field(field(INT)).required_check is None  # `2.0` converts: the check calls
    assert QUERIES.field(field(Primitive("none"))).required_check is None  # UNDEFINED is not None
    lenient = Field("x", "x", STR, True, False, None, default_on_error=True)
    assert QUERIES.field(lenient).required_check is None  # a missing value becomes the default


def test_setters_accept_the_obvious_conversions():
    assert QUERIES.input_annotation(Ref("Path")) == "str | os.PathLike[str]"
    assert QUERIES.input_annotation(Ref("Level")) == "Level | int"
    assert QUERIES.input_annotation(ListOf(Ref("Count"))) == "Iterable[int]"
    assert QUERIES.input_annotation(MapOf(Ref("Names"))) == "Mapping[str, Iterable[str]]"
    assert QUERIES.field(field(Ref("Path"), required=False, nullable=True)).setter_annotation == (
        "str | os.PathLike[str] | Undefined | None"
    )


def test_builders_store_what_needs_no_conversion_as_given():
    assert QUERIES.conversion(Ref("Point")) is None
    assert QUERIES.conversion(Ref("Count")) is None
    assert QUERIES.conversion(ListOf(STR)) == Conversion("list")
    assert QUERIES.conversion(JsonObject()) == Conversion("dict")
    assert QUERIES.conversion(Nullable(ListOf(Ref("Path")))) == Conversion(
        inner=Conversion(items=Conversion("os.fspath"))
    )
    assert QUERIES.conversion(MapOf(Ref("Names"))) == Conversion(values=Conversion("list"))


def test_decodings_inline_aliases_and_check_primitives_with_one_if():
    assert QUERIES.decoding(Ref("Count")) == Decoding(
        if_invalid=IfInvalid(json_type="int", minimum=0, call=Call("_rt.decode_int", (0, None)))
    )
    assert QUERIES.decoding(Ref("Names")) == Decoding(call=Call("_decode_list_of_str"))
    # a string enum: its member lookup in place, the decoder for anything else
    assert QUERIES.decoding(Ref("MaybeMode")) == Decoding(
        inner=Decoding(call=Call("_decode_Mode", members="_MEMBERS_Mode"))
    )
    assert QUERIES.decoding(Primitive("float", maximum=1)) == Decoding(call=Call("_rt.decode_number", (None, 1)))
    short = Primitive("str", min_length=2)
    assert QUERIES.decoding(short).if_invalid == IfInvalid("string at least 2 characters", "str", min_length=2)
    assert QUERIES.decoding(AnyValue()).single_if
    assert not QUERIES.decoding(JsonObject()).single_if  # `elif ctx.strict` follows: no guard can join it


def test_encodings_take_the_fast_path_for_values_of_the_declared_type():
    assert QUERIES.encoding(Ref("Level")) == Encoding(exact_type="Level", member_value=True)
    assert QUERIES.encoding(Ref("Point")) == Encoding("_encode_Point")
    assert QUERIES.encoding(Ref("Names")) == Encoding(items=Encoding(exact_type="str"))
    assert QUERIES.encoding(Nullable(AnyValue())) == Encoding(inner=Encoding("_rt.encode_value"))


def test_a_nullable_field_encodes_none_as_none():
    assert QUERIES.field(field(STR)).encoding == Encoding(exact_type="str")
    assert QUERIES.field(field(STR, nullable=True)).encoding == Encoding(inner=Encoding(exact_type="str"))


def test_containers_and_messages_are_named_from_their_content():
    assert helper_name(ListOf(Primitive("int", minimum=-1, maximum=9), min_items=1)) == "list_of_int_m1_9_min1"
    assert describe(Nullable(MapOf(STR))) == "object or null"
    container = QUERIES.container(ListOf(Ref("Point"), skip_invalid_items=True))
    assert (container.function, container.annotation, container.array) == (
        "_decode_list_of_Point_skip_invalid",
        "list[Point]",
        True,
    )
    assert QUERIES.container(Nullable(ListOf(STR))) is None  # the list inside has the decoder


def test_tuples_print_each_element():
    pair = TupleOf((Ref("Level"), ListOf(Ref("Path"))))
    assert QUERIES.annotation(pair) == "tuple[Level, list[Path]]"
    # Stored as given, so that `build()` sees every item: only what needs no conversion is accepted.
    assert QUERIES.input_annotation(pair) == "tuple[Level | int, list[Path]]"
    assert QUERIES.conversion(pair) is None
    assert QUERIES.decoding(pair) == Decoding(call=Call("_decode_tuple2_of_Level_and_list_of_Path"))
    assert QUERIES.encoding(pair) == Encoding("_rt.encode_value")  # all items, whatever the length
    assert QUERIES.container(pair) == Container(
        "_decode_tuple2_of_Level_and_list_of_Path",
        "tuple[Level, list[Path]]",
        elements=(Decoding(call=Call("_decode_Level")), Decoding(call=Call("_decode_list_of_Path"))),
        expected="array of 2 items",
    )


def test_enum_members_are_found_through_aliases():
    assert QUERIES.enum_member(Ref("MaybeMode"), "fast") is None  # nullable: not an enum itself
    assert QUERIES.enum_member(Ref("Mode"), "fast") == MemberRef("Mode", "FAST")
    assert QUERIES.enum_member(Ref("Level"), 2) is None
    assert QUERIES.is_named(Ref("Mode")) and not QUERIES.is_named(Ref("Names"))


def test_templates_never_dispatch_on_ir_kinds():
    kinds = "|".join(cls.__name__ for cls in (*model.TypeExpr.__args__, *model.NamedType.__args__))
    dispatch = re.compile(rf"\bkind\(|[\"']({kinds})[\"']")
    for template in TEMPLATES.rglob("*.jinja"):
        assert not dispatch.search(template.read_text()), template.name
