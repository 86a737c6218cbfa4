"""The command line on a copy of the project: drift check, bad input, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from generator import cli as cli_module
from generator.output import cache
from generator.output.manifest import proven_units
from generator.output.write import ordinary_mode
from tests.support.helpers import FIXTURES, ROOT, TEST_CACHES, copy_tracked

COPIED = ("pyproject.toml", "schema", "generator", "templates", "generated")
TERMINAL_ROW = '\n[tool.acp-codegen.upserts.TerminalUpdate]\nidentity = ["terminalId"]\n'


@pytest.fixture(scope="session")
def committed_black_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A black cache of every unit of the committed package, as its format manifest proves
    them: what `make generate` leaves once black has run, built without running black."""
    directory = tmp_path_factory.mktemp("black-cache")
    black_cache = cache.BlackCache(directory)
    for package in ("acp_v2", "acp_v1", "acp_runtime"):
        for key, text in proven_units(ROOT / "generated" / package).items():
            black_cache.put(key, text)
    black_cache.save()
    return directory / cache.BLACK_FILE


@pytest.fixture
def project(tmp_path: Path, committed_black_cache: Path) -> Path:
    """A copy of the project whose black cache holds the committed units, so that generating
    the package elsewhere (`--out`) or checking an edited file does not run black on all of it."""
    copy_tracked(COPIED, tmp_path)
    if (ROOT / ".cache").is_dir():  # the generator's caches, to save time; never the tests' own
        shutil.copytree(ROOT / ".cache", tmp_path / ".cache", ignore=shutil.ignore_patterns(TEST_CACHES))
    (tmp_path / ".cache" / "acp-codegen").mkdir(parents=True, exist_ok=True)
    shutil.copy(committed_black_cache, tmp_path / ".cache" / "acp-codegen" / cache.BLACK_FILE)
    return tmp_path


def cli(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )


def configure(project: Path, keys: str = "", tables: str = "") -> None:
    """Add `keys` to the project's [tool.acp-codegen] table, and `tables` after everything."""
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace("[tool.acp-codegen]\n", f"[tool.acp-codegen]\n{keys}", 1) + tables
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
    models.write_text(
        models.read_text().replace("class ToolCallUpdate(Model):", "class ToolCallUpdate(Model):  # edited")
    )
    result = cli(project, "check")
    assert result.returncode == 1
    assert "changed: models.py" in result.stderr
    assert "-class ToolCallUpdate(Model):  # edited" in result.stderr
    assert "make generate" in result.stderr


def test_check_and_generate_cover_every_configured_package(project):
    models = project / "generated" / "acp_v1" / "models.py"
    models.write_text(models.read_text().replace("class ToolCallUpdate(Model):", "class ToolCallUpdate(Model):  # x"))
    result = cli(project, "check")
    assert result.returncode == 1
    assert "generated/acp_v1 differs from a fresh generation" in result.stderr
    assert "up to date: " in result.stdout and "generated/acp_v2:" in result.stdout  # each package its own report
    assert cli(project, "generate").returncode == 0
    assert cli(project, "check").returncode == 0
    (project / "generated" / "acp_v1.format.json").unlink()
    assert "missing: ../acp_v1.format.json" in cli(project, "check").stderr


def test_an_explicit_package_generates_that_one_alone(project):
    """A package a --package or --schema names stands alone: it carries its own runtime."""
    result = cli(project, "generate", "--out", "one", "--package", "mine")
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in (project / "one").iterdir()) == ["mine", "mine.format.json", "pyproject.toml"]
    assert 'include = ["mine", "mine.*"]' in (project / "one" / "pyproject.toml").read_text()
    assert (project / "one" / "mine" / "_runtime.py").is_file() and (
        project / "one" / "mine" / "_connection.py"
    ).is_file()
    assert "acp_runtime" not in (project / "one" / "mine" / "connection.py").read_text()


