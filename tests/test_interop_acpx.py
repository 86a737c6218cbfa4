"""Live tests against acpx 0.19.1 (npm `acpx`, the headless ACP client people script agents with;
`make test` installs it in interop/node_modules beside the TypeScript SDK) driving
examples/echo_agent.py as a person runs it: `acpx --agent "python echo_agent.py ..." ...`, v1 over
stdio. acpx keeps its sessions under `$HOME/.acpx` and runs each saved session's agent under a
detached "queue owner" that lives `--ttl` seconds after its last prompt: each test gives acpx a
home of its own and a TTL of 1 s, and ends only when every process acpx and the agent started
has exited.

What is checked is what acpx prints and exits with, what the agent recorded of each session
(`--sessions DIR`: one JSON-lines file per session, every update it sent) and the wire as acpx
journals it (`$HOME/.acpx/sessions/ID.stream.ndjson`). The four things a client does that the
example agent has to get right with a real one:
- a prompt (`acpx --approve-all exec`): the echo streamed, the tool call completed, `end_turn`;
- a denied `execute`: the echo's tool call is of kind `execute`, which the permission policy
  `{"autoDeny": ["execute"]}` refuses even under `--approve-all` (the permission request carries
  the call's kind and title: acpx matches rules on them);
- a cancel (`acpx cancel` from another process while a turn streams): `session/cancel`, the tool
  call failed, the turn ends `cancelled`;
- a reloaded session: acpx answers every prompt with a new agent process that reloads the saved
  session with `session/load`; the agent finds it in its `--sessions` folder (before, it answered
  -32002 and acpx silently started a fresh session)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.test_examples import ENV, EXAMPLES
from tests.test_interop import INTEROP, node  # noqa: F401 (node: the fixture)

ACPX_VERSION = "0.19.1"
ACPX = INTEROP / "node_modules" / "acpx"
DENY_EXECUTE = '{"autoDeny": ["execute"]}'
PERMISSION_DENIED = 5  # acpx's exit code when every permission request of the turn was refused
MARK = "ACP_CODEGEN_ACPX_TEST"  # in the environment of every process a test starts, to find them


@dataclass
class Acpx:
    """acpx with a home, a working directory and an agent of one test."""

    node: str
    root: Path  # the test's folder: home/ (acpx's), work/ (the sessions' cwd), sessions/ (the agent's)
    pace: float = 0.2  # the agent's seconds before each word

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    def agent(self) -> str:
        """The agent command acpx runs (`--agent`: one shell-quoted string)."""
        echo = [sys.executable, str(EXAMPLES / "echo_agent.py"), "--sessions", str(self.sessions)]
        return shlex.join([*echo, "--pace", str(self.pace)])

    def command(self, *arguments: str) -> list[str]:
        cli = ACPX / json.loads((ACPX / "package.json").read_text())["bin"]["acpx"]
        work = self.root / "work"
        return [self.node, str(cli), "--agent", self.agent(), "--cwd", str(work), "--ttl", "1", *arguments]

    def env(self) -> dict[str, str]:
        home = self.root / "home"
        return {**os.environ, **ENV, "HOME": str(home), MARK: str(self.root)}

    def run(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*arguments), cwd=self.root / "work", env=self.env(), capture_output=True, text=True, timeout=60
        )

    def start(self, *arguments: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(*arguments),
            cwd=self.root / "work",
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def processes(self) -> list[int]:
        """The processes running with this test's mark: acpx, its queue owners, the agents."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            except OSError:  # gone meanwhile, or not ours to read
                continue
            if f"{MARK}={self.root}".encode() in environ.split(b"\0") and state != "Z":
                found.append(int(entry.name))
        return found

    def until_no_process(self, seconds: float = 20) -> list[int]:
        """Wait until no process of the test runs (the queue owner's TTL is 1 s); those left."""
        deadline = time.monotonic() + seconds
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def recorded(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """What the agent recorded of a session (the only one, without `session_id`): every update it sent."""
        files = sorted(self.sessions.glob(f"{session_id or '*'}.jsonl"))
        assert len(files) == 1, files
        return [json.loads(line) for line in files[0].read_text().splitlines()]

    def journal(self, session_id: str) -> list[dict[str, Any]]:
        """The JSON-RPC messages between acpx and the agent in a saved session, as acpx journals them."""
        path = self.root / "home" / ".acpx" / "sessions" / f"{session_id}.stream.ndjson"
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        return [line for line in lines if line.get("jsonrpc") == "2.0"]


@pytest.fixture
def acpx(node: str, tmp_path: Path) -> Iterator[Acpx]:  # noqa: F811
    manifest = ACPX / "package.json"
    if not manifest.is_file():
        pytest.fail("acpx is not in interop/node_modules: `make test` (or `make peers`) installs it")
    version = json.loads(manifest.read_text())["version"]
    assert version == ACPX_VERSION, f"interop/node_modules has acpx {version}, not {ACPX_VERSION}"
    for folder in ("home", "work", "sessions"):
        (tmp_path / folder).mkdir()
    peer = Acpx(node, tmp_path)
    yield peer
    left = peer.until_no_process()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes acpx or the agent started outlived the test: {left}"


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [update["sessionUpdate"] for update in updates]


def test_acpx_runs_a_prompt_through_the_example_agent(acpx):
    result = acpx.run("--approve-all", "exec", "hello from acpx")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "hello from acpx" in lines  # the echo, streamed word by word
    assert lines[lines.index("[tool] Echo (completed)") + 1] == "  kind: execute"
    assert lines[-1] == "[done] end_turn"
    recorded = acpx.recorded()
    assert kinds(recorded) == ["user_message_chunk", "tool_call", *["agent_message_chunk"] * 3, "tool_call_update"]
    assert [update["content"]["text"] for update in recorded[2:5]] == ["hello", " from", " acpx"]
    assert recorded[-1]["status"] == "completed"


def test_acpx_denies_the_example_agents_execute_call_by_its_permission_policy(acpx):
    """`--approve-all` approves the echo (test above); a policy rule on the kind comes first."""
    result = acpx.run("--approve-all", "--permission-policy", DENY_EXECUTE, "exec", "echo nothing")
    assert result.returncode == PERMISSION_DENIED, result.stderr
    lines = result.stdout.splitlines()
    assert "echo nothing" not in lines  # nothing echoed
    assert lines[lines.index("[tool] Echo (failed)") + 1] == "  kind: execute"
    assert lines[-1] == "[done] end_turn"
    recorded = acpx.recorded()
    assert kinds(recorded) == ["user_message_chunk", "tool_call", "tool_call_update"]
    assert (recorded[1]["kind"], recorded[2]["status"]) == ("execute", "failed")


def test_acpx_cancels_a_turn_of_the_example_agent_from_another_process(acpx):
    created = acpx.run("sessions", "new")
    assert created.returncode == 0, created.stderr
    session_id = created.stdout.strip()
    words = " ".join(f"word{n}" for n in range(40))  # 8 s at the agent's pace
    with acpx.start("--approve-all", words) as turn:
        deadline = time.monotonic() + 30
        while "agent_message_chunk" not in kinds(acpx.recorded(session_id)):  # the echo streams
            assert turn.poll() is None and time.monotonic() < deadline, turn.communicate()
            time.sleep(0.1)
        cancel = acpx.run("cancel")
        assert (cancel.returncode, cancel.stdout.strip()) == (0, "cancel requested"), cancel.stderr
        out, err = turn.communicate(timeout=30)
    assert turn.returncode == 0, err
    lines = out.splitlines()
    assert "[tool] Echo (failed)" in lines and lines[-1] == "[done] cancelled"
    recorded = acpx.recorded(session_id)
    assert recorded[-1]["status"] == "failed"  # v1 has no `cancelled` tool call status
    assert 1 <= kinds(recorded).count("agent_message_chunk") < 40
    journal = [
        message.get("method") or message.get("result", {}).get("stopReason") for message in acpx.journal(session_id)
    ]
    assert journal[journal.index("session/cancel") :][-1] == "cancelled"  # the prompt's answer, after the cancel


def test_acpx_reloads_a_session_of_the_example_agent_in_a_new_process(acpx):
    """`sessions new`, then two prompts, each run by a new agent process (the owner before it
    has ended): each reloads the session the first process made."""
    created = acpx.run("sessions", "new")
    assert created.returncode == 0, created.stderr
    session_id = created.stdout.strip()
    first = acpx.run("--approve-all", "first words")
    assert not acpx.until_no_process(), "acpx's queue owner outlived its TTL"
    second = acpx.run("--approve-all", "second words")
    for result, text in ((first, "first words"), (second, "second words")):
        assert result.returncode == 0, result.stderr
        assert text in result.stdout.splitlines() and result.stdout.splitlines()[-1] == "[done] end_turn"
        assert "fresh session" not in result.stderr, result.stderr  # acpx's words when session/load fails
    journal = acpx.journal(session_id)
    methods = [message.get("method") for message in journal]
    assert "session/new" not in methods and methods.count("session/load") == 2
    for at, message in enumerate(journal):
        if message.get("method") == "session/load":
            answer = next(later for later in journal[at:] if "method" not in later and later["id"] == message["id"])
            assert answer["result"] == {}, answer
    recorded = acpx.recorded(session_id)  # one session, both turns: no other file
    prompts = [update["content"]["text"] for update in recorded if update["sessionUpdate"] == "user_message_chunk"]
    assert prompts == ["first words", "second words"]
