"""The README's Python examples run as written against the committed package."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.helpers import ROOT

EXAMPLES = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{n}" for n in range(len(EXAMPLES))])
def test_readme_example_runs(example):
    result = subprocess.run(
        [sys.executable, "-c", example], cwd=ROOT / "generated", capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