def test_configured_packages_share_one_runtime_package_written_beside_them(project):
    generated = project / "generated"
    shared = "__init__ _connection _cookies _http_client _http_server _jsonrpc _mcp _memory _observe _otel _proxy"
    shared += " _router _runtime _session _websocket"
    modules = sorted(path.stem for path in (generated / "acp_runtime").iterdir() if path.suffix == ".py")
    assert modules == sorted(shared.split())
    for package in ("acp_v2", "acp_v1"):
        assert not (generated / package / "_runtime.py").exists()
        assert (generated / package / "conductor.py").is_file()  # a program of its own: `python -m acp_v2.conductor`
        assert "from acp_runtime import _runtime as _rt\n" in (generated / package / "_codec.py").read_text()
    pyproject = (generated / "pyproject.toml").read_text()
    assert 'include = ["acp_v2", "acp_v2.*", "acp_v1", "acp_v1.*", "acp_runtime", "acp_runtime.*"]' in pyproject
    pyproject_toml = project / "pyproject.toml"
    pyproject_toml.write_text(
        pyproject_toml.read_text().replace('runtime-package = "acp_runtime"', 'runtime-package = "shared_rt"')
    )
    result = cli(project, "generate")
    assert result.returncode == 0, result.stderr
    assert "generated/shared_rt: the runtime of acp_v2 and acp_v1" in result.stdout
    assert "from shared_rt import _runtime as _rt\n" in (generated / "acp_v1" / "_codec.py").read_text()
    assert (generated / "shared_rt" / "_runtime.py").is_file()
    assert cli(project, "check").returncode == 0


def test_without_a_runtime_package_each_configured_package_carries_its_own(project):
    pyproject = project / "pyproject.toml"
    pyproject.write_text(re.sub(r"^runtime-package = .*\n", "", pyproject.read_text(), flags=re.M))
    result = cli(project, "generate")
    assert result.returncode == 0, result.stderr
    for package in ("acp_v2", "acp_v1"):
        assert (project / "generated" / package / "_runtime.py").is_file()
        assert "from . import _runtime as _rt\n" in (project / "generated" / package / "_codec.py").read_text()
    assert cli(project, "check").returncode == 0


def test_with_several_packages_a_row_is_a_warning_only_when_no_schema_has_its_type(project):
    configure(project, 'not-upserts = ["SessionMessageChunk", "Gone"]\n')
    result = cli(project, "check")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("warning:") == 1  # SessionMessageChunk is in v2 only: no warning
    assert "not-upserts: Gone: no $defs of that name" in result.stderr


def test_check_fails_after_a_template_change(project):
    template = project / "templates" / "models.py.jinja"
    template.write_text(template.read_text().replace("with its decoder and encoder", "with codecs"))
    result = cli(project, "check")
    assert result.returncode == 1
    assert "changed: models.py" in result.stderr


def test_check_fails_after_a_change_to_a_static_module_and_generate_copies_it_in(project):
    """A runtime module is copied once, into the runtime package the configured packages share."""
    static = project / "generator" / "runtime" / "_connection.py"
    edited, count = re.subn(
        r"^_MAX_MESSAGE_BYTES: Final = .*$", "_MAX_MESSAGE_BYTES: Final = 1024", static.read_text(), flags=re.M
    )
    assert count == 1
    static.write_text(edited)
    result = cli(project, "check")
    assert result.returncode == 1
    assert "changed: _connection.py" in result.stderr and "_MAX_MESSAGE_BYTES: Final = 1024" in result.stderr
    assert cli(project, "generate").returncode == 0
    assert (
        "_MAX_MESSAGE_BYTES: Final = 1024\n" in (project / "generated" / "acp_runtime" / "_connection.py").read_text()
    )
    assert not (project / "generated" / "acp_v2" / "_connection.py").exists()
    assert cli(project, "check").returncode == 0


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


