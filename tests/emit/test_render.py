"""Rendering: schema text stays data in the generated package."""

from __future__ import annotations

import json

import pytest

from generator import static
from generator.emit.render import SERVE_PROXY_MODULE, natural_sorted, render_package
from generator.errors import GenerationError
from generator.pipeline import build_ir
from tests.support.helpers import FIXTURES, ROOT, V2_SCHEMA, generate_package, import_package

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


@pytest.mark.parametrize(
    ("module", "name", "missing"),
    [("connection", "AgentSideConnection", "AgentServer"), ("proxy", "ForwardingAgent", "ForwardingServer")],
)
def test_a_name_serve_proxy_takes_that_its_package_lacks_fails_generation_naming_it(monkeypatch, module, name, missing):
    """What the static module imports from connection.py and proxy.py is checked against their `__all__`."""
    source = static.source
    imported = f"from .{module} import {name}"
    assert imported in source(SERVE_PROXY_MODULE)

    def edited(file_name: str) -> str:
        text = source(file_name)
        return text.replace(imported, f"from .{module} import {missing}") if file_name == SERVE_PROXY_MODULE else text

    monkeypatch.setattr(static, "source", edited)
    with pytest.raises(GenerationError, match=rf"_serve_proxy.py imports \['{missing}'\] from .{module}"):
        render_package(build_ir(V2_SCHEMA, "acp_v2", ROOT), {"generator": "test", "black": "none"})
