"""The generator's folders are its stages, and data flows one way through them: each module
imports only its own stage and the stages below it, never a later one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

GENERATOR = ROOT / "generator"
# Lower ranks come first in the flow; a module may import its own rank and lower ones.
RANKS = {
    "generator": 0,  # the package itself: __version__
    "generator.errors": 0,
    "generator.runtime": 0,  # the package's static modules: import nothing of the generator
    "generator.static": 0,  # those written against the package's models: likewise
    "generator.config": 1,
    "generator.schema": 2,
    "generator.ir": 3,
    "generator.emit": 4,
    "generator.output": 5,
    "generator.changes": 5,
    "generator.pipeline": 6,
    "generator.cli": 7,
    "generator.__main__": 8,
}


def stage_of(module: str) -> str:
    """The stage (a key of RANKS) a dotted module name belongs to."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    return ".".join(part for part in relative.parts if part != "__init__")


def imports_of(path: Path) -> list[str]:
    """Every generator module `path` imports, at module level or inside functions."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "generator" else [f"generator.{a.name}" for a in node.names]
            found += [name if stage_of(name) in RANKS else node.module for name in names]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name == "generator" or name.startswith("generator.")]


SOURCES = sorted(GENERATOR.rglob("*.py"))


def test_every_module_belongs_to_a_stage():
    assert {stage_of(module_name(path)) for path in SOURCES} == set(RANKS)


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.relative_to(GENERATOR).as_posix())
def test_a_module_imports_only_its_stage_and_earlier_ones(path: Path):
    stage = stage_of(module_name(path))
    later = [name for name in imports_of(path) if RANKS[stage_of(name)] > RANKS[stage]]
    assert not later, f"{stage} (rank {RANKS[stage]}) imports a later stage: {later}"


def test_the_static_modules_import_nothing_of_the_generator():
    """They are copied into every generated package, where no generator exists."""
    for path in (GENERATOR / "runtime").glob("_*.py"):
        assert imports_of(path) == [], path


def test_the_direction_test_sees_a_backward_import(tmp_path: Path):
    module = tmp_path / "backward.py"
    module.write_text("def f():\n    from generator.output.format import format_units\n")
    assert imports_of(module) == ["generator.output.format"]
    assert RANKS[stage_of("generator.output.format")] > RANKS["generator.ir"]
