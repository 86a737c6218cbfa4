"""Hostile names: every `$defs` name, property name and enum value gives a package that
imports and round-trips, unless two of them become one Python name: then one clear
GenerationError naming that collision (docs/guides/json-schema.md, "Names")."""

from __future__ import annotations

import itertools
import json
import keyword
import re
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.model import EnumType, ObjectType
from generator.output.write import write_package
from generator.pipeline import build_ir, generate
from tests.support.helpers import CACHE, FIXTURES, ROOT, assert_json_identical, generate_package, import_package
from tests.support.strategies import schemas_with_nested_inline_types

NAMES = json.loads((FIXTURES / "names.json").read_text())


@pytest.fixture(scope="module")
def pkg(tmp_path_factory):
    out = tmp_path_factory.mktemp("names")
    generate_package(FIXTURES / "names.json", out, "names_pkg")
    return import_package(out, "names_pkg")


def test_hostile_names_pass_mypy_strict(pkg, tmp_path):
    """Attributes and types that shadow nothing: the annotations still mean what they say."""
    package = Path(pkg.__file__).parent
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path), package.name],
        cwd=package.parent,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


def round_trips(pkg, defs_name: str, value: object) -> object:
    """Decode `value` by its `$defs` name; encoding and decoding the JSON text again changes nothing."""
    decoded = pkg.decode(defs_name, value, strict=True)
    assert_json_identical(pkg.encode(decoded), value)
    again = pkg.decode(defs_name, json.loads(json.dumps(pkg.encode(decoded))), strict=True)
    assert again == decoded
    assert_json_identical(pkg.encode(again), value)
    return decoded


def test_a_property_named_field_works(pkg):
    value = round_trips(pkg, "class", {"field": "f", "cls": "c"})
    assert value.field_ == "f"


def test_a_required_property_named_cls_works_in_builders(pkg):
    built = pkg.Class.builder(cls="c").field_("f").self(1).build()
    assert pkg.encode(built) == {"field": "f", "cls": "c", "self": 1}


def test_defs_named_like_keywords_builtins_and_the_api_decode_by_their_defs_name(pkg):
    assert type(round_trips(pkg, "class", {"cls": "c"})) is pkg.Class
    assert type(round_trips(pkg, "str", {"data": "d", "list": ["x"]})) is pkg.Str
    assert round_trips(pkg, "decode", "d") == "d"
    assert round_trips(pkg, "Any", 1) == 1
    assert round_trips(pkg, "Request", True) is True
    assert type(round_trips(pkg, "my-type", {"cls": "c"})) is pkg.Class
    assert callable(pkg.decode) and pkg.Any_ is not pkg.Class and pkg.Request_ is not None


def test_enum_values_that_differ_in_punctuation_or_case_are_distinct_members(pkg):
    values = NAMES["$defs"]["Punctuation"]["enum"]
    members = [round_trips(pkg, "Punctuation", value) for value in values]
    assert len(set(members)) == len(values)


def test_properties_named_like_the_class_api_keep_their_wire_names(pkg):
    value = {
        "builder": "b",
        "to_dict": "t",
        "unknown_properties": "u",
        "classmethod": "c",
        "UNDEFINED": "x",
        "type": "y",
        "": "e",
        "café": "z",
        "extra": 1,
    }
    widget = round_trips(pkg, "Widget", value)
    assert (widget.builder_, widget.unknown_properties_, widget.empty, widget.café) == ("b", "u", "e", "z")
    assert widget.unknown_properties == {"extra": 1}
    assert pkg.Widget.builder(builder_="b", classmethod_="c").to_dict_("t").build().to_dict() == {
        "builder": "b",
        "to_dict": "t",
        "classmethod": "c",
    }


def test_untitled_inline_variants_are_named_by_their_content(pkg):
    assert type(round_trips(pkg, "Shape", {"radius": 1.0})) is pkg.ShapeWithRadius
    assert type(round_trips(pkg, "Shape", {"width": 1.0, "height": 2.0})) is pkg.ShapeWithWidthHeight


def test_made_up_variant_names_step_aside_for_defs_names_and_builders(pkg):
    assert type(round_trips(pkg, "Tool", {"kind": "box"})) is pkg.ToolBoxVariant
    assert type(round_trips(pkg, "ToolBox", {"size": 1})) is pkg.ToolBox
    assert type(round_trips(pkg, "Tool", {"kind": "builder"})) is pkg.ToolBuilderVariant


# --- property test: names from a hostile alphabet ---------------------------

