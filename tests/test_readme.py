"""The README's Python examples run as written against the committed package, and type-check."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers import MYPY_CACHE, ROOT

EXAMPLES = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{n}" for n in range(len(EXAMPLES))])
def test_readme_example_runs(example):
    result = subprocess.run([sys.executable, "-c", example], cwd=ROOT / "generated", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_readme_examples_pass_mypy_strict(tmp_path):
    """What the README shows is typed usage, not only running code."""
    paths = []
    for number, example in enumerate(EXAMPLES):
        path = tmp_path / f"readme_example_{number}.py"
        path.write_text(example)
        paths.append(str(path))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), *paths],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT / "generated")},
    )
    assert result.returncode == 0, result.stdout