def test_an_unconfigured_upsert_warns_once_with_its_code_and_fails_with_strict(project):
    configure(project, "official-defaults = false\n")  # the shipped rules off: every upsert type warns
    before = digest(project / "generated")
    warned = cli(project, "check")
    # both v1 and v2 describe CompactionUpdate as an upsert: one cause, printed once
    assert warned.stderr.count("warning: CompactionUpdate (#/$defs/CompactionUpdate)") == 1
    assert "warning: TerminalUpdate (#/$defs/TerminalUpdate)" in warned.stderr
    assert "but it is not in [tool.acp-codegen.upserts] (or not-upserts) [unconfigured-upsert]" in warned.stderr
    strict = cli(project, "generate", "--strict")
    assert strict.returncode == 2 and "--strict" in strict.stderr
    assert digest(project / "generated") == before


def test_a_warning_is_silenced_by_its_code_or_its_cause(project):
    original = (project / "pyproject.toml").read_text()
    v2 = ("--schema", "schema/v2/schema.unstable.json", "--out", "v2")
    configure(project, 'official-defaults = false\nignore-warnings = ["unconfigured-upsert"]\n')
    assert "warning:" not in cli(project, "check", *v2).stderr
    (project / "pyproject.toml").write_text(original)
    configure(project, 'official-defaults = false\nignore-warnings = ["unconfigured-upsert:TerminalUpdate"]\n')
    one = cli(project, "check", *v2).stderr
    assert "warning: ToolCallUpdate (" in one and "TerminalUpdate" not in one


