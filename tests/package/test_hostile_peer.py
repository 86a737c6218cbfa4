"""The real connection attacked over real pipes: tests/support/hostile_agent.py (acp_v2's `run_agent`)
runs as a child process, and each test is its hostile peer. Every exchange is bounded in time
(`BOUND`), and each test checks that the agent still answers a valid request afterwards (or,
for a peer that stops reading or dies, that it exits on its own), that every line it writes is
strict UTF-8 JSON-RPC, that its stderr has no "Task exception was never retrieved", and that
its peak RSS (`VmHWM`) grew less than the bound the test states."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from tests.support.helpers import ROOT, Stepped, import_package
from tests.support.hostile_lines import LINES
from tests.support.strategies import hostile_lines

acp = import_package(ROOT / "generated", "acp_v2")
AGENT = ROOT / "tests" / "support" / "hostile_agent.py"
BOUND = 30.0
"""Seconds any one exchange with the agent may take: a bound, never a speed target."""
MiB = 2**20
SMALL = {"max_message_bytes": MiB}  # the drawn lines' agent: giant lines are cheap to make
HYPOTHESIS = settings(max_examples=100, deadline=None, database=None, derandomize=True)
INIT = {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}}


def status(pid: int, field: str) -> int:
    """A `VmRSS`/`VmHWM` line of /proc/PID/status, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for process {pid}")


class Target:
    """The agent process, and this test as its raw peer over its stdin and stdout."""

    def __init__(
        self, process: asyncio.subprocess.Process, output: asyncio.StreamReader, pipe: asyncio.ReadTransport, log: Path
    ) -> None:
        self.process = process
        self.log = log
        self.pid = process.pid
        assert process.stdin is not None
        self.stdin, self.stdout = process.stdin, output
        self.output_pipe = pipe  # `pause_reading()`: this peer stops reading (the pipe fills up)
        self.next_id = 0
        self.baseline = self.peak = 0

    async def write(self, data: bytes) -> None:
        self.stdin.write(data)
        await asyncio.wait_for(self.stdin.drain(), BOUND)

    async def read(self) -> Any:
        """The agent's next line, which must be a JSON-RPC response in strict UTF-8."""
        line = await asyncio.wait_for(self.stdout.readline(), BOUND)
        assert line.endswith(b"\n"), f"the agent's output ended: {line[:200]!r}"
        message = json.loads(line.decode("utf-8"))
        assert type(message) is dict and message.get("jsonrpc") == "2.0", message
        assert ("result" in message) != ("error" in message), message
        if "error" in message:
            assert type(message["error"].get("code")) is int and type(message["error"].get("message")) is str
        return message

    async def ask(self, method: str, params: Any, prefix: bytes = b"") -> tuple[Any, list[Any]]:
        """Send `prefix` then a request; its answer and the answers read before it."""
        self.next_id += 1
        request_id = f"probe-{self.next_id}"
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.write(prefix + json.dumps(request).encode() + b"\n")
        before = []
        while (answer := await self.read()).get("id") != request_id:
            before.append(answer)
        return answer, before

    async def answers(self, prefix: bytes = b"") -> list[Any]:
        """Send `prefix`, then check the agent answers a valid request; what `prefix` got."""
        answer, before = await self.ask("session/new", {"cwd": "/w"}, prefix)
        assert answer["result"] == {"sessionId": "s1"}, answer
        assert self.process.returncode is None
        return before

    def growth(self) -> int:
        """How far the agent's peak RSS rose above its RSS once initialized."""
        self.peak = status(self.pid, "VmHWM") - self.baseline
        return self.peak

    async def exits(self) -> int:
        """Wait for the agent to exit on its own (noting its peak RSS until then); its exit code."""
        waiting = asyncio.ensure_future(self.process.wait())
        with contextlib.suppress(OSError, AssertionError):  # /proc/PID goes when it is reaped
            while not waiting.done():
                self.growth()
                await asyncio.wait([waiting], timeout=0.05)
        return await asyncio.wait_for(waiting, BOUND)

    def check_log(self) -> None:
        text = self.log.read_text(errors="replace")
        assert "never retrieved" not in text, text[-2000:]


