"""Connection soak: a million notifications through the real connection over a pipe, and what
the connection limits cost.

An agent process (this file with `--agent`, acp_v2's `run_agent`) streams `session/update`
notifications to a client connection in this process (`spawn_agent_process`), as an agent
streams a turn. The soak sends SOAK of them and prints the RSS of both processes before and
after; then PASSES interleaved passes of PASS notifications each, through two agents, one with
the default `ConnectionLimits` and one with limits no run reaches, print the throughput of
each (medians and spread) and their ratio.

    .venv/bin/python bench/soak.py [--soak N] [--pass N] [--passes N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))
import acp_v2 as acp  # noqa: E402

SOAK = 1_000_000
PASS = 100_000
PASSES = 5
UNBOUNDED: dict[str, Any] = {
    "max_concurrent_requests": 2**62,
    "max_queued_notifications": 2**62,
    "max_buffered_bytes": 2**62,
    "max_output_stall": 1e9,
}
"""Limits no run of this benchmark reaches: the connection without its bounds."""
UPDATE = acp.UpdateSessionNotification(
    session_id="s1",
    update=acp.SessionUpdateAgentMessageChunk(message_id="m1", content=acp.ContentBlockText(text="a chunk of text")),
)
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="soak", version="1"))


def memory(pid: int | str = "self") -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in bytes."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


class StreamingAgent(acp.Agent):
    """Streams `params["count"]` updates on `_soak/stream`, then answers."""

    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="soak-agent", version="1"))

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_soak/stream":
            for _ in range(params["count"]):
                await self.client.session_update(UPDATE)
            return {}
        return await super().ext_method(method, params)


class CountingClient(acp.Client):
    def __init__(self) -> None:
        self.received = 0
        self.expected = 0
        self.done = asyncio.Event()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        self.received += 1
        if self.received == self.expected:
            self.done.set()


class Agent:
    """One agent process with `limits` (a dict of `ConnectionLimits` fields) and its client."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self.limits = limits
        self.client = CountingClient()

    async def __aenter__(self) -> Agent:
        env = {**os.environ, "SOAK_LIMITS": json.dumps(self.limits)}
        self._spawned = acp.spawn_agent_process(
            self.client,
            sys.executable,
            __file__,
            "--agent",
            env=env,
            options=acp.ConnectionOptions(limits=acp.ConnectionLimits(**self.limits)),
        )
        self.conn, self.process = await self._spawned.__aenter__()
        await self.conn.initialize(INIT)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._spawned.__aexit__(*exc_info)

    async def stream(self, count: int) -> float:
        """Seconds for `count` notifications, from the request to the last one handled."""
        self.client.received, self.client.expected = 0, count
        self.client.done.clear()
        started = time.perf_counter()
        await self.conn.ext_method("_soak/stream", {"count": count})
        await self.client.done.wait()
        return time.perf_counter() - started


def mib(value: float) -> str:
    return f"{value / 2**20:.1f} MiB"


async def soak(count: int) -> None:
    async with Agent({}) as agent:
        await agent.stream(1000)  # warm
        before = memory(), memory(agent.process.pid)
        seconds = await agent.stream(count)
        after = memory(), memory(agent.process.pid)
    print(f"## Soak: {count:,} session/update notifications, agent process → client, default limits\n")
    print(f"{seconds:.1f} s, {count / seconds:,.0f} notifications/s\n")
    print("| process | RSS before | RSS after | peak RSS (VmHWM) after |")
    print("|---|---|---|---|")
    for name, (rss_before, _), (rss_after, peak) in zip(("client (this)", "agent (child)"), before, after, strict=True):
        print(f"| {name} | {mib(rss_before)} | {mib(rss_after)} | {mib(peak)} |")
    print()


async def limits_cost(count: int, passes: int) -> None:
    rates: dict[str, list[float]] = {"default limits": [], "unbounded": []}
    async with Agent({}) as bounded, Agent(UNBOUNDED) as unbounded:
        for agent in (bounded, unbounded):
            await agent.stream(1000)
        for _ in range(passes):
            for name, agent in (("default limits", bounded), ("unbounded", unbounded)):
                rates[name].append(count / await agent.stream(count))
        peaks = {"default limits": memory(bounded.process.pid)[1], "unbounded": memory(unbounded.process.pid)[1]}
    print(f"## The cost of the limits: {passes} interleaved passes of {count:,} notifications each\n")
    print("| limits | median notifications/s | spread (min to max) | agent peak RSS |")
    print("|---|---|---|---|")
    for name, values in rates.items():
        print(
            f"| {name} | {statistics.median(values):,.0f} | {min(values):,.0f} to {max(values):,.0f} | {mib(peaks[name])} |"
        )
    ratio = statistics.median(rates["default limits"]) / statistics.median(rates["unbounded"])
    per_pass = [b / u for b, u in zip(rates["default limits"], rates["unbounded"], strict=True)]
    print(f"\ndefault / unbounded throughput: {ratio:.3f}x (per pass {min(per_pass):.3f} to {max(per_pass):.3f})")
    print(f"load average while it ran: {os.getloadavg()[0]:.1f} (1 min)\n")


def serve_agent() -> None:
    limits = acp.ConnectionLimits(**json.loads(os.environ.get("SOAK_LIMITS", "{}")))
    asyncio.run(acp.run_agent(StreamingAgent(), options=acp.ConnectionOptions(limits=limits)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="store_true", help="serve the streaming agent on stdin/stdout")
    parser.add_argument("--soak", type=int, default=SOAK, help="notifications of the soak")
    parser.add_argument("--pass", dest="pass_", type=int, default=PASS, help="notifications of each pass")
    parser.add_argument("--passes", type=int, default=PASSES, help="passes of each kind of limits")
    options = parser.parse_args()
    if options.agent:
        serve_agent()
        return
    asyncio.run(soak(options.soak))
    asyncio.run(limits_cost(options.pass_, options.passes))


if __name__ == "__main__":
    main()