def test_a_warning_is_printed_by_the_first_run_that_meets_its_cause(tmp_path):
    upsert = {"type": "object", "description": "Patch semantics.", "properties": {"id": {"type": "string"}}}
    schema = tmp_path / "api.json"
    schema.write_text(json.dumps({"$defs": {"Update": upsert}}))
    args = ("--schema", "api.json", "--out", "out", "--package", "api")
    assert cli(tmp_path, "generate", *args).stderr.count("warning: Update (") == 1
    assert "warning:" not in cli(tmp_path, "check", *args).stderr  # printed once: not again at every check
    assert "warning: Update (" in cli(tmp_path, "check", "--strict", *args).stderr  # --strict prints every one
    schema.write_text(json.dumps({"$defs": {"Update": upsert, "Patch": upsert}}))
    assert cli(tmp_path, "generate", *args).stderr.count("warning:") == 1  # the new cause only: Patch
    schema.write_text(json.dumps({"$defs": {"Patch": upsert}}))
    assert cli(tmp_path, "generate", *args).stderr == ""
    schema.write_text(json.dumps({"$defs": {"Update": upsert, "Patch": upsert}}))
    assert "warning: Update (" in cli(tmp_path, "generate", *args).stderr  # gone, then back: printed again


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The error of a failed run, after checking it is a single line and not a traceback."""
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_generate_and_check_in_a_directory_without_pyproject(tmp_path):
    shutil.copy(FIXTURES / "rules.json", tmp_path / "rules.json")
    args = ("--schema", "rules.json", "--out", "out", "--package", "rules_pkg")
    generated = cli(tmp_path, "generate", *args)
    assert generated.returncode == 0, generated.stderr
    assert (tmp_path / "out" / "rules_pkg" / "models.py").is_file()
    assert cli(tmp_path, "check", *args).returncode == 0
    assert "pass --package" in one_line_error(cli(tmp_path, "generate", *args[:4]))
    assert "pass --schema" in one_line_error(cli(tmp_path, "check"))
    assert "update-schema needs a [tool.acp-codegen] table" in one_line_error(cli(tmp_path, "update-schema", "1.0.0"))


def test_without_configured_commands_the_header_names_the_script_and_the_drift_report_the_command_as_run(tmp_path):
    shutil.copy(FIXTURES / "rules.json", tmp_path / "rules.json")
    args = ("--schema", "rules.json", "--out", "out dir", "--package", "rules_pkg")
    assert cli(tmp_path, "generate", *args).returncode == 0  # started as `python -m generator`
    models = tmp_path / "out dir" / "rules_pkg" / "models.py"
    written = "acp-codegen generate --schema rules.json --out 'out dir' --package rules_pkg"
    assert f"# Regenerate with `{written}`; `{written.replace(' generate ', ' check ')}` fails" in models.read_text()
    assert "make" not in (tmp_path / "out dir" / "pyproject.toml").read_text()
    script = Path(sys.executable).with_name("acp-codegen")  # the console script, as pip installs it
    assert subprocess.run([script, "check", *args], cwd=tmp_path).returncode == 0  # the bytes do not depend on it
    models.write_text(models.read_text() + "# edited\n")
    drift = cli(tmp_path, "check", *args)
    ran = written.replace("acp-codegen", "python -m generator")
    assert drift.returncode == 1 and drift.stderr.endswith(f"Run `{ran}` and commit the result.\n")
    by_script = subprocess.run([script, "check", *args], cwd=tmp_path, capture_output=True, text=True)
    assert by_script.stderr.endswith(
        "Run `acp-codegen generate --schema rules.json --out 'out dir' --package rules_pkg` and commit the result.\n"
    )


def test_configured_commands_are_what_the_headers_and_messages_name(tmp_path):
    shutil.copy(FIXTURES / "rules.json", tmp_path / "rules.json")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nschema = "rules.json"\nout = "out"\npackage = "rules_pkg"\nlock = "lock.json"\n'
        '[tool.acp-codegen.commands]\ngenerate = "tox -e gen"\ncheck = "tox -e drift"\nupdate-schema = "tox -e vendor -- V"\n'
    )
    assert "no schema lock; run `tox -e vendor -- V`" in one_line_error(cli(tmp_path, "generate"))
    no_lock = (tmp_path / "pyproject.toml").read_text().replace('lock = "lock.json"\n', "pyproject = false\n")
    (tmp_path / "pyproject.toml").write_text(no_lock)
    assert cli(tmp_path, "generate").returncode == 0  # no lock: the schema is used as it is
    assert not (tmp_path / "out" / "pyproject.toml").exists()  # pyproject = false: none written
    assert cli(tmp_path, "check").returncode == 0  # ... and none compared
    assert (
        "# Regenerate with `tox -e gen`; `tox -e drift` fails"
        in (tmp_path / "out" / "rules_pkg" / "models.py").read_text()
    )


def test_schema_dir_maps_the_documents_refs_name_and_an_unmapped_one_is_one_line(tmp_path):
    (tmp_path / "remote").mkdir()
    (tmp_path / "remote" / "id.json").write_text(json.dumps({"type": "string", "minLength": 1}))
    (tmp_path / "api.json").write_text(json.dumps({"$defs": {"Id": {"$ref": "http://example.com/s/id.json"}}}))
    args = ("--schema", "api.json", "--out", "out", "--package", "api_pkg")
    generated = cli(tmp_path, "generate", *args, "--schema-dir", "http://example.com/s/=remote")
    assert generated.returncode == 0, generated.stderr
    assert cli(tmp_path, "check", *args, "--schema-dir", "http://example.com/s/=remote").returncode == 0
    assert one_line_error(cli(tmp_path, "check", *args)) == (
        "error: #/$defs/Id/$ref: $ref 'http://example.com/s/id.json' names the document http://example.com/s/id.json, "
        "which no schema-dir maps to a local directory (--schema-dir PREFIX=DIR); nothing is fetched from the network\n"
    )
    bad = cli(tmp_path, "generate", *args, "--schema-dir", "remote")
    assert bad.returncode == 2 and "--schema-dir: expected PREFIX=DIR" in bad.stderr


def test_black_runs_only_on_what_neither_the_committed_output_nor_the_cache_holds(tmp_path):
    shutil.copy(FIXTURES / "rules.json", tmp_path / "rules.json")
    args = ("--schema", "rules.json", "--package", "rules_pkg")
    first = cli(tmp_path, "generate", *args, "--out", "a")
    total = re.search(r"black ran on (\d+) of (\d+) units \((\d+) reshaped\)", first.stdout)
    assert total is not None and total.group(1) == total.group(2)  # empty cache: every unit
    shutil.rmtree(tmp_path / "a")
    assert "black ran on 0 of" in cli(tmp_path, "generate", *args, "--out", "a").stdout  # the cache
    shutil.rmtree(tmp_path / ".cache")
    assert "black ran on 0 of" in cli(tmp_path, "check", *args, "--out", "a").stdout  # the committed output
    assert f"black ran on {total.group(2)} of" in cli(tmp_path, "check", "--full", *args, "--out", "a").stdout


def test_config_rows_for_types_the_schema_lacks_are_warnings_and_errors_under_strict(project):
    configure(project, 'path-types = ["AbsolutePath"]\n', TERMINAL_ROW)
    schema = project / "tiny.json"
    schema.write_text(json.dumps({"$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}}}))
    tiny = ("--schema", str(schema), "--out", "tiny")
    strict = cli(project, "generate", *tiny, "--strict")
    assert strict.returncode == 2 and "--strict" in strict.stderr and not (project / "tiny").exists()
    warned = cli(project, "generate", *tiny)
    assert warned.returncode == 0, warned.stderr
    assert "warning: pyproject.toml [tool.acp-codegen] upserts.TerminalUpdate: no $defs of that name" in warned.stderr
    assert "warning: pyproject.toml [tool.acp-codegen] path-types: AbsolutePath: no $defs" in warned.stderr
    assert warned.stderr.count("warning:") == 2 and "[unknown-type]" in warned.stderr  # the project's rows only


def test_a_config_row_that_does_not_fit_its_type_is_still_an_error(project):
    configure(project, tables='\n[tool.acp-codegen.upserts.ToolCallUpdate]\nidentity = ["toolCallId"]\n')
    schema = project / "tiny.json"
    schema.write_text(
        json.dumps({"$defs": {"ToolCallUpdate": {"type": "object", "properties": {"x": {"type": "string"}}}}})
    )
    error = one_line_error(cli(project, "generate", "--schema", str(schema), "--out", "tiny"))
    assert "upserts.ToolCallUpdate.identity: ToolCallUpdate has no property 'toolCallId'" in error


def test_the_shipped_rules_serve_the_vendored_v1_schema_and_a_projects_v2_only_row_warns(project):
    v1 = ("generate", "--schema", "schema/v1/schema.json", "--out", "v1", "--strict")
    shipped = cli(project, *v1)
    assert shipped.returncode == 0, shipped.stderr  # the shipped rows v1 lacks are skipped silently
    configure(project, tables='\n[tool.acp-codegen.upserts.SessionMessage]\nidentity = ["messageId"]\n')
    strict = cli(project, *v1)
    assert strict.returncode == 2
    assert "upserts.SessionMessage: no $defs of that name in this schema" in strict.stderr
    assert "Traceback" not in strict.stderr


def test_a_contradictory_upsert_rule_is_refused(project):
    row = 'identity = ["toolCallId"]\nstart = { kind = "other" }\nnull-resets = ["kind"]\nempty-clears = ["kind"]\n'
    configure(project, tables=f"\n[tool.acp-codegen.upserts.ToolCallUpdate]\n{row}")
    assert "'kind' is listed in null-resets and empty-clears" in one_line_error(cli(project, "check"))


@pytest.mark.parametrize(
    ("blocker", "args", "message"),
    [
        ("out", ("--out", "out"), "out: exists and is not a directory"),
        ("generated/acp_v2", (), "acp_v2: exists and is not a directory"),
        (".cache/acp-codegen", (), "cannot use it as the cache directory (File exists); remove it or pass --no-cache"),
        (".cache", (), "cannot use it as the cache directory (Not a directory)"),
    ],
)
def test_an_output_or_cache_path_that_is_a_file_is_one_line(project, blocker, args, message):
    shutil.rmtree(project / blocker, ignore_errors=True)
    (project / blocker).write_text("")
    assert message in one_line_error(cli(project, "generate", *args))


@pytest.mark.parametrize("schema", ["absent.json", "schema", "pyproject.toml"])
def test_an_unreadable_schema_is_one_line(project, schema):
    assert schema in one_line_error(cli(project, "generate", "--schema", schema, "--out", "x"))


def fake_npm(tmp_path: Path, body: str) -> dict[str, str]:
    """An environment whose `npm` is a Python script with `body`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(f"#!{sys.executable}\nimport shutil, sys\n{body}\n")
    npm.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def release_tarball(project: Path, version: str, work: Path | None = None) -> Path:
    """An npm tarball holding the vendored schemas of `project` as release `version` (built in `work`,
    by default beside the project)."""
    work = project.parent if work is None else work
    staging = work / "release" / "package"
    for name in ("schema/v1/schema.json", "schema/v1/schema.unstable.json", "schema/v2/schema.unstable.json"):
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(project / name, staging / name)
    shutil.copy(project / "schema" / "LICENSE", staging / "LICENSE")
    (staging / "package.json").write_text(
        json.dumps({"name": "@agentclientprotocol/sdk", "version": version, "license": "Apache-2.0"})
    )
    tarball = work / "release.tgz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(staging, arcname="package")
    return tarball