@contextlib.asynccontextmanager
async def target(tmp_path: Path, **limits: Any) -> AsyncIterator[Target]:
    """The agent with `limits`, initialized; it is stopped (then killed) on exit."""
    log = tmp_path / f"agent-{len(list(tmp_path.iterdir()))}.log"
    # The agent's stdout is a pipe this test reads through a transport of its own, which it can
    # pause: a subprocess's own reader would buffer whatever the agent writes.
    output_fd, agent_output = os.pipe()
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(AGENT),
            stdin=asyncio.subprocess.PIPE,
            stdout=agent_output,
            stderr=stderr,
            env={**os.environ, "HOSTILE_LIMITS": json.dumps(limits)},
        )
    os.close(agent_output)
    output = asyncio.StreamReader(limit=64 * MiB)
    pipe, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(output), os.fdopen(output_fd, "rb", 0)
    )
    agent = Target(process, output, pipe, log)
    try:
        answer, _ = await agent.ask("initialize", INIT)
        assert answer["result"]["protocolVersion"] == 2
        agent.baseline = status(agent.pid, "VmRSS")
        yield agent
        agent.check_log()
    finally:
        pipe.close()
        if process.returncode is None:
            agent.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), BOUND)
            except TimeoutError:
                process.kill()
                await process.wait()
                raise AssertionError("the agent did not exit when its stdin closed") from None


pytestmark = pytest.mark.async_timeout(120.0)


# --- lines -------------------------------------------------------------------------------


async def test_each_known_hostile_line_gets_its_answer_over_a_real_pipe(tmp_path):
    """The 71 lines of tests/support/hostile_lines.py, one after the other to one agent process."""
    orjson = importlib.util.find_spec("orjson") is not None  # the agent parses with it when it is there
    async with target(tmp_path) as agent:
        for hostile in LINES:
            answered = await agent.answers(hostile.line + b"\n")
            got = [(answer["id"], answer["error"]["code"] if "error" in answer else None) for answer in answered]
            expected = hostile.expected(orjson)
            assert got == expected, hostile.name
        assert agent.growth() < 64 * MiB, f"{agent.growth() / MiB:.1f} MiB"


def test_drawn_hostile_lines_never_break_the_agent(tmp_path):
    """Hypothesis-drawn lines (every JSON type in every envelope member, lone surrogates, deep
    nesting, garbage bytes, tiny lines, lines around the 1 MiB limit): each gets at most one
    answer, a JSON-RPC response, and the agent answers the next request."""
    # Hypothesis calls a plain function per line: the agent and the loop live across the calls.
    loop = asyncio.new_event_loop()
    agent_context = target(tmp_path, **SMALL)
    agent = loop.run_until_complete(asyncio.wait_for(agent_context.__aenter__(), BOUND))
    error: BaseException | None = None
    try:

        @HYPOTHESIS
        @given(line=hostile_lines(SMALL["max_message_bytes"]))
        def one_line(line: bytes) -> None:
            answered = loop.run_until_complete(asyncio.wait_for(agent.answers(line + b"\n"), BOUND))
            assert len(answered) <= 1, answered

        one_line()
        assert agent.growth() < 48 * MiB, f"{agent.growth() / MiB:.1f} MiB"
    except BaseException as failure:
        error = failure
        raise
    finally:
        exit_info = (None, None, None) if error is None else (type(error), error, error.__traceback__)
        loop.run_until_complete(asyncio.wait_for(agent_context.__aexit__(*exit_info), BOUND))
        loop.close()


