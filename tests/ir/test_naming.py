"""The naming rules, one by one; and names made up for inline types, which never meet."""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings

from generator.ir.naming import (
    CONNECTION_NAMES,
    PACKAGE_NAMES,
    RPC_NAMES,
    attribute_name,
    class_name,
    error_constructor_name,
    member_name,
    member_names,
    merge_function_name,
    method_name,
    module_names,
    part_name,
    pointer_name,
    position_name,
    type_name,
    variant_names,
    words,
)
from tests.support.helpers import FIXTURES, ROOT, error_for, fields, generate_package, import_package, ir_of
from tests.support.strategies import schemas_with_nested_inline_types


def test_attribute_names_are_snake_case_of_the_wire_name():
    assert attribute_name("toolCallId") == "tool_call_id"
    assert attribute_name("mcpServers") == "mcp_servers"
    assert attribute_name("HTTPHeader") == "http_header"


def test_meta_loses_its_underscore():
    assert attribute_name("_meta") == "meta"


def test_keywords_get_a_trailing_underscore_but_soft_keywords_do_not():
    assert attribute_name("class") == "class_"
    assert attribute_name("from") == "from_"
    assert attribute_name("type") == "type"
    assert attribute_name("match") == "match"


def test_attributes_never_hide_the_class_api_or_what_class_bodies_and_builders_use():
    for wire_name in ("builder", "build", "to_dict", "from_json", "unknown_properties", "field", "classmethod", "list"):
        assert attribute_name(wire_name) == wire_name + "_"
    assert attribute_name("UNDEFINED") == "undefined"  # snake_case: never a module constant
    assert attribute_name("cls") == "cls"  # builder() names its own parameter `_cls`


def test_names_never_start_with_a_digit():
    assert attribute_name("2fa") == "f_2fa"
    assert class_name("2fa") == "T2fa"


def test_text_without_letters_or_digits_is_spelled():
    assert words("") == ["empty"]
    assert attribute_name("+") == "plus_sign"
    assert attribute_name("\n") == "u_000a"
    assert class_name("Mode", "-") == "ModeHyphenMinus"


def test_letters_of_any_script_are_kept_normalised_as_python_reads_them():
    assert attribute_name("café") == "café"
    assert attribute_name("ﬁle") == "file"  # NFKC: Python would bind `file` anyway
    assert type_name("Ｍｏｄｅ") == "Mode"  # noqa: RUF001 (fullwidth letters on purpose)


def test_class_names_join_parts_in_pascal_case():
    assert class_name("SessionUpdate", "tool_call_update") == "SessionUpdateToolCallUpdate"
    assert class_name("DiffChange", "operation") == "DiffChangeOperation"


def test_class_names_say_once_the_words_where_two_parts_meet():
    assert class_name("ToolCallContent", "content") == "ToolCallContent"
    assert class_name("AvailableCommand", "command", "variant") == "AvailableCommandVariant"
    assert class_name("FooBar", "bar_baz") == "FooBarBaz"  # the longest repeat: `bar`
    assert class_name("ToolCall", "tool_call_update") == "ToolCallUpdate"
    assert class_name("SessionUpdate", "update_tool") == "SessionUpdateTool"
    assert class_name("Result", "RESULT") == "Result"  # case aside
    assert class_name("ToolCallUpdate", "call") == "ToolCallUpdateCall"  # only where the parts meet


def test_a_part_that_only_repeats_its_owner_is_named_by_what_it_is():
    assert part_name("AgentResponseResult", "result", "value") == "AgentResponseResultValue"
    assert part_name("ToolCallContent", "content", "variant") == "ToolCallContentVariant"
    assert part_name("ToolCallContent", "diff", "variant") == "ToolCallContentDiff"
    assert part_name("ToolCall", "tool_call_id", "value") == "ToolCallId"


def test_defs_names_are_kept_when_they_are_capitalised_identifiers():
    assert type_name("ToolCallUpdate") == "ToolCallUpdate"
    assert type_name("HTTP_Header") == "HTTP_Header"


def test_other_defs_names_become_pascal_case():
    assert type_name("decode") == "Decode"
    assert type_name("str") == "Str"
    assert type_name("class") == "Class"
    assert type_name("my-type") == "MyType"
    assert type_name("_Private") == "Private"
    assert type_name("") == "Empty"