def tracked(project: Path) -> dict[str, str]:
    return {**digest(project / "schema"), **{f"generated/{k}": v for k, v in digest(project / "generated").items()}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("print('npm ERR! 404 Not Found', file=sys.stderr); sys.exit(1)", "npm pack failed: npm ERR! 404 Not Found"),
        ("sys.exit(0)", "npm pack succeeded but wrote no tarball"),
        ("print('nothing.tgz')", "npm pack succeeded but wrote no tarball"),
    ],
)
def test_a_failing_npm_is_one_line_and_changes_nothing(project, tmp_path, body, message):
    before = tracked(project)
    result = cli(project, "update-schema", "9.9.9", **fake_npm(tmp_path, body))
    assert message in one_line_error(result)
    assert tracked(project) == before


def test_update_schema_locks_the_version_npm_resolved(project, tmp_path):
    tarball = release_tarball(project, "2.4.0")
    copy = f"shutil.copy({str(tarball)!r}, sys.argv[sys.argv.index('--pack-destination') + 1]); print('release.tgz')"
    result = cli(project, "update-schema", "latest", **fake_npm(tmp_path, copy))
    assert result.returncode == 0, result.stderr
    assert "vendored @agentclientprotocol/sdk@2.4.0" in result.stdout
    assert json.loads((project / "schema" / "schema.lock.json").read_text())["version"] == "2.4.0"
    assert cli(project, "check").returncode == 0
    changelog = (project / "schema" / "CHANGELOG.md").read_text()
    assert "## acp_v2: 2.4.0 → 2.4.0" in changelog and "## acp_v1: 2.4.0 → 2.4.0" in changelog


