"""What users install, offline, into fresh virtual environments that see nothing
of this checkout: the generator as a wheel (templates included), alone with its two
dependencies, and the generated directory as a dependency; and the pre-commit hook
that runs the drift check."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from generator import __version__
from tests.support.helpers import FIXTURES, ROOT, copy_tracked

# Offline: no index, no build isolation (setuptools comes from this environment), no dependencies.
PIP = (sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input")
OFFLINE = ("--no-index", "--no-deps", "--no-build-isolation")
# The [tool.acp-codegen] table a project without the generator's own settings needs.


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command without this checkout or PYTHONPATH in reach; fail with its output."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run([str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


def fresh_venv(path: Path) -> Path:
    """A venv without pip (pip runs from this environment with --python); its python."""
    run(sys.executable, "-m", "venv", "--without-pip", path, cwd=path.parent)
    return path / "bin" / "python"


def see_this_environment(python: Path) -> Path:
    """Put this environment's site-packages (pinned dependencies, setuptools) on
    the path of `python`'s venv; the .pth file that does it."""
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    pth = Path(run(python, "-c", code, cwd=python.parent).stdout.strip()) / "this_environment.pth"
    pth.write_text(sysconfig.get_path("purelib") + "\n")
    return pth


def copy_distributions(names: list[str], python: Path) -> set[str]:
    """Copy the distributions `names` and what they require, as this environment has them
    installed, into the site-packages of `python`'s venv (offline: no index, no wheels
    needed); the names copied."""
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(run(python, "-c", code, cwd=python.parent).stdout.strip())
    copied: set[str] = set()
    pending = list(names)
    while pending:
        distribution = importlib.metadata.distribution(pending.pop())
        name = distribution.metadata["Name"].lower()
        if name in copied:
            continue
        copied.add(name)
        for file in distribution.files or ():
            source = Path(str(distribution.locate_file(file))).resolve()
            target = (site / file).resolve()
            if target.is_relative_to(site) and "__pycache__" not in file.parts and source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        for line in distribution.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return copied


def install(python: Path, *requirements: str | Path, cwd: Path) -> None:
    run(*PIP, "--python", python, "install", "--no-compile", *OFFLINE, *requirements, cwd=cwd)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generator's wheel, built from a copy of the sources (no build/ leftovers)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    copy_tracked(("generator", "templates", "pyproject.toml"), source)
    run(*PIP, "wheel", *OFFLINE, "--wheel-dir", work / "dist", source, cwd=work)
    (built,) = (work / "dist").glob("acp_codegen-*.whl")
    return built


def test_the_wheel_carries_every_template(wheel):
    templates = ROOT / "templates"
    expected = {f"generator/templates/{path.relative_to(templates).as_posix()}" for path in templates.rglob("*.jinja")}
    assert len(expected) > 10
    assert expected <= set(zipfile.ZipFile(wheel).namelist())
    assert "generator/official.toml" in zipfile.ZipFile(wheel).namelist()  # the official schema's default rules