def test_defs_names_the_package_already_uses_get_a_trailing_underscore():
    for name in ("Any", "None", "Exception", "Model", "UNDEFINED", "DecodeError", "Request", "Methods"):
        assert type_name(name) == name + "_"


def test_type_names_never_shadow_keywords_builtins_or_package_names():
    for name in [*keyword.kwlist, *keyword.softkwlist, "dict", "type", "cast", "field", *PACKAGE_NAMES, *RPC_NAMES]:
        python = type_name(name)
        assert python.isidentifier() and not keyword.iskeyword(python)
        assert python not in {*dir(builtins), *PACKAGE_NAMES, *RPC_NAMES}


def test_enum_members_are_upper_snake_case():
    assert member_name("switch_mode") == "SWITCH_MODE"
    assert member_name("text/plain") == "TEXT_PLAIN"
    assert member_name("2.0") == "V_2_0"
    assert member_name("") == "EMPTY"


def test_method_names_join_the_words_of_the_json_rpc_method():
    assert method_name("session/prompt") == "session_prompt"
    assert method_name("session/set_config_option") == "session_set_config_option"
    assert method_name("session/setMode") == "session_set_mode"
    assert method_name("$/cancel_request") == "cancel_request"
    assert method_name("initialize") == "initialize"
    assert method_name("import/from") == "import_from"
    assert method_name("global") == "global_"
    assert method_name("2fa/check") == "m_2fa_check"


def test_error_constructors_are_the_lowercased_member():
    assert error_constructor_name("INVALID_PARAMS") == "invalid_params"
    assert error_constructor_name("IMPORT") == "import_"


def test_enum_values_whose_members_coincide_are_spelled_exactly():
    assert member_names(["a-b", "a_b", "c"]) == ["a_HYPHEN_MINUS_b", "a_LOW_LINE_b", "C"]
    assert member_names(["+1", "-1"]) == ["PLUS_SIGN_1", "HYPHEN_MINUS_1"]
    assert member_names(["GET", "get"]) == ["GET", "get"]
    assert member_names(["foo\nbar", "foo\rbar"]) == ["foo_U_000A_bar", "foo_U_000D_bar"]


def test_exact_member_names_avoid_what_enum_str_and_int_define():
    assert member_names(["MRO", "mro", "Name", "name"]) == ["MRO", "mro_", "Name", "name_"]


def test_equal_values_keep_equal_member_names():
    assert member_names(["a", "a"]) == ["a", "a"]


def candidates(**given):
    """The candidates of one variant for `variant_names`, by rank (None where not given)."""
    return [given.get(rank) for rank in ("title", "const", "required", "keys", "json_type")] + [("variant",)]


def positions(count):
    return [("anyOf", str(index)) for index in range(count)]


def test_untagged_variants_are_named_by_what_sets_them_apart():
    assert variant_names("Shape", [candidates(title=("Circle",)), candidates(title=("Square",))], positions(2)) == [
        "ShapeCircle",
        "ShapeSquare",
    ]
    assert variant_names(
        "Shape",
        [candidates(required=("with", "radius")), candidates(required=("with", "width", "height"))],
        positions(2),
    ) == ["ShapeWithRadius", "ShapeWithWidthHeight"]
    # A shared title is no name: the next rank decides.
    assert variant_names(
        "Shape",
        [candidates(title=("Box",), json_type=("object",)), candidates(title=("Box",), json_type=("string",))],
        positions(2),
    ) == ["ShapeObject", "ShapeString"]


def test_variants_that_nothing_sets_apart_are_named_by_their_position():
    same = [candidates(keys=("with", "a")), candidates(keys=("with", "a"))]
    assert variant_names("U", same, positions(2)) == ["UAnyOf0", "UAnyOf1"]
    assert variant_names("U", [candidates(), candidates()], [("oneOf", "0"), ("oneOf", "1")]) == ["UOneOf0", "UOneOf1"]