def test_update_schema_maps_npm_paths_to_the_projects_and_can_write_no_pyproject(tmp_path, committed_black_cache):
    (tmp_path / ".cache" / "acp-codegen").mkdir(parents=True)
    shutil.copy(committed_black_cache, tmp_path / ".cache" / "acp-codegen" / cache.BLACK_FILE)
    tarball = release_tarball(ROOT, "2.4.0", tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nschema = "vendor/acp/v2.json"\npackage = "acp_v2"\nprotocol-version = 2\nout = "src"\n'
        'lock = "vendor/acp/lock.json"\n'
    )
    copy = f"shutil.copy({str(tarball)!r}, sys.argv[sys.argv.index('--pack-destination') + 1]); print('release.tgz')"
    path = "--path=schema/v2/schema.unstable.json=vendor/acp/v2.json"
    result = cli(tmp_path, "update-schema", "2.4.0", path, "--no-pyproject", **fake_npm(tmp_path, copy))
    assert result.returncode == 0, result.stderr
    vendored = tmp_path / "vendor" / "acp"
    assert sorted(item.name for item in vendored.iterdir()) == ["LICENSE", "lock.json", "v2.json"]
    assert (vendored / "v2.json").read_bytes() == (ROOT / "schema" / "v2" / "schema.unstable.json").read_bytes()
    (entry,) = json.loads((vendored / "lock.json").read_text())["files"]
    assert (entry["path"], entry["source"]) == ("vendor/acp/v2.json", "schema/v2/schema.unstable.json")
    assert sorted(item.name for item in (tmp_path / "src").iterdir()) == ["acp_v2", "acp_v2.format.json"]
    assert "merge_tool_call_update" in (tmp_path / "src" / "acp_v2" / "__init__.py").read_text()  # the shipped rules
    assert cli(tmp_path, "check", "--no-pyproject").returncode == 0
    assert "missing: ../pyproject.toml" in cli(tmp_path, "check").stderr  # without the flag: one is due
    bad = cli(tmp_path, "update-schema", "2.4.0", "--path", "schema/v2/schema.unstable.json=../v2.json")
    assert bad.returncode == 2 and "'../v2.json' is not a relative path inside" in bad.stderr