def test_an_installed_generator_generates_in_another_directory(wheel, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    see_this_environment(python)
    install(python, wheel, cwd=tmp_path)
    templates = run(
        python, "-c", "from generator.emit.render import TEMPLATES; print(TEMPLATES)", cwd=tmp_path
    ).stdout.strip()
    assert Path(templates).is_relative_to(tmp_path / "venv") and Path(templates, "models.py.jinja").is_file()

    work = tmp_path / "work"  # no pyproject.toml here or above: the command line names everything
    work.mkdir()
    generate = (tmp_path / "venv" / "bin" / "acp-codegen", "generate", "--schema", FIXTURES / "rules.json")
    run(*generate, "--out", "out", "--package", "rules_copy", cwd=work)
    imported = run(python, "-c", "import rules_copy; print(rules_copy.__file__)", cwd=work / "out").stdout
    assert Path(imported.strip()) == work / "out" / "rules_copy" / "__init__.py"
    # the official schema gets its upsert rules from the installed generator, with no configuration
    ir = run(
        tmp_path / "venv" / "bin" / "acp-codegen",
        "ir",
        "--schema",
        ROOT / "schema/v2/schema.unstable.json",
        "--package",
        "acp",
        cwd=work,
    ).stdout
    upserts = {named["name"]: named["upsert"] for named in json.loads(ir)["types"] if named.get("upsert")}
    assert upserts["ToolCallUpdate"]["identity"] == ["tool_call_id"]


def test_the_generator_alone_with_jinja2_and_black_generates_an_importable_package(wheel, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    copied = copy_distributions(["jinja2", "black"], python)
    assert not {"datamodel-code-generator", "pydantic", "pytest"} & copied
    install(python, wheel, cwd=tmp_path)
    run(*PIP, "--python", python, "check", cwd=tmp_path)  # every dependency the wheel declares is there
    work = tmp_path / "work"
    work.mkdir()
    generate = (tmp_path / "venv" / "bin" / "acp-codegen", "generate", "--schema", FIXTURES / "session.json")
    run(*generate, "--out", "out", "--package", "alone", cwd=work)  # with its cache (.cache/ in work)
    assert (work / ".cache").is_dir()
    code = "import alone; print(alone.__file__, alone.decode.__module__)"
    location, state = run(python, "-E", "-s", "-c", code, cwd=work / "out").stdout.split()
    assert Path(location) == work / "out" / "alone" / "__init__.py" and state == "alone._decode"


def test_pip_install_of_the_generated_directory_gives_a_typed_stdlib_only_dependency(tmp_path):
    shutil.copytree(ROOT / "generated", tmp_path / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    python = fresh_venv(tmp_path / "venv")
    pth = see_this_environment(python)  # setuptools, for the build without isolation
    install(python, "./generated", cwd=tmp_path)
    pth.unlink()  # from here on: the standard library and what was installed
    code = (
        "import sys, importlib.metadata as m, importlib.resources as r; import acp_v2; "
        "print(acp_v2.__file__); print(m.version('acp-v2')); print(r.files('acp_v2').joinpath('py.typed').is_file()); "
        "print(sorted({n.partition('.')[0] for n in sys.modules} - set(sys.stdlib_module_names) - {'acp_v2', '__main__'}))"
    )
    location, version, typed, foreign = run(python, "-I", "-c", code, cwd=tmp_path).stdout.splitlines()
    assert Path(location).is_relative_to(tmp_path / "venv")
    release = json.loads((ROOT / "schema" / "schema.lock.json").read_text())["version"]
    assert version == f"{release}+codegen.{__version__}"
    assert typed == "True"
    assert foreign == "['acp_runtime']"  # `import acp_v2` imports the runtime it shares, no acp_v1
    both = "import acp_v1, acp_v2, importlib.resources as r; print(acp_v1.__file__, r.files('acp_v1').joinpath('py.typed').is_file())"
    location, typed = run(python, "-I", "-c", both, cwd=tmp_path).stdout.split()
    assert Path(location).is_relative_to(tmp_path / "venv") and typed == "True"  # one distribution, both packages
    shared = (
        "import acp_v1, acp_v2, acp_runtime, importlib.resources as r; "
        "print(acp_runtime.__file__, r.files('acp_runtime').joinpath('py.typed').is_file(), "
        "acp_v1.UNDEFINED is acp_v2.UNDEFINED, acp_v1.ConnectionClosed is acp_v2.ConnectionClosed)"
    )
    location, *flags = run(python, "-I", "-c", shared, cwd=tmp_path).stdout.split()
    assert Path(location).is_relative_to(tmp_path / "venv") and flags == ["True", "True", "True"]  # and the runtime


def test_the_pre_commit_hook_runs_the_drift_check_when_an_input_changes():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    script, command = hook["entry"].split()
    assert script in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert (command, hook["language"], hook["pass_filenames"]) == ("check", "python", False)
    watched = re.compile(hook["files"])  # pre-commit searches each staged path
    inputs = ("schema/schema.lock.json", "templates/models.py.jinja", "generator/emit/render.py", "pyproject.toml")
    assert all(watched.search(path) for path in (*inputs, "generated/acp_v2/models.py", "generated/pyproject.toml"))
    assert not any(watched.search(path) for path in ("README.md", "tests/test_cli.py", "examples/pyproject.toml"))
