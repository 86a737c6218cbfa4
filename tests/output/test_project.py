"""The pyproject.toml beside the generated package: its version, its contents,
and how `generate` and `check` treat it."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from generator import __version__
from generator.cli import main
from generator.config import load_config
from generator.errors import GenerationError
from generator.output.project import (
    HTTPX_REQUIREMENT,
    MCP_REQUIREMENT,
    OPENTELEMETRY_REQUIREMENT,
    ORJSON_REQUIREMENT,
    SNIFFIO_REQUIREMENT,
    WEBSOCKETS_REQUIREMENT,
    distribution_name,
    distribution_version,
    ensure_generated,
    render_pyproject,
    schema_release,
)
from generator.schema import vendor
from tests.support.helpers import FIXTURES, ROOT, ir_of

CONFIG = """\
[tool.acp-codegen]
schema = "schema.json"
lock = "schema.lock.json"
out = "generated"
package = "pkg"
npm-package = "@agentclientprotocol/sdk"
schema-files = ["schema.json"]
"""


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def project(tmp_path: Path, shared_cache: Path) -> Path:
    """A project with the rules fixture as its schema, locked as release 1.2.3
    (its .cache shared with the other projects here: black runs once)."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    (tmp_path / ".cache").symlink_to(shared_cache, target_is_directory=True)
    schema = (FIXTURES / "rules.json").read_bytes()
    (tmp_path / "schema.json").write_bytes(schema)
    entry = {"path": "schema.json", "sha256": hashlib.sha256(schema).hexdigest()}
    (tmp_path / "schema.lock.json").write_text(json.dumps({"version": "1.2.3", "files": [entry]}))
    return tmp_path


@pytest.fixture
def cli(project, monkeypatch, capsys):
    """`acp-codegen ARGS` in the project: (exit code, stderr)."""
    monkeypatch.chdir(project)

    def run(*args: str) -> tuple[int, str]:
        code = main(list(args))
        return code, capsys.readouterr().err

    return run


def test_the_version_is_the_schema_release_with_the_generator_as_local_label():
    version = Version(distribution_version("2.4.0"))
    assert (version.public, version.local) == ("2.4.0", f"codegen.{__version__}")
    assert version in SpecifierSet("==2.4.0")  # a pin on the release matches any generator's build
    assert str(Version(distribution_version(None))) == f"0+codegen.{__version__}"


def test_the_distribution_name_is_the_package_name_normalized():
    assert distribution_name("acp_v2") == "acp-v2"
    assert distribution_name("My__Pkg.x") == "my-pkg-x"


def test_the_release_is_found_by_the_schema_bytes(project):
    config = load_config(project)
    assert schema_release(config, hashlib.sha256((project / "schema.json").read_bytes()).hexdigest()) == "1.2.3"
    assert schema_release(config, "0" * 64) is None
    (project / "schema.lock.json").unlink()
    assert schema_release(config, "0" * 64) is None


def test_the_pyproject_installs_the_package_and_its_py_typed(tmp_path):
    module = ir_of(FIXTURES / "rules.json", tmp_path)
    data = tomllib.loads(render_pyproject(module, "1.2.3"))
    assert data["project"]["name"] == "pkg"
    assert data["project"]["version"] == f"1.2.3+codegen.{__version__}"
    assert data["project"]["dependencies"] == []
    assert data["project"]["optional-dependencies"] == {
        "orjson": [ORJSON_REQUIREMENT],
        "websocket": [WEBSOCKETS_REQUIREMENT],
        "http": [HTTPX_REQUIREMENT, SNIFFIO_REQUIREMENT],
        "otel": [OPENTELEMETRY_REQUIREMENT],
        "mcp": [MCP_REQUIREMENT],
    }
    assert data["tool"]["setuptools"]["packages"]["find"]["include"] == ["pkg", "pkg.*"]
    assert data["tool"]["setuptools"]["package-data"] == {"pkg": ["py.typed"]}


@pytest.mark.parametrize(
    "extra",
    [
        ORJSON_REQUIREMENT,
        WEBSOCKETS_REQUIREMENT,
        HTTPX_REQUIREMENT,
        SNIFFIO_REQUIREMENT,
        OPENTELEMETRY_REQUIREMENT,
        MCP_REQUIREMENT,
    ],
)
def test_each_extra_admits_the_version_the_tests_run_against(extra):
    name = extra.split(">", 1)[0]
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    (pinned,) = (
        requirement.removeprefix(f"{name}==") for requirement in test_extra if requirement.startswith(f"{name}==")
    )
    assert Version(pinned) in SpecifierSet(extra.removeprefix(name))


def test_a_pyproject_acp_codegen_did_not_write_is_refused(tmp_path):
    ensure_generated(tmp_path / "pyproject.toml")  # absent: fine
    (tmp_path / "pyproject.toml").write_text(render_pyproject(ir_of(FIXTURES / "rules.json", tmp_path), None))
    ensure_generated(tmp_path / "pyproject.toml")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    with pytest.raises(GenerationError, match=r"was not generated.*--no-pyproject"):
        ensure_generated(tmp_path / "pyproject.toml")


def test_generate_writes_the_pyproject_and_check_compares_it(project, cli):
    assert cli("generate") == (0, "")
    pyproject = project / "generated" / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text())["project"]["version"] == f"1.2.3+codegen.{__version__}"
    assert cli("check") == (0, "")

    pyproject.write_text(pyproject.read_text().replace('requires-python = ">=3.11"', 'requires-python = ">=3.12"'))
    code, error = cli("check")
    assert code == 1
    assert "changed: ../pyproject.toml" in error and '+requires-python = ">=3.11"' in error

    pyproject.unlink()
    code, error = cli("check")
    assert code == 1 and "missing: ../pyproject.toml" in error


def test_no_pyproject_writes_and_compares_none(project, cli):
    assert cli("generate", "--no-pyproject") == (0, "")
    assert not (project / "generated" / "pyproject.toml").exists()
    assert cli("check", "--no-pyproject") == (0, "")
    assert cli("check")[0] == 1


def test_generate_into_a_project_root_leaves_its_own_pyproject_alone(project, cli):
    before = (project / "pyproject.toml").read_text()
    code, error = cli("generate", "--out", ".")
    assert code == 2
    assert "pyproject.toml: exists and was not generated" in error
    assert (project / "pyproject.toml").read_text() == before
    assert not (project / "pkg").exists()
    assert cli("generate", "--out", ".", "--no-pyproject") == (0, "")
    assert (project / "pyproject.toml").read_text() == before


def test_update_schema_versions_the_pyproject_from_the_new_lock(project, cli, monkeypatch):
    def fetch(config, version, destination):
        schema = (FIXTURES / "rules.json").read_bytes()
        for relative, data in (("schema.json", schema), (vendor.LICENSE, b"License.\n")):
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            (destination / relative).write_bytes(data)
        entry = {"path": "schema.json", "sha256": hashlib.sha256(schema).hexdigest()}
        return {"package": config.npm_package, "version": version, "files": [entry]}

    monkeypatch.setattr(vendor, "fetch", fetch)
    assert cli("update-schema", "2.0.0")[0] == 0
    pyproject = tomllib.loads((project / "generated" / "pyproject.toml").read_text())
    assert pyproject["project"]["version"] == f"2.0.0+codegen.{__version__}"
    assert cli("check") == (0, "")
