"""The naming rules, one by one."""

from __future__ import annotations

import ast
import builtins
import keyword

import pytest

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
    position_name,
    type_name,
    variant_names,
    words,
)
from tests.helpers import FIXTURES, ROOT, generate_package, import_package


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
    "module", ["models.py", "_codec.py", "_builders.py", "rpc.py", "upserts.py", "connection.py", "__init__.py"]
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