def test_a_variant_with_only_shared_candidates_keeps_its_first_unless_a_sibling_has_that_name():
    # The second shares every candidate, but no sibling is named UWithA.
    alone = [candidates(title=("Box",), keys=("with", "a")), candidates(keys=("with", "a"))]
    assert variant_names("U", alone, positions(2)) == ["UBox", "UWithA"]
    # The first earned UWithA (no sibling requires `a`); the second only shares it.
    earned = [candidates(required=("with", "a"), keys=("with", "a")), candidates(keys=("with", "a"))]
    assert variant_names("U", earned, positions(2)) == ["UWithA", "UAnyOf1"]


def test_variants_whose_distinct_candidates_still_meet_are_named_by_their_position():
    # A title "WithA" and the required key `a` are different candidates with one name.
    assert variant_names("U", [candidates(title=("WithA",)), candidates(required=("with", "a"))], positions(2)) == [
        "UAnyOf0",
        "UAnyOf1",
    ]


def test_a_variant_never_takes_the_position_name_of_a_sibling():
    assert variant_names("U", [candidates(title=("AnyOf1",)), candidates(title=("B",))], positions(2)) == [
        "UAnyOf0",
        "UB",
    ]


def test_position_names_are_the_defs_name_then_the_pointer_below_it():
    assert position_name("A", ["anyOf", "1", "prefixItems", "0"]) == "AAnyOf1PrefixItems0"
    assert position_name("AB", ["properties", "c"]) == "ABPropertiesC"
    assert position_name(None, ["properties", "x"]) == "RootPropertiesX"


def test_position_names_say_every_token_so_that_two_places_never_share_one():
    assert position_name("A", ["items", "items"]) != position_name("A", ["items"])
    assert position_name("Items", ["items"]) == "ItemsItems"
    assert pointer_name("Valid", ["$defs", "Case", "then", "then"]) == "ValidDefsCaseThenThen"


@pytest.mark.parametrize("schema", ["v2/schema.unstable.json", "v1/schema.json", "v1/schema.unstable.json"])
def test_no_made_up_name_of_the_official_schemas_repeats_a_word(schema, tmp_path):
    """Issue 31: `ToolCallContentContent`, `AvailableCommandCommand`, `AgentResponseResultResult`.
    (`EmbeddedResourceResource` is the schema's own `$defs` name, kept as given.)"""
    module = ir_of(ROOT / "schema" / schema, tmp_path)
    names = [named.name for named in module.types]
    assert len(names) == len(set(names))
    given = {python for _, python in module.public_names}
    repeating = []
    for name in set(names) - given:
        parts = [word.casefold() for word in words(name)]
        if any(parts[i - k : i] == parts[i : i + k] for k in range(1, 4) for i in range(k, len(parts) - k + 1)):
            repeating.append(name)
    assert repeating == []
    assert {"ToolCallContentVariant", "AgentResponseResultValue", "ClientResponseResultValue"} <= set(names)


def test_merge_functions_are_named_after_their_type():
    assert merge_function_name("ToolCallUpdate") == "merge_tool_call_update"


@pytest.fixture(scope="module")
def names_package(tmp_path_factory):
    return generate_package(FIXTURES / "names.json", tmp_path_factory.mktemp("names"), "names_pkg")


def top_level_names(source: str) -> set[str]:
    bound = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)
    return bound


@pytest.mark.parametrize(
    "module",
    ["models.py", "_codec.py", "_builders.py", "rpc.py", "_routes.py", "upserts.py", "connection.py", "__init__.py"],
)
def test_package_names_lists_every_other_public_name_the_generated_modules_bind(module, names_package):
    """Types must not take these names: the list must be complete (a new import in a template goes there)."""
    for package in (ROOT / "generated" / "acp_v2", names_package):
        if not (package / module).exists():
            continue
        bound = {name for name in top_level_names((package / module).read_text()) if not name.startswith("_")}
        types = set(import_package(package.parent, package.name).models.__all__)
        derived = {name for python in types for name in module_names(python, has_builder=True)}
        merge_functions = {name for name in bound if name.startswith("merge_")}
        assert bound - derived - merge_functions - set(RPC_NAMES) - set(CONNECTION_NAMES) <= PACKAGE_NAMES


