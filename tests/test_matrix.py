"""The version matrix (.ci/matrix.py) and the suite's own guards: every admitted Python is tested
or reported, and no test hangs."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

_spec = importlib.util.spec_from_file_location("matrix", ROOT / ".ci/matrix.py")
assert _spec is not None and _spec.loader is not None
matrix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(matrix)


def pyenv_install(root: Path, version: str) -> Path:
    minor = version.rsplit(".", 1)[0]
    python = root / "versions" / version / "bin" / f"python{minor}"
    python.parent.mkdir(parents=True)
    python.write_text("")
    return python


def test_a_version_not_on_path_is_found_in_pyenv_newest_patch_first(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    pyenv_install(tmp_path, "3.12.1")
    newest = pyenv_install(tmp_path, "3.12.10")
    pyenv_install(tmp_path, "3.13.0")
    assert matrix.find_python("3.12") == newest


def test_a_version_the_machine_lacks_is_reported_not_failed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert matrix.find_python("3.14") is None
    assert matrix.main(["3.14"]) == 0
    assert "Python 3.14: not on this machine, not tested" in capsys.readouterr().out


def test_the_matrix_covers_every_version_the_package_admits_but_the_running_one():
    generated = tomllib.loads((ROOT / "generated/pyproject.toml").read_text())
    lowest = generated["project"]["requires-python"].removeprefix(">=")
    assert matrix.VERSIONS[0] == lowest
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in matrix.VERSIONS


def test_the_behaviour_tests_exist():
    for path in matrix.BEHAVIOUR_TESTS:
        assert (ROOT / path).exists(), path


def test_every_test_has_a_timeout(request: pytest.FixtureRequest):
    """pytest-timeout ends any test that hangs, sync ones included (pyproject.toml's `timeout`)."""
    assert request.config.pluginmanager.hasplugin("timeout")
    assert float(request.config.getini("timeout")) > 0
