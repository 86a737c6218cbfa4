"""Run the generated packages' behaviour tests on every Python version they admit besides the
one `make test` runs the whole suite on.

Each version this machine has (`pythonX.Y` on PATH, or a pyenv install) gets its own virtual
environment, `.venv-X.Y`, with the test extra; a version it lacks is reported, never skipped
in silence. The exit status is 1 when a version's tests fail, 0 otherwise.

    python .ci/matrix.py [X.Y ...]
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ("3.11", "3.12", "3.13", "3.14")
"""What the generated package admits (`requires-python >= 3.11`); the one running this script
runs the whole suite (`make test`) and is left out."""
BEHAVIOUR_TESTS = (
    "tests/runtime",
    *(
        f"tests/package/test_{name}.py"
        for name in [
            "codec",
            "connection",
            "fuzz",
            "helpers",
            "json",
            "mcp",
            "pair",
            "router",
            "rpc",
            "session",
            "transports",
            "upserts",
        ]
    ),
)
"""What the generated package does at run time, where Python versions differ: its codec and JSON
parsing, connections (flow control, hostile lines, close), router, transports, helpers and
runtime modules. Left to the whole suite's run, to keep `make test` short: the generator's
output (names, the JSON Schema test suite, mypy), the round trip of every type drawn by
Hypothesis (test_roundtrip), the builders' typing (test_builders) and the hostile lines again
through an agent process (test_hostile_peer): a third of the time, repeating what runs here."""


def find_python(version: str) -> Path | None:
    """The interpreter of `version`: on PATH (a pyenv shim only answers for its active versions,
    so it is asked), else the newest pyenv install of it."""
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
        return Path(found)
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    installs = sorted(root.glob(f"{version}.*/bin/python{version}"), key=lambda path: _patch(path.parent.parent))
    return installs[-1] if installs else None


def _patch(install: Path) -> int:
    patch = install.name.rsplit(".", 1)[-1]
    return int(patch) if patch.isdigit() else -1


def environment(version: str, python: Path) -> Path:
    """`.venv-X.Y` with the generator and its test extra, installed again when their pins change."""
    venv = ROOT / f".venv-{version}"
    stamp = venv / ".installed"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = json.dumps([project["dependencies"], project["optional-dependencies"]["test"]])
    wanted = hashlib.sha256(pins.encode()).hexdigest()
    if not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([python, "-m", "venv", "--clear", venv], check=True)
        pip: list[str | Path] = [venv / "bin/python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True)
        stamp.write_text(wanted)
    return venv / "bin/python"


def run(version: str) -> bool | None:
    """Whether `version`'s behaviour tests pass; None when the machine lacks it."""
    python = find_python(version)
    if python is None:
        print(f"Python {version}: not on this machine, not tested (docs/guides/package.md says how to add it)")
        return None
    started = time.monotonic()
    tests: list[str | Path] = [
        environment(version, python),
        "-m",
        "pytest",
        "-n",
        "auto",
        "-p",
        "no:cacheprovider",
        *BEHAVIOUR_TESTS,
    ]
    result = subprocess.run(tests, cwd=ROOT)
    outcome = "passed" if result.returncode == 0 else "FAILED"
    print(f"Python {version} ({python}): behaviour tests {outcome} in {time.monotonic() - started:.0f} s")
    return result.returncode == 0


def main(versions: list[str]) -> int:
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    outcomes = [run(version) for version in versions or VERSIONS if version != running]
    return 1 if False in outcomes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