def test_module_names_lists_every_name_a_type_defines(names_package):
    modules = ("models.py", "_codec.py", "_builders.py")
    bound = {name for module in modules for name in top_level_names((names_package / module).read_text())}
    types = import_package(names_package.parent, names_package.name).models.__all__
    internal = {"__all__", "_DECODERS", "_DECODERS_BY_TYPE", "_M", "_rt"}
    private = {name for name in bound if name.startswith("_")} - internal
    containers = {name for name in private if name.startswith(("_decode_list_of_", "_decode_map_of_"))}
    assert private - containers <= {name for python in types for name in module_names(python, has_builder=True)}


# --- names the generator makes up never meet ---------------------------------

STRING = {"type": "string"}


def obj(**properties):
    return {"type": "object", "properties": properties}


def made_up(schema, tmp_path):
    """The names the generator made up for `schema`, each with the pointer of its place."""
    module = ir_of(schema, tmp_path)
    given = {python for _, python in module.public_names}
    return {named.name: named.pointer for named in module.types if named.name not in given}


def test_prefix_items_of_sibling_variants_are_named_after_their_variant(tmp_path):
    """Issue 19: both items were `AArrayItem0` (the second numbered, or refused with "rename one of them")."""
    schema = {
        "$defs": {
            "A": {
                "anyOf": [
                    {"type": "array", "prefixItems": [obj(x=STRING)]},
                    {"type": "array", "prefixItems": [obj(y={"type": "integer"})]},
                ]
            }
        }
    }
    assert made_up(schema, tmp_path) == {
        "AAnyOf0Item0": "#/$defs/A/anyOf/0/prefixItems/0",
        "AAnyOf1Item0": "#/$defs/A/anyOf/1/prefixItems/0",
    }
    types = ir_of(schema, tmp_path).by_name()
    assert list(fields(types["AAnyOf0Item0"])) == ["x"] and list(fields(types["AAnyOf1Item0"])) == ["y"]


def test_checked_prefix_items_of_sibling_one_of_variants_are_named_after_their_variant(tmp_path):
    schema = {
        "$defs": {"A": {"oneOf": [{"prefixItems": [True, {"minimum": 1}]}, {"prefixItems": [True, {"maximum": 0}]}]}}
    }
    assert made_up(schema, tmp_path) == {
        "AOneOf0Item0": "#/$defs/A/oneOf/0/prefixItems/0",
        "AOneOf0Item1": "#/$defs/A/oneOf/0/prefixItems/1",
        "AOneOf1Item0": "#/$defs/A/oneOf/1/prefixItems/0",
        "AOneOf1Item1": "#/$defs/A/oneOf/1/prefixItems/1",
    }


def test_items_of_lists_in_sibling_variants_are_named_after_their_variant(tmp_path):
    schema = {
        "$defs": {
            "L": {"anyOf": [{"type": "array", "items": obj(x=STRING)}, {"type": "array", "items": obj(y=STRING)}]}
        }
    }
    assert made_up(schema, tmp_path) == {
        "LAnyOf0Item": "#/$defs/L/anyOf/0/items",
        "LAnyOf1Item": "#/$defs/L/anyOf/1/items",
    }


def test_properties_of_sibling_variants_are_named_after_their_variant(tmp_path):
    schema = {"$defs": {"U": {"anyOf": [obj(p=obj(x=STRING)), obj(p=obj(y=STRING))]}}}
    assert made_up(schema, tmp_path) == {
        "UAnyOf0": "#/$defs/U/anyOf/0",
        "UAnyOf0P": "#/$defs/U/anyOf/0/properties/p",
        "UAnyOf1": "#/$defs/U/anyOf/1",
        "UAnyOf1P": "#/$defs/U/anyOf/1/properties/p",
    }


def test_a_variant_named_by_what_sets_it_apart_keeps_its_name_beside_one_that_shares_it(tmp_path):
    required = {**obj(p=obj(y=STRING)), "required": ["p"]}
    schema = {"$defs": {"U": {"oneOf": [obj(p=obj(x=STRING)), required]}}}
    assert made_up(schema, tmp_path) == {
        "UOneOf0": "#/$defs/U/oneOf/0",
        "UOneOf0P": "#/$defs/U/oneOf/0/properties/p",
        "UWithP": "#/$defs/U/oneOf/1",
        "UWithPValue": "#/$defs/U/oneOf/1/properties/p",
    }