HOSTILE = [
    "class",
    "None",
    "def",
    "match",
    "type",
    "case",
    "_",  # keywords and soft keywords
    "str",
    "list",
    "dict",
    "id",
    "object",
    "Exception",
    "len",  # builtins
    "decode",
    "encode",
    "UNDEFINED",
    "Undefined",
    "builder",
    "build",
    "to_dict",
    "unknown_properties",
    "field",
    "cls",
    "self",
    "dataclass",
    "Any",
    "Enum",
    "_rt",
    "cast",
    "Model",
    "Request",
    "merge",  # the package's names
    "data",
    "ctx",
    "path",
    "v",
    "get",
    "known",
    "result",
    "value",
    "item",
    "error",  # generated locals
    "fooBar",
    "foo_bar",
    "FooBar",
    "FOO_BAR",
    "foo-bar",
    "Foo",
    "foo",
    "FooBuilder",  # snake_case and case
    "café",
    "ﬁle",
    "file",
    "日本",
    "Straße",
    "STRASSE",  # non-ASCII
    "a\nb",
    "a\rb",
    "\t",
    "\x00",
    "",
    "+1",
    "-1",
    "a.b",
    "2fa",  # control characters, empty, punctuation
]
names = st.sampled_from(HOSTILE)


@st.composite
def hostile_schemas(draw) -> dict:
    """1-3 `$defs` (objects, enums, tagged or untagged unions of inline objects), each
    referring only to earlier ones."""
    defs: dict[str, dict] = {}
    for defs_name in draw(st.lists(names, min_size=1, max_size=3, unique=True)):
        kinds = ["string", "integer", "enum", "inline"] + [f"ref:{earlier}" for earlier in defs]
        properties = {
            name: property_schema(draw(st.sampled_from(kinds)), draw)
            for name in draw(st.lists(names, max_size=3, unique=True))
        }
        shape = draw(st.sampled_from(["object", "enum", "union", "tagged"]))
        if shape == "object":
            required = [name for name in properties if draw(st.booleans())]
            defs[defs_name] = {"type": "object", "properties": properties, "required": required}
        elif shape == "enum":
            defs[defs_name] = {"enum": draw(st.lists(names, min_size=1, max_size=4, unique=True))}
        elif shape == "tagged":
            key = draw(names)
            defs[defs_name] = {
                "anyOf": [
                    {"type": "object", "properties": {key: {"type": "string", "const": tag}}, "required": [key]}
                    for tag in draw(st.lists(names, min_size=1, max_size=3, unique=True))
                ]
            }
        else:
            variant_keys = draw(st.lists(st.lists(names, min_size=1, max_size=2, unique=True), min_size=2, max_size=3))
            defs[defs_name] = {
                "anyOf": [
                    {"type": "object", "properties": {key: {"type": "string"} for key in keys}, "required": keys}
                    for keys in variant_keys
                ]
            }
    return {"$defs": defs}


def property_schema(kind: str, draw) -> dict:
    if kind == "enum":
        return {"type": "string", "enum": draw(st.lists(names, min_size=1, max_size=3, unique=True))}
    if kind == "inline":
        return {"type": "object", "properties": {draw(names): {"type": "string"}}}
    if kind.startswith("ref:"):
        return {"$ref": "#/$defs/" + kind[4:].replace("~", "~0").replace("/", "~1")}
    return {"type": kind}


def examples(schema: dict, defs: dict) -> list:
    """Valid values of `schema`: every enum value, every union variant, objects with all properties."""
    if "$ref" in schema:
        return examples(defs[schema["$ref"][len("#/$defs/") :]], defs)
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    if "anyOf" in schema:
        return [value for variant in schema["anyOf"] for value in examples(variant, defs)]
    if schema["type"] == "object":
        choices = {key: examples(child, defs) for key, child in schema["properties"].items()}
        longest = max((len(values) for values in choices.values()), default=1)
        return [{key: values[i % len(values)] for key, values in choices.items()} for i in range(longest)]
    return ["s"] if schema["type"] == "string" else [7]


def test_an_empty_string_tag_still_dispatches(tmp_path):
    schema = {
        "$defs": {
            "U": {
                "anyOf": [{"type": "object", "properties": {"k": {"type": "string", "const": ""}}, "required": ["k"]}]
            }
        }
    }
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    package = import_package(generate_package(tmp_path / "schema.json", tmp_path, "empty_tag").parent, "empty_tag")
    assert_json_identical(package.encode(package.decode("U", {"k": ""}, strict=True)), {"k": ""})


def test_an_empty_string_tag_key_still_dispatches(tmp_path):
    """The property named "" is the tag (hypothesis found it: the union's decoder had no body)."""
    variant = {"type": "object", "properties": {"": {"type": "string", "const": "class"}}, "required": [""]}
    (tmp_path / "schema.json").write_text(json.dumps({"$defs": {"class": {"anyOf": [variant]}}}))
    package = import_package(generate_package(tmp_path / "schema.json", tmp_path, "empty_key").parent, "empty_key")
    assert_json_identical(package.encode(package.decode("class", {"": "class"}, strict=True)), {"": "class"})


