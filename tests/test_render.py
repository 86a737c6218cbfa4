"""Rendering: schema text stays data in the generated package."""

from __future__ import annotations

import io
import json
import re
import tokenize

import pytest

from generator.render import names_in_code, natural_sorted
from tests.helpers import FIXTURES, ROOT, generate_package, import_package

HOSTILE = json.loads((FIXTURES / "hostile.json").read_text())


def test_hostile_schema_text_stays_data(tmp_path):
    package = import_package(generate_package(FIXTURES / "hostile.json", tmp_path, "hostile_pkg").parent, "hostile_pkg")
    evil = HOSTILE["$defs"]["Evil"]
    assert package.Evil.__doc__.strip() == evil["description"]
    assert {m.value for m in package.Mode} == {v["const"] for v in HOSTILE["$defs"]["Mode"]["anyOf"]}
    value = package.decode("Evil", {"weird key\"'": "x", "def": '"""\\'})
    assert package.encode(value) == {"weird key\"'": "x", "def": '"""\\'}
    assert not hasattr(package, "os")


def test_a_module_imports_the_names_its_code_uses_but_not_those_in_strings_or_comments():
    units = [
        'def f(x: Foo) -> Bar:\n    """Baz, Qux."""\n    return cast(Bar, x)  # Quux\n',
        'TABLE = {"Baz": Corge}\n',
    ]
    candidates = ["Foo", "Bar", "Baz", "Qux", "Quux", "Corge", "Unused"]
    assert names_in_code(units, candidates) == ["Bar", "Corge", "Foo"]


@pytest.mark.parametrize("source", ["generated/acp_v2/_codec.py", "generator/render.py", "tests/test_project.py"])
def test_the_names_in_code_are_the_name_tokens_of_the_python_tokenizer(source: str):
    text = (ROOT / source).read_text()
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    names = {token.string for token in tokens if token.type == tokenize.NAME}
    words = sorted(set(re.findall(r"[^\W\d]\w*", text)))  # in strings, comments and numbers too
    assert set(names_in_code([text], words)) == names


def test_slots_are_sorted_as_ruff_sorts_them():
    assert natural_sorted(["f_10", "f_2", "b", "a_b", "aB", "unknown_properties"]) == [
        "aB",
        "a_b",
        "b",
        "f_2",
        "f_10",
        "unknown_properties",
    ]