async def test_a_line_of_100_mb_and_an_endless_line_hold_about_one_message_of_memory(tmp_path):
    """At the default 32 MiB limit: a 100 MB line is answered -32600 (naming its request, whose
    id its beginning tells) and skipped, 300 MB without a newline are dropped as they come; the
    agent's peak RSS grows by less than 1.5 times the limit (reading with `readuntil`, it held
    twice the limit and more)."""
    async with target(tmp_path) as agent:
        chunk = b"x" * MiB
        await agent.write(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":"')
        for _ in range(100):
            await agent.write(chunk)
        answered = await agent.answers(b'"}\n')
        assert [(answer["id"], answer["error"]["code"]) for answer in answered] == [(1, -32600)]
        for _ in range(300):
            await agent.write(chunk)
        answered = await agent.answers(b"\n")
        assert [(answer["id"], answer["error"]["code"]) for answer in answered] == [(None, -32600)]
        limit = acp.DEFAULT_LIMITS.max_message_bytes
        assert agent.growth() < 1.5 * limit, f"{agent.growth() / MiB:.1f} MiB"


# --- slow handlers, floods, peers that stop reading or die --------------------------------


async def test_slow_handlers_do_not_stop_the_agent_answering(tmp_path):
    """A prompt that sleeps and a notification handler that sleeps: a request sent after both
    is answered before the prompt is."""
    async with target(tmp_path) as agent:
        prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "sleep 2"}]}
        slow = {"jsonrpc": "2.0", "id": "slow", "method": "session/prompt", "params": prompt}
        sleep = {"jsonrpc": "2.0", "method": "_test/sleep", "params": {"seconds": 2}}
        answered = await agent.answers(json.dumps(slow).encode() + b"\n" + json.dumps(sleep).encode() + b"\n")
        assert answered == []  # the slow prompt is still running
        assert (await agent.read())["id"] == "slow"


async def test_a_flood_of_notifications_to_a_stuck_handler_pushes_back_and_keeps_memory_flat(tmp_path):
    """20,000 notifications behind one whose handler sleeps 3 s: the agent stops reading at
    max_queued_notifications, the pipe pushes back on this peer, RSS grows less than 32 MiB."""
    async with target(tmp_path) as agent:
        note = json.dumps({"jsonrpc": "2.0", "method": "_test/sleep", "params": {"seconds": 0}}).encode() + b"\n"
        first = json.dumps({"jsonrpc": "2.0", "method": "_test/sleep", "params": {"seconds": 3}}).encode() + b"\n"
        writing = asyncio.create_task(agent.write(first + note * 20_000))
        done, _ = await asyncio.wait([writing], timeout=1.5)
        assert not done, "the agent read the whole flood while its handler was stuck"
        await writing
        assert await agent.answers() == []
        assert agent.growth() < 32 * MiB, f"{agent.growth() / MiB:.1f} MiB"


async def test_a_peer_that_pauses_reading_gets_every_answer_and_memory_stays_bounded(tmp_path):
    """4,000 requests of 64 KiB answers while this peer reads nothing for two seconds (less than
    the output stall): every answer arrives once it reads. What the agent holds meanwhile is
    bounded by its limits, not by how much the peer asks: max_concurrent_requests (64 here)
    answers being written, each held as its result and its JSON, and max_buffered_bytes (4 MiB),
    with the allocator's fragmentation around them. Peak RSS grows by 69-85 MiB here for 2,000
    requests and the same for 4,000 (how much depends on the scheduling of both processes, so the
    bound leaves room); serving all of them at once (max_concurrent_requests removed) grows it by
    270 MiB for 2,000 and 545 MiB for 4,000."""

    requests_count = 4000
    limits = {"max_buffered_bytes": 4 * MiB, "max_output_stall": 20.0, "max_concurrent_requests": 64}
    async with target(tmp_path, **limits) as agent:
        requests = b"".join(
            json.dumps({"jsonrpc": "2.0", "id": n, "method": "_test/big", "params": {"bytes": 65536}}).encode() + b"\n"
            for n in range(requests_count)
        )
        agent.output_pipe.pause_reading()
        writing = asyncio.create_task(agent.write(requests))
        await asyncio.sleep(2.0)
        agent.output_pipe.resume_reading()
        ids = set()
        while len(ids) < requests_count:
            answer = await agent.read()
            assert len(answer["result"]) == 65536
            ids.add(answer["id"])
        await writing
        assert ids == set(range(requests_count))
        assert await agent.answers() == []
        assert agent.growth() < 128 * MiB, f"{agent.growth() / MiB:.1f} MiB"


