"""Hostile names: every `$defs` name, property name and enum value gives a package
that imports and round-trips, or one clear GenerationError."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from generator.errors import GenerationError
from generator.output.write import write_package
from generator.pipeline import generate
from tests.helpers import CACHE, FIXTURES, ROOT, assert_json_identical, generate_package, import_package

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


PACKAGES = (f"hostile_{number}" for number in itertools.count())


@settings(max_examples=12, deadline=None, database=None)
@given(hostile_schemas())
def test_hostile_names_generate_a_working_package_or_one_clear_error(schema):
    package = next(PACKAGES)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "schema.json"
        path.write_text(json.dumps(schema))
        try:
            result = generate(path, package, ROOT, CACHE)
        except GenerationError as error:
            assert error.pointer.startswith("#/$defs/") and len(str(error).splitlines()) == 1
            event("refused")
            return
        event("generated")
        write_package(Path(directory) / package, result.files)
        module = import_package(Path(directory), package)
        try:
            for defs_name, definition in schema["$defs"].items():
                for value in examples(definition, schema["$defs"]):
                    round_trips(module, defs_name, value)
        finally:
            for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
                del sys.modules[name]