# --- which hostile schemas are refused, and why -----------------------------------


@dataclass(frozen=True)
class Collision:
    """Two names the schema gives that become one Python name: docs/guides/json-schema.md, "Names", the one
    reason a hostile name is refused. `message` matches the GenerationError it makes."""

    first: str
    second: str
    message: str


def simplified(name: str) -> str:
    """A name as the naming rules cannot tell it apart: NFKC, case-folded, letters and digits only."""
    return "".join(character for character in unicodedata.normalize("NFKC", name).casefold() if character.isalnum())


def collisions(schema: dict) -> list[Collision]:
    """Every collision in a schema `hostile_schemas` draws, by the rules of naming.py: two
    `$defs` whose types define the same module-level name (`Foo` beside `foo`, an object
    `Foo`'s builder beside a `FooBuilder`), two properties of one object with one attribute
    (`fooBar` beside `foo_bar`), two values of one enum with one member."""
    defs = schema["$defs"]
    found: list[Collision] = []
    owners: dict[str, str] = {}
    for defs_name, definition in defs.items():
        has_builder = bool(definition.get("properties"))  # an object without properties is a dict
        for name in naming.module_names(naming.type_name(defs_name), has_builder=has_builder):
            owner = owners.setdefault(name, defs_name)
            if owner != defs_name:
                found.append(
                    Collision(owner, defs_name, rf"the Python name {re.escape(name)} is also produced by #/\$defs/")
                )
    for definition in defs.values():
        for obj in [definition, *definition.get("anyOf", [])]:
            attributes: dict[str, str] = {}
            for wire_name, child in obj.get("properties", {}).items():
                attribute = naming.attribute_name(wire_name)
                first = attributes.setdefault(attribute, wire_name)
                if first != wire_name:
                    message = rf"properties {re.escape(repr(first))} and {re.escape(repr(wire_name))} both map to {re.escape(attribute)} "
                    found.append(Collision(first, wire_name, message))
                found += member_collisions(child.get("enum", []))
        found += member_collisions(definition.get("enum", []))
    return found


def member_collisions(values: list[str]) -> list[Collision]:
    names = naming.member_names(values)
    return [
        Collision(values[names.index(name)], value, rf"enum values .* both map to the member {re.escape(name)}$")
        for index, (name, value) in enumerate(zip(names, values, strict=True))
        if names.index(name) != index
    ]


def test_collisions_are_the_documented_ones():
    assert collisions({"$defs": {"Foo": {"enum": ["a"]}, "foo": {"enum": ["b"]}}})[0].first == "Foo"
    assert collisions({"$defs": {"Foo": {"type": "object", "properties": {"a": {}}}, "FooBuilder": {"enum": ["a"]}}})
    assert not collisions({"$defs": {"Foo": {"type": "object", "properties": {}}, "FooBuilder": {"enum": ["a"]}}})
    assert not collisions({"$defs": {"Foo": {"enum": ["a"]}, "FooBuilder": {"enum": ["a"]}}})  # no builder
    assert [
        (c.first, c.second) for c in collisions({"$defs": {"T": {"properties": {"fooBar": {}, "foo-bar": {}}}}})
    ] == [("fooBar", "foo-bar")]
    assert not collisions({"$defs": {"T": {"enum": ["a-b", "a_b", "A_B", "Straße", "STRASSE"]}}})


def refusal_or_none(schema: dict, package: str, directory: Path, *, generate_files: bool):
    """What building `schema` gives: (GenerationError, None) or (None, result). The error is
    checked against the collisions the schema holds: it is refused exactly when it has one,
    with that collision's message, in one line, pointing into `$defs`."""
    expected = collisions(schema)
    for collision in expected:  # the rules are those docs/guides/json-schema.md, "Names", documents
        first, second = simplified(collision.first), simplified(collision.second)
        assert first == second or first == second + "builder" or second == first + "builder", collision
    path = directory / "schema.json"
    path.write_text(json.dumps(schema))
    try:
        result = generate(path, package, ROOT, CACHE) if generate_files else build_ir(path, package, ROOT)
    except GenerationError as error:
        assert expected, f"refused without a collision of names: {error}"
        assert any(re.search(collision.message, error.message) for collision in expected), (error, expected)
        assert error.pointer.startswith("#/$defs/") and len(str(error).splitlines()) == 1, error
        event("refused")
        return error, None
    assert not expected, f"generated although {expected}"
    event("generated")
    return None, result


