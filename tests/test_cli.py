"""The command line on a copy of the project: drift check, bad input, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, TEST_CACHES

COPIED = ("pyproject.toml", "schema", "templates", "generator", "generated", ".cache")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", TEST_CACHES))
        elif source.exists():
            shutil.copy2(source, tmp_path / name)
    return tmp_path


def cli(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )


def digest(directory: Path) -> dict[str, str]:
    return {
        path.relative_to(directory).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_check_passes_on_the_committed_output(project):
    result = cli(project, "check")
    assert result.returncode == 0, result.stderr
    assert "up to date" in result.stdout


def test_check_fails_after_a_hand_edit_with_a_diff_and_the_fix(project):
    models = project / "generated" / "acp_v2" / "models.py"
    models.write_text(models.read_text().replace("class ToolCallUpdate(Model):", "class ToolCallUpdate(Model):  # edited"))
    result = cli(project, "check")
    assert result.returncode == 1
    assert "changed: models.py" in result.stderr
    assert "-class ToolCallUpdate(Model):  # edited" in result.stderr
    assert "make generate" in result.stderr


def test_check_fails_after_a_template_change(project):
    template = project / "templates" / "models.py.jinja"
    template.write_text(template.read_text().replace("with its decoder and encoder", "with codecs"))
    result = cli(project, "check")
    assert result.returncode == 1
    assert "changed: models.py" in result.stderr


def test_check_reports_missing_and_extra_files(project):
    (project / "generated" / "acp_v2" / "py.typed").unlink()
    (project / "generated" / "acp_v2" / "stray.py").write_text("")
    result = cli(project, "check")
    assert result.returncode == 1
    assert "missing: py.typed" in result.stderr and "extra: stray.py" in result.stderr


def test_a_bad_schema_fails_with_its_pointer_and_leaves_the_output_untouched(project):
    before = digest(project / "generated")
    bad = project / "bad.json"
    bad.write_text(json.dumps({"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/Gone"}}}}}))
    result = cli(project, "generate", "--schema", str(bad))
    assert result.returncode == 2
    assert "#/$defs/A/properties/b/$ref: dangling $ref '#/$defs/Gone'" in result.stderr
    assert digest(project / "generated") == before


def test_a_hand_edited_vendored_schema_is_refused(project):
    schema = project / "schema" / "v2" / "schema.unstable.json"
    schema.write_text(schema.read_text().replace("A unique identifier", "An edited identifier", 1))
    before = digest(project / "generated")
    result = cli(project, "generate")
    assert result.returncode == 2
    assert "does not match schema.lock.json" in result.stderr and "--schema" in result.stderr
    assert digest(project / "generated") == before


def test_output_is_identical_across_hash_seeds(project):
    for seed in ("0", "4242"):
        result = cli(project, "generate", "--out", f"out-{seed}", PYTHONHASHSEED=seed)
        assert result.returncode == 0, result.stderr
    generated = [digest(project / out / "acp_v2") for out in ("out-0", "out-4242", "generated")]
    assert generated[0] == generated[1] == generated[2]


def test_ir_prints_the_decisions_as_json(project):
    result = cli(project, "ir")
    assert result.returncode == 0
    types = {entry["name"]: entry for entry in json.loads(result.stdout)["types"]}
    assert types["SessionUpdate"]["tag_key"] == "sessionUpdate"
    assert types["ToolKind"]["$class"] == "EnumType"
    title = next(item for item in types["ToolCallUpdate"]["fields"] if item["name"] == "title")
    assert title["$class"] == "Field"
    assert (title["type"]["$class"], title["type"]["kind"]) == ("Primitive", "str")  # a field named kind is kept


def test_an_unconfigured_upsert_warns_and_fails_with_strict(project):
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("[tool.acp-codegen.upserts.TerminalUpdate]\nidentity = [\"terminalId\"]\n", ""))
    before = digest(project / "generated")
    warned = cli(project, "check")
    assert "warning: TerminalUpdate (#/$defs/TerminalUpdate)" in warned.stderr
    strict = cli(project, "generate", "--strict")
    assert strict.returncode == 2 and "--strict" in strict.stderr
    assert digest(project / "generated") == before
