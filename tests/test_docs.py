"""The code samples of README.md and docs/ run as written against the committed package, and
type-check; the convention is in docs/guides/layout.md, "Code samples"."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.helpers import MYPY_CACHE, ROOT

RUN = "python"
"""A sample that runs in the tests and passes mypy --strict."""
SHOWN = "py"
"""A Python sample shown but not run (a fragment, a command's file, something that needs a network):
it must compile."""
OTHER = frozenset({"sh", "toml", "yaml", "json", "text", "markdown"})
"""Fences of other languages, shown as they are."""

FENCE = re.compile(r"(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)")
TITLE = re.compile(r'\btitle="(?P<title>[^"]+)"')


@dataclass(frozen=True)
class Sample:
    """One fenced code block of a page."""

    page: Path
    line: int  # of the opening fence, from 1
    language: str  # the first word of the fence's info string ("" when it has none)
    title: str | None  # title="agent.py": the file name the sample runs as
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def samples_of(page: Path, text: str) -> list[Sample]:
    """The fenced code blocks of a Markdown text, indented ones (in list items) dedented."""
    samples: list[Sample] = []
    lines = text.split("\n")
    number = 0
    while number < len(lines):
        opening = FENCE.fullmatch(lines[number])
        number += 1
        if opening is None:
            continue
        opened_at = number
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].strip()
        body: list[str] = []
        while number < len(lines) and not re.fullmatch(rf" *{re.escape(fence[0])}{{{len(fence)},}} *", lines[number]):
            body.append(lines[number].removeprefix(indent))
            number += 1
        if number == len(lines):
            raise ValueError(f"{page}:{opened_at}: this code block is never closed")
        number += 1
        title = TITLE.search(info)
        language = re.split(r"[\s{]", info, maxsplit=1)[0]
        samples.append(Sample(page, opened_at, language, title["title"] if title else None, "\n".join(body) + "\n"))
    return samples


PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
SAMPLES = [sample for page in PAGES for sample in samples_of(page, page.read_text())]
RUNNABLE = [sample for sample in SAMPLES if sample.language == RUN]


def test_samples_are_found_in_indented_fences_with_their_titles():
    text = 'x\n```python title="agent.py"\nprint(1)\n```\n- item\n\n    ```py\n    if x:\n        y\n    ```\n````text\n```\n````\n'
    found = [(s.line, s.language, s.title, s.code) for s in samples_of(ROOT / "page.md", text)]
    assert found == [
        (2, "python", "agent.py", "print(1)\n"),
        (7, "py", None, "if x:\n    y\n"),
        (11, "text", None, "```\n"),
    ]
    with pytest.raises(ValueError, match="never closed"):
        samples_of(ROOT / "page.md", "```python\nprint(1)\n")


def test_the_readme_stays_a_front_door():
    """What it is, the two commands, an agent, a client, vendoring, links; the rest is in docs/."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < 8 * 1024, "move what the README grew into a guide under docs/guides/"
    assert readme.index("make generate") < readme.index("```python"), "the two commands come first"
    lines = {s.title: s.code.count("\n") for s in samples_of(ROOT / "README.md", readme) if s.language == RUN}
    assert lines["agent.py"] <= 23 and lines["client.py"] <= 21, f"the samples grew: {lines}"


def test_the_readme_agent_and_client_run():
    readme = {sample.title for sample in RUNNABLE if sample.page.name == "README.md"}
    assert {"agent.py", "client.py"} <= readme


def test_every_code_block_names_a_known_language():
    unknown = [f"{s.where}: {s.language or 'no language'}" for s in SAMPLES if s.language not in {RUN, SHOWN, *OTHER}]
    assert not unknown, f"name the language of each fence ({RUN} runs, {SHOWN} is shown only): {unknown}"


def test_titles_are_unique_on_each_page():
    titled = [(s.page, s.title) for s in RUNNABLE if s.title is not None]
    assert len(titled) == len(set(titled)), "two samples of one page run as the same file"


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.language == SHOWN], ids=lambda s: s.where)
def test_shown_sample_compiles(sample):
    compile(sample.code, sample.where, "exec")


@pytest.mark.parametrize("sample", RUNNABLE, ids=lambda s: s.where)
def test_sample_runs(sample, tmp_path):
    """Each runs as its own file, beside the titled samples of its page (a client starts agent.py)."""
    for other in RUNNABLE:
        if other.page == sample.page and other.title is not None:
            (tmp_path / other.title).write_text(other.code)
    path = tmp_path / (sample.title or "sample.py")
    path.write_text(sample.code)
    result = subprocess.run(
        [sys.executable, str(path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "generated")},
        input="",  # a pipe at its end: a stdio agent reads no message and stops
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"{sample.where}:\n{result.stderr}"


def test_samples_pass_mypy_strict(tmp_path):
    """What the docs show is typed usage, not only running code."""
    samples = {}
    for sample in RUNNABLE:
        path = tmp_path / (re.sub(r"\W", "_", sample.where) + ".py")
        path.write_text(sample.code)
        samples[path.name] = sample
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), *map(str, tmp_path.glob("*.py"))],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT / "generated")},
    )

    def on_the_page(found: re.Match[str]) -> str:  # file:line of the sample -> page:line
        sample = samples[found["name"]]  # (mypy may name a file by the path its cache recorded)
        return f"{sample.page.relative_to(ROOT).as_posix()}:{sample.line + int(found['line'])}"

    assert result.returncode == 0, re.sub(r"\S*?(?P<name>\w+\.py):(?P<line>\d+)", on_the_page, result.stdout)