async def test_a_peer_that_stops_reading_for_good_is_dropped_after_the_output_stall(tmp_path):
    """The agent fails the connection with a clear error after max_output_stall (1 s here) and
    exits on its own, its RSS bounded by max_buffered_bytes and what one answer holds."""
    async with target(tmp_path, max_buffered_bytes=MiB, max_output_stall=1.0) as agent:
        agent.output_pipe.pause_reading()
        request = {"jsonrpc": "2.0", "id": 1, "method": "_test/big", "params": {"bytes": 4 * MiB}}
        for n in range(8):
            await agent.write(json.dumps({**request, "id": n}).encode() + b"\n")
        assert await agent.exits() == 0
        assert "the peer read none of the output for 1.0 s" in agent.log.read_text()
        assert 0 < agent.peak < 96 * MiB, f"{agent.peak / MiB:.1f} MiB"


@pytest.mark.parametrize("how", ["stdin-closed", "both-closed"])
async def test_a_peer_that_dies_mid_line_leaves_the_agent_to_exit_cleanly(tmp_path, how):
    """Half a line, then the peer goes: its stdin ends (the half line is answered -32700), or
    both pipes close (the answer meets a broken pipe). The agent exits 0 on its own."""
    async with target(tmp_path) as agent:
        await agent.write(b'{"jsonrpc":"2.0","id":1,"method":"session/ne')
        if how != "stdin-closed":
            agent.output_pipe.close()
        agent.stdin.close()
        if how == "stdin-closed":
            assert (await agent.read())["error"]["code"] == -32700
        assert await agent.exits() == 0


# --- cancellation of the owner at every await ----------------------------------------------


def children() -> list[str]:
    """This process's child processes (zombies too), as `pid state` strings."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid():
                found.append(f"{stat.parent.name} {fields[0]}")
    return found


async def own_a_session() -> None:
    """An owner's whole life with an agent: spawn, initialize, a session, a prompt, exit."""
    client = acp.Client()
    env = {**os.environ, "HOSTILE_LINGER": "60"}  # only SIGKILL ends it: a cancelled owner must kill it
    async with acp.spawn_agent_process(client, sys.executable, str(AGENT), env=env, timeout=0.3) as (conn, _):
        await conn.initialize(acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="o", version="1")))
        await conn.session_new(acp.NewSessionRequest(cwd="/w"))
        prompt = [acp.ContentBlockText(text="sleep 0.05")]
        await conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=prompt))


@pytest.mark.async_timeout(300.0)
async def test_cancelling_the_owner_at_any_await_leaves_no_child_and_no_task():
    """The owner of `spawn_agent_process` cancelled at each of its awaits (all of them, or 40
    spread over them), its agent lingering after its stdin ends and ignoring SIGTERM: the owner
    ends within its bound, the agent is killed and reaped (no child, no zombie within 5 s), no
    task is left behind."""
    steps: list[int] = []
    await Stepped(own_a_session(), steps.append)
    points = sorted({steps[-1] * n // 39 for n in range(40)}) if len(steps) > 40 else steps
    for point in points:

        def cancel_at(step: int, point: int = point) -> None:
            if step == point:
                asyncio.current_task().cancel()  # the owner's task, at its await `point`

        owner = asyncio.ensure_future(Stepped(own_a_session(), cancel_at))
        await asyncio.wait([owner], timeout=BOUND)
        assert owner.done(), f"the owner cancelled at await {point} did not end within {BOUND} s"
        for _ in range(100):
            if not children():
                break
            await asyncio.sleep(0.05)
        left = children()
        for child in left:  # not to leave it running when the test fails
            with contextlib.suppress(OSError):
                os.kill(int(child.split()[0]), signal.SIGKILL)
        assert left == [], f"cancelled at await {point} of {len(steps)}: {left}"
        leaked = asyncio.all_tasks() - {asyncio.current_task()}
        assert not leaked, f"cancelled at await {point}: {leaked}"
