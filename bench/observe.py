"""What a wire observer costs: bench/rpc.py's notification flood and sequential round trips
(agent and client over a local socket pair) through main's engine (`--baseline DIR`: a
generated acp_v2 directory without the observer hook, copied in as another package), this
engine with no observer, with a no-op `WireObserver`, and with a `LoggingObserver` whose
level is off and on (into a handler that drops the records). Passes are interleaved; prints
medians, the spread (min-max) and the ratio to this engine without an observer.

    .venv/bin/python bench/observe.py [--baseline /work/main/generated/acp_v2]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import logging
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "generated"))
import acp_v2  # noqa: E402
from codec import build_lines  # noqa: E402

NOTIFICATIONS = 5_000
ROUND_TRIPS = 2_000
PASSES = 7


def agent_and_client(acp: ModuleType) -> tuple[Any, Any]:
    class Agent(acp.Agent):  # type: ignore[name-defined,misc]
        async def initialize(self, params: Any) -> Any:
            return acp.InitializeResponse(protocol_version=params.protocol_version, info=params.info)

        async def session_new(self, params: Any) -> Any:
            return acp.NewSessionResponse(session_id="s1")

    class Client(acp.Client):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            self.expected = 0
            self.received = 0
            self.done = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            self.received += 1
            if self.received == self.expected:
                self.done.set()

    return Agent, Client


async def connected(acp: ModuleType, observe: Callable[[], Any] | None) -> tuple[Any, Any, Any]:
    Agent, Client = agent_and_client(acp)
    left, right = socket.socketpair()
    client = Client()
    agent_conn = acp.connect_to_client(
        Agent(), *await asyncio.open_connection(sock=left, limit=acp.DEFAULT_LIMITS.max_message_bytes)
    )
    client_conn = acp.connect_to_agent(
        client, *await asyncio.open_connection(sock=right, limit=acp.DEFAULT_LIMITS.max_message_bytes)
    )
    if observe is not None:
        agent_conn.add_observer(observe())
        client_conn.add_observer(observe())
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="bench", version="1"))
    await client_conn.initialize(init)
    return agent_conn, client_conn, client


async def flood(acp: ModuleType, observe: Callable[[], Any] | None, notes: list[Any]) -> float:
    agent_conn, client_conn, client = await connected(acp, observe)
    client.expected = len(notes)
    start = time.perf_counter()
    for note in notes:
        await agent_conn.session_update(note)
    await client.done.wait()
    seconds = time.perf_counter() - start
    await client_conn.close()
    await agent_conn.close()
    return seconds / len(notes) * 1e6


async def round_trips(acp: ModuleType, observe: Callable[[], Any] | None) -> float:
    agent_conn, client_conn, _ = await connected(acp, observe)
    request = acp.NewSessionRequest(cwd="/work")
    start = time.perf_counter()
    for _ in range(ROUND_TRIPS):
        await client_conn.session_new(request)
    seconds = time.perf_counter() - start
    await client_conn.close()
    await agent_conn.close()
    return seconds / ROUND_TRIPS * 1e6


def load_baseline(directory: Path, into: Path) -> ModuleType:
    shutil.copytree(directory, into / "acp_baseline", ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(into))
    return importlib.import_module("acp_baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a generated acp_v2 directory to compare with (main's)")
    args = parser.parse_args()
    quiet = logging.getLogger("bench.wire.off")
    quiet.setLevel(logging.WARNING)
    loud = logging.getLogger("bench.wire.on")
    loud.setLevel(logging.DEBUG)
    loud.addHandler(logging.NullHandler())
    loud.propagate = False
    configs: list[tuple[str, ModuleType, Callable[[], Any] | None]] = [
        ("no observer", acp_v2, None),
        ("no-op WireObserver", acp_v2, acp_v2.WireObserver),
        ("LoggingObserver, level off", acp_v2, lambda: acp_v2.LoggingObserver(quiet)),
        ("LoggingObserver, level on", acp_v2, lambda: acp_v2.LoggingObserver(loud)),
    ]
    with tempfile.TemporaryDirectory() as scratch:
        if args.baseline is not None:
            configs.insert(0, ("baseline engine (no hook)", load_baseline(args.baseline, Path(scratch)), None))
        lines = build_lines()[:NOTIFICATIONS]
        notes = {id(acp): [acp.UpdateSessionNotification.from_json(line) for line in lines] for _, acp, _ in configs}
        results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in configs}
        for _ in range(PASSES):
            for name, acp, observe in configs:
                gc.collect()
                results[name][0].append(asyncio.run(flood(acp, observe, notes[id(acp)])))
                gc.collect()
                results[name][1].append(asyncio.run(round_trips(acp, observe)))
    reference = {kind: statistics.median(results["no observer"][kind]) for kind in (0, 1)}
    print(f"median of {PASSES} interleaved passes; {NOTIFICATIONS} notifications, {ROUND_TRIPS} round trips\n")
    print("| engine | notification µs (min-max) | ratio | round trip µs (min-max) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, _, _ in configs:
        cells = []
        for kind in (0, 1):
            times = results[name][kind]
            median = statistics.median(times)
            cells.append(f"{median:.2f} ({min(times):.2f}-{max(times):.2f}) | {median / reference[kind]:.3f}x")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
