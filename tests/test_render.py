"""Rendering: schema text can never break out of a literal or a docstring."""

from __future__ import annotations

import ast
import json

import pytest

from generator.errors import GenerationError
from generator.ir import Method, Module, ObjectType
from generator.render import Queries, docstring, names_in_code, natural_sorted, peer, python_literal, string_block
from tests.helpers import FIXTURES, generate_package, import_package

HOSTILE = json.loads((FIXTURES / "hostile.json").read_text())


def test_string_literals_round_trip_through_the_python_parser():
    for text in ['a"b', "it's", "both ' and \"", "back\\slash", "nul\0", "{{ x }}", "café\u2028"]:
        assert ast.literal_eval(python_literal(text)) == text


def test_string_blocks_evaluate_to_the_text():
    for text in ['ends with a quote"', 'triple """ inside', "trailing backslash \\", "tab\tand\nnewline\0"]:
        assert ast.literal_eval(string_block(text)) == text


def test_docstrings_evaluate_to_the_text_laid_out_as_black_does():
    for text in ['ends with a quote"', 'triple """ inside', "trailing backslash \\", "nul\0 and \u2028 in the middle"]:
        assert ast.literal_eval(docstring(text, 4)).strip() == text
    assert ast.literal_eval(docstring("first\n  second\n  third", 4)) == "first\n    second\n    third"


def test_a_module_imports_the_names_its_code_uses_but_not_those_in_strings_or_comments():
    units = [
        'def f(x: Foo) -> Bar:\n    """Baz, Qux."""\n    return cast(Bar, x)  # Quux\n',
        'TABLE = {"Baz": Corge}\n',
    ]
    candidates = ["Foo", "Bar", "Baz", "Qux", "Quux", "Corge", "Unused"]
    assert names_in_code(units, candidates) == ["Bar", "Corge", "Foo"]


def test_slots_are_sorted_as_ruff_sorts_them():
    assert natural_sorted(["f_10", "f_2", "b", "a_b", "aB", "unknown_properties"]) == [
        "aB",
        "a_b",
        "b",
        "f_2",
        "f_10",
        "unknown_properties",
    ]


def test_hostile_schema_text_stays_data(tmp_path):
    package = import_package(generate_package(FIXTURES / "hostile.json", tmp_path, "hostile_pkg").parent, "hostile_pkg")
    evil = HOSTILE["$defs"]["Evil"]
    assert package.Evil.__doc__.strip() == evil["description"]
    assert {m.value for m in package.Mode} == {v["const"] for v in HOSTILE["$defs"]["Mode"]["anyOf"]}
    value = package.decode("Evil", {"weird key\"'": "x", "def": '"""\\'})
    assert package.encode(value) == {"weird key\"'": "x", "def": '"""\\'}
    assert not hasattr(package, "os")


def _with_methods(*methods: Method) -> Module:
    types = tuple(ObjectType(name, f"#/$defs/{name}", None, ()) for name in sorted({m.params for m in methods} | {"R"}))
    return Module("pkg", "schema.json", "0" * 64, types, tuple(t.name for t in types), methods=methods)


def test_an_interface_lists_its_sides_methods_by_python_name_with_the_params_doc():
    module = _with_methods(
        Method("session/prompt", "SESSION_PROMPT", "session_prompt", "agent", "request", "P1", "R"),
        Method("session/cancel", "SESSION_CANCEL", "session_cancel", "agent", "notification", "P2"),
        Method("session/update", "SESSION_UPDATE", "session_update", "client", "notification", "P3"),
    )
    agent = peer(module, Queries(module), "agent")
    assert (agent.interface, agent.connection) == ("Agent", "AgentSideConnection")
    assert [(m.python_name, m.kind, m.doc) for m in agent.methods] == [
        ("session_cancel", "notification", "session/cancel"),
        ("session_prompt", "request", "session/prompt"),
    ]


def test_two_methods_of_one_side_named_alike_are_an_error():
    module = _with_methods(
        Method("session/setMode", "SESSION_SET_MODE", "session_set_mode", "agent", "request", "P1", "R"),
        Method("session/set_mode", "SESSION_SET_MODE", "session_set_mode", "agent", "notification", "P2"),
    )
    with pytest.raises(
        GenerationError, match="'session/setMode' and 'session/set_mode' of side 'agent' are both named"
    ):
        peer(module, Queries(module), "agent")


def test_a_method_named_like_the_connection_api_is_an_error():
    module = _with_methods(Method("close", "CLOSE", "close", "client", "request", "P1", "R"))
    with pytest.raises(GenerationError, match="#/\\$defs/P1: method 'close' would be named close"):
        peer(module, Queries(module), "client")
