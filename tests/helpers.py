"""Shared helpers: generate a package from a schema into a temporary directory."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.errors import GenerationError
from generator.ir.model import Field, Module, ObjectType
from generator.output.write import write_package
from generator.pipeline import build_ir, generate

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SUMMARY = "summary"
"""A test's `record_property(SUMMARY, text)` is printed at the end of the run (by conftest;
under pytest-xdist too, whose workers' own output is not shown)."""
V2_SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
# The black and IR caches of the tests, one directory per pytest-xdist worker so that no two
# processes write the same file (test_cli copies .cache without it).
TEST_CACHES = "acp-codegen-tests"
CACHE = ROOT / ".cache" / TEST_CACHES / os.environ.get("PYTEST_XDIST_WORKER", "main")
MYPY_CACHE = CACHE / "mypy"


def copy_tracked(names: tuple[str, ...], destination: Path) -> None:
    """Copy what git tracks under each of `names` (files or folders of this checkout) to
    `destination`, as a fresh clone would have it: no caches, builds or stray files."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *names], cwd=ROOT, capture_output=True, check=True)
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).exists():  # a tracked file deleted in the work tree is not copied
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)


def ir_of(schema: dict | Path, tmp_path: Path) -> Module:
    """The IR of a schema given as a dict (written to a file) or a path."""
    if isinstance(schema, dict):
        path = tmp_path / "schema.json"
        path.write_text(json.dumps(schema))
        schema = path
    return build_ir(schema, "pkg", ROOT)


def error_for(schema: dict, tmp_path: Path) -> GenerationError:
    """The GenerationError that building the IR of `schema` raises."""
    with pytest.raises(GenerationError) as caught:
        ir_of(schema, tmp_path)
    return caught.value


def fields(obj: ObjectType) -> dict[str, Field]:
    """An object type's fields by wire name."""
    return {item.wire_name: item for item in obj.fields}


def generate_package(schema: Path, out: Path, package: str) -> Path:
    result = generate(schema, package, ROOT, CACHE)
    write_package(out / package, result.files)
    return out / package


def import_package(out: Path, package: str):
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True, env=None)
