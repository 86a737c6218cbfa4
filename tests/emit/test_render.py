"""Rendering: schema text stays data in the generated package."""

from __future__ import annotations

import json

from generator.emit.render import natural_sorted
from tests.support.helpers import FIXTURES, generate_package, import_package

HOSTILE = json.loads((FIXTURES / "hostile.json").read_text())


def test_hostile_schema_text_stays_data(tmp_path):
    package = import_package(generate_package(FIXTURES / "hostile.json", tmp_path, "hostile_pkg").parent, "hostile_pkg")
    evil = HOSTILE["$defs"]["Evil"]
    assert package.Evil.__doc__.strip() == evil["description"]
    assert {m.value for m in package.Mode} == {v["const"] for v in HOSTILE["$defs"]["Mode"]["anyOf"]}
    value = package.decode("Evil", {"weird key\"'": "x", "def": '"""\\'})
    assert package.encode(value) == {"weird key\"'": "x", "def": '"""\\'}
    assert not hasattr(package, "os")


def test_slots_are_sorted_as_ruff_sorts_them():
    assert natural_sorted(["f_10", "f_2", "b", "a_b", "aB", "unknown_properties"]) == [
        "aB",
        "a_b",
        "b",
        "f_2",
        "f_10",
        "unknown_properties",
    ]