def test_generated_files_get_ordinary_permissions(project):
    assert cli(project, "generate", "--out", "fresh").returncode == 0
    files = [project / "fresh" / "acp_v2.format.json", *(project / "fresh" / "acp_v2").iterdir()]
    assert {oct(stat.S_IMODE(path.stat().st_mode)) for path in files} == {oct(ordinary_mode())}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((project / "fresh" / "acp_v2").stat().st_mode) == 0o777 & ~umask


def test_check_compares_bytes_and_modes(project):
    models = project / "generated" / "acp_v2" / "models.py"
    models.write_bytes(models.read_bytes().replace(b"\n", b"\r\n"))
    crlf = cli(project, "check")
    assert crlf.returncode == 1 and "models.py: line endings differ (CRLF on disk)" in crlf.stderr
    models.write_bytes(models.read_bytes().replace(b"\r\n", b"\n"))
    models.chmod(0o755)
    mode = cli(project, "check")
    assert mode.returncode == 1 and f"mode: models.py is 0o755, expected {ordinary_mode():#o}" in mode.stderr


def test_bytecode_caches_are_not_drift(project):
    pycache = project / "generated" / "acp_v2" / "__pycache__"
    pycache.mkdir()
    (pycache / "models.cpython-311.pyc").write_bytes(b"\0")
    assert cli(project, "check").returncode == 0


def test_what_an_interrupted_run_left_does_not_break_the_next(project):
    for leftover in (".acp_v2.new-0badc0de", ".acp_v2.old-0badc0de", "../.cache/acp-codegen/.black.json.x.tmp"):
        path = project / "generated" / leftover
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir() if leftover.startswith(".acp") else path.write_text("half")
    assert cli(project, "check").returncode == 0
    assert cli(project, "generate").returncode == 0
    assert sorted(path.name for path in (project / "generated").iterdir()) == [
        "acp_runtime",
        "acp_runtime.format.json",
        "acp_v1",
        "acp_v1.format.json",
        "acp_v2",
        "acp_v2.format.json",
        "pyproject.toml",
    ]


@pytest.mark.parametrize("damage", [b"", b"not json", b"0" * 64 + b"\n{}"])
def test_damaged_caches_are_rebuilt_not_trusted(project, damage):
    cache_dir = project / ".cache" / "acp-codegen"
    cache_dir.mkdir(parents=True, exist_ok=True)
    for path in [*cache_dir.glob("*.json"), cache_dir / "black.json"]:
        path.write_bytes(damage)
    result = cli(
        project, "generate", "--schema", str(FIXTURES / "rules.json"), "--out", "out", "--package", "rules_pkg"
    )
    assert result.returncode == 0, result.stderr
    assert (
        cli(
            project,
            "check",
            "--full",
            "--schema",
            str(FIXTURES / "rules.json"),
            "--out",
            "out",
            "--package",
            "rules_pkg",
        ).returncode
        == 0
    )


