""".githooks/commit-msg (`make hooks`): a commit subject of at most 72 characters, the detail in the body."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

HOOKS = ROOT / ".githooks"


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A fresh repository that uses this checkout's hooks, with one file staged."""
    subprocess.run(["git", "init", "--quiet", tmp_path], check=True)
    subprocess.run(["git", "-C", tmp_path, "config", "core.hooksPath", HOOKS], check=True)
    (tmp_path / "file").write_text("text\n")
    subprocess.run(["git", "-C", tmp_path, "add", "file"], check=True)
    return tmp_path


def commit(repository: Path, *message: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@a"}  # fmt: skip
    arguments = [argument for line in message for argument in ("-m", line)]
    return subprocess.run(
        ["git", "-C", repository, "commit", "--quiet", *arguments], capture_output=True, text=True, env=env, timeout=60
    )


def test_a_subject_of_72_characters_is_committed_with_a_long_body(repository):
    assert commit(repository, "s" * 72, "b" * 500).returncode == 0


def test_a_subject_of_73_characters_is_refused_with_its_length(repository):
    result = commit(repository, "s" * 73)
    assert result.returncode != 0 and "73 characters, at most 72" in result.stderr
    assert subprocess.run(["git", "-C", repository, "rev-parse", "HEAD"], capture_output=True).returncode != 0


def test_characters_are_counted_not_bytes(repository):
    assert commit(repository, "é" * 72).returncode == 0


def test_git_comments_and_leading_blank_lines_are_not_the_subject(tmp_path):
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("\n# " + "c" * 100 + "\nsubject\n\n" + "b" * 100 + "\n")
    assert subprocess.run([HOOKS / "commit-msg", message], timeout=60).returncode == 0
    message.write_text("# comment\n" + "s" * 80 + "\n")
    assert subprocess.run([HOOKS / "commit-msg", message], capture_output=True, timeout=60).returncode == 1


def test_make_hooks_enables_the_hooks():
    dry = subprocess.run(["make", "-n", "hooks"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "git config core.hooksPath .githooks" in dry