def test_additional_properties_of_sibling_variants_are_named_after_their_variant(tmp_path):
    maps = [
        {"type": "object", "additionalProperties": obj(x=STRING)},
        {"type": "object", "additionalProperties": obj(y=STRING)},
    ]
    assert made_up({"$defs": {"M": {"anyOf": maps}}}, tmp_path) == {
        "MAnyOf0Value": "#/$defs/M/anyOf/0/additionalProperties",
        "MAnyOf1Value": "#/$defs/M/anyOf/1/additionalProperties",
    }


def test_combinators_nested_three_deep_name_every_level(tmp_path):
    inner = {"oneOf": [obj(a=STRING), obj(b=STRING)]}
    schema = {"$defs": {"N": {"anyOf": [{"anyOf": [inner, inner]}, {"anyOf": [inner, inner]}]}}}
    assert sorted(made_up(schema, tmp_path)) == [
        "NAnyOf0",
        "NAnyOf0AnyOf0",
        "NAnyOf0AnyOf0WithA",
        "NAnyOf0AnyOf0WithB",
        "NAnyOf0AnyOf1",
        "NAnyOf0AnyOf1WithA",
        "NAnyOf0AnyOf1WithB",
        "NAnyOf1",
        "NAnyOf1AnyOf0",
        "NAnyOf1AnyOf0WithA",
        "NAnyOf1AnyOf0WithB",
        "NAnyOf1AnyOf1",
        "NAnyOf1AnyOf1WithA",
        "NAnyOf1AnyOf1WithB",
    ]


def test_a_made_up_name_that_another_took_becomes_the_name_of_its_place(tmp_path):
    # The items of the list `a` and the property `aItem` are both XAItem by their content.
    schema = {"$defs": {"X": obj(a={"type": "array", "items": obj(x=STRING)}, aItem=obj(y=STRING))}}
    assert made_up(schema, tmp_path) == {
        "XAItem": "#/$defs/X/properties/a/items",
        "XPropertiesAItem": "#/$defs/X/properties/aItem",
    }
    # A `$defs` name comes first, whichever comes first in the schema.
    for defs in ({"AB": STRING, "A": obj(b=obj(a=STRING))}, {"A": obj(b=obj(a=STRING)), "AB": STRING}):
        assert made_up({"$defs": defs}, tmp_path) == {"APropertiesB": "#/$defs/A/properties/b"}


def test_names_the_schema_gives_that_meet_are_an_error_that_asks_to_rename_one(tmp_path):
    error = error_for({"$defs": {"Foo": STRING, "foo": STRING}}, tmp_path)
    assert error.pointer == "#/$defs/foo"
    assert error.message == "the Python name Foo is also produced by #/$defs/Foo; rename one of them"


def test_a_defs_name_that_takes_even_the_name_of_a_place_is_the_one_to_rename(tmp_path):
    schema = {"$defs": {"A": {"anyOf": [obj(x=STRING), obj(x=STRING)]}, "AAnyOf0": STRING}}
    error = error_for(schema, tmp_path)
    assert error.pointer == "#/$defs/A/anyOf/0"
    assert error.message == (
        "every Python name made up for this schema is taken (AAnyOf0 by #/$defs/AAnyOf0); "
        "rename what takes AAnyOf0, the name of its place in the schema"
    )


@settings(max_examples=100, deadline=None, database=None)
@given(schemas_with_nested_inline_types())
def test_nested_inline_types_in_sibling_branches_always_get_names(schema):
    """Every such schema builds, and every name starts with the name of its `$defs` entry
    and carries no number but a position (`AnyOf1`, `OneOf0`, `Item0`, and `PrefixItems1` in a
    name made of the pointer's tokens when the readable ones are taken: under 10 here)."""
    with tempfile.TemporaryDirectory() as directory:
        module = ir_of(schema, Path(directory))
    for named in module.types:
        assert named.name.startswith(named.pointer.split("/")[2])
        assert not re.search(r"\d", re.sub(r"(AnyOf|OneOf|PrefixItems|Item)\d", "", named.name)), named.name