def test_an_edit_recorded_in_the_format_manifest_fools_only_the_fast_check(project):
    models = project / "generated" / "acp_v2" / "models.py"
    manifest = project / "generated" / "acp_v2.format.json"
    old = models.read_text()
    new = old.replace("class ToolCallUpdate(Model):", "class ToolCallUpdate(Model):  # edited", 1)
    models.write_text(new)
    rows = json.loads(manifest.read_text())["files"]["models.py"]
    texts, start = [], 0
    for _, _, length in rows:
        texts.append(old[start : start + length])
        start += length + 2
    edited = next(i for i, text in enumerate(texts) if "class ToolCallUpdate(Model):" in text)
    text = texts[edited].replace("class ToolCallUpdate(Model):", "class ToolCallUpdate(Model):  # edited")
    digest_old, digest_new = rows[edited][1], hashlib.sha256(text.encode()).hexdigest()
    manifest.write_text(
        manifest.read_text().replace(f'"{digest_old}", {rows[edited][2]}]', f'"{digest_new}", {len(text)}]')
    )
    assert cli(project, "check").returncode == 0  # the manifest says black wrote it: the fast check believes it
    full = cli(project, "check", "--full")
    assert full.returncode == 1 and "-class ToolCallUpdate(Model):  # edited" in full.stderr


@pytest.mark.parametrize("command", [["generate"], ["update-schema", "2.5.0"]], ids=" ".join)
@pytest.mark.parametrize(
    ("rename", "when"),
    [(0, "before"), (1, "before"), (1, "after")],
    ids=["as the old package is renamed away", "as the new one is renamed in", "right after"],
)
def test_a_run_interrupted_during_the_swap_changes_nothing(project, tmp_path, monkeypatch, command, rename, when):
    tarball = release_tarball(project, "2.5.0")
    copy = f"shutil.copy({str(tarball)!r}, sys.argv[sys.argv.index('--pack-destination') + 1]); print('release.tgz')"
    monkeypatch.setenv("PATH", fake_npm(tmp_path, copy)["PATH"])
    monkeypatch.chdir(project)
    models = project / "generated" / "acp_v2" / "models.py"
    models.write_text(models.read_text() + "# edited, so that the old package is not the new one\n")
    before = tracked(project)
    real_rename, renames = os.rename, []  # of the package, away or in

    def interrupted_rename(source, destination):
        if "acp_v2" in (Path(source).name, Path(destination).name):
            renames.append((source, destination))
            if len(renames) == rename + 1:
                if when == "after":
                    real_rename(source, destination)
                raise KeyboardInterrupt
        return real_rename(source, destination)

    with monkeypatch.context() as patch:
        patch.setattr(os, "rename", interrupted_rename)
        assert cli_module.main(command) == cli_module.EXIT_INTERRUPTED
    assert len(renames) > rename  # the interrupt came from the swap
    assert tracked(project) == before  # schema, lock, changelog, pyproject, manifest and package as they were
    assert cli_module.main(command) == 0
    assert cli_module.main(["check"]) == 0
    assert sorted(path.name for path in (project / "generated").iterdir()) == [
        "acp_runtime",
        "acp_runtime.format.json",
        "acp_v1",
        "acp_v1.format.json",
        "acp_v2",
        "acp_v2.format.json",
        "pyproject.toml",
    ]


def test_an_error_writing_the_last_package_leaves_every_package_as_it_was(project, monkeypatch):
    """generate writes the packages and their runtime as one: a failure renaming the runtime package
    in, after acp_v2 and acp_v1 were swapped, puts them back too."""
    monkeypatch.chdir(project)
    for package in ("acp_v2", "acp_v1"):
        models = project / "generated" / package / "models.py"
        models.write_text(models.read_text() + "# edited, so that the old package is not the new one\n")
    before = tracked(project)
    real_rename, renamed = os.rename, []

    def failing_rename(source, destination):
        renamed.append(Path(destination).name)
        if renamed.count("acp_runtime") == 1 and Path(destination).name == "acp_runtime":  # once: undoing works
            raise OSError(28, "No space left on device", str(destination))
        return real_rename(source, destination)

    with monkeypatch.context() as patch:
        patch.setattr(os, "rename", failing_rename)
        assert cli_module.main(["generate"]) == cli_module.EXIT_ERROR
    assert "acp_v2" in renamed and "acp_v1" in renamed  # both were swapped in before the failure
    assert tracked(project) == before
    assert cli_module.main(["generate"]) == 0
    assert cli_module.main(["check"]) == 0