# Schemas each run sees: three refused (types, a builder, attributes), one made of names that all need changing.
REFUSED_EXAMPLES = [
    {"$defs": {"-1": {"enum": ["x"]}, "+1": {"type": "object", "properties": {"a": {"type": "string"}}}}},
    {"$defs": {"foo": {"type": "object", "properties": {"a": {"type": "string"}}}, "FooBuilder": {"enum": ["x"]}}},
    {"$defs": {"T": {"type": "object", "properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}}}}},
]
SAFE_EXAMPLE = {
    "$defs": {
        "class": {
            "type": "object",
            "properties": {"self": {"type": "string"}, "": {"type": "integer"}},
            "required": [],
        },
        "None": {"enum": ["", "_", "a\nb", "a.b", "Foo", "foo"]},
        "日本": {
            "anyOf": [
                {"type": "object", "properties": {"type": {"type": "string", "const": "+1"}}, "required": ["type"]}
            ]
        },
    }
}


@settings(max_examples=400, deadline=None, database=None)
@given(hostile_schemas())
@example(REFUSED_EXAMPLES[0])
@example(REFUSED_EXAMPLES[1])
@example(REFUSED_EXAMPLES[2])
@example(SAFE_EXAMPLE)
def test_hostile_names_are_refused_only_for_a_collision_and_otherwise_become_safe_names(schema):
    """On the IR: every name that can be made safe is, and every refusal is a documented collision."""
    with tempfile.TemporaryDirectory() as directory:
        error, module = refusal_or_none(schema, "hostile_ir", Path(directory), generate_files=False)
    if error:
        return
    types = module.by_name()
    for defs_name, definition in schema["$defs"].items():
        named = types[naming.type_name(defs_name)]
        assert named.name.isidentifier() and named.name not in naming.RESERVED_TYPE_NAMES
        if isinstance(named, ObjectType):
            assert [item.wire_name for item in named.fields] == list(definition["properties"])
        if isinstance(named, EnumType):
            assert [member.value for member in named.members] == definition["enum"]
    for named in module.types:
        assert named.name.isidentifier() and not keyword.iskeyword(named.name), named.name
        if isinstance(named, ObjectType):
            attributes = [item.name for item in named.fields]
            assert len(set(attributes)) == len(attributes), attributes
            assert all(name.isidentifier() and name not in naming.RESERVED_ATTRIBUTES for name in attributes)
        if isinstance(named, EnumType):
            members = [member.name for member in named.members]
            assert len(set(members)) == len(members), members
            assert all(name.isidentifier() and name not in naming.RESERVED_MEMBERS for name in members)


PACKAGES = (f"hostile_{number}" for number in itertools.count())


@settings(max_examples=30, deadline=None, database=None)
@given(hostile_schemas().filter(lambda schema: not collisions(schema)))
@example(SAFE_EXAMPLE)
def test_hostile_names_without_a_collision_generate_a_working_package(schema):
    """Every schema without a collision generates a package that imports, whose types and
    attributes carry the names naming.py gives, and whose values round-trip."""
    package = next(PACKAGES)
    with tempfile.TemporaryDirectory() as directory:
        _, result = refusal_or_none(schema, package, Path(directory), generate_files=True)
        write_package(Path(directory) / package, result.files)
        module = import_package(Path(directory), package)
        try:
            for defs_name, definition in schema["$defs"].items():
                python_type = getattr(module, naming.type_name(defs_name))
                for value in examples(definition, schema["$defs"]):
                    decoded = round_trips(module, defs_name, value)
                    if definition.get("properties"):  # an object without properties is a dict
                        assert type(decoded) is python_type
                        for wire_name, item in value.items():
                            assert_json_identical(
                                module.encode(getattr(decoded, naming.attribute_name(wire_name))), item
                            )
                    if "enum" in definition:
                        assert decoded is getattr(
                            python_type, naming.member_names(definition["enum"])[definition["enum"].index(value)]
                        )
        finally:
            for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
                del sys.modules[name]


@settings(max_examples=10, deadline=None, database=None)
@given(schemas_with_nested_inline_types())
def test_nested_inline_types_in_sibling_branches_generate_a_package_that_imports(schema):
    """tests/ir/test_naming.py builds the IR of many such schemas; a few become packages that
    import and export every name."""
    package = next(PACKAGES)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "schema.json"
        path.write_text(json.dumps(schema))
        result = generate(path, package, ROOT, CACHE)
        write_package(Path(directory) / package, result.files)
        try:
            module = import_package(Path(directory), package)
            assert {named.name for named in result.module.types} <= set(module.models.__all__)
        finally:
            for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
                del sys.modules[name]
