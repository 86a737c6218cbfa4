"""Connection benchmark: what a connection pair adds to the codec cost of the same messages.

Streams the seeded `session/update` notifications of bench/codec.py from an agent to a
client connection over a local socket pair, and times sequential `session/new` round trips;
beside each, the raw cost of the same messages through the package's JSON functions (orjson
when installed, as the connection uses them) + `decode_message` / `encode_message` (what any
implementation must pay). The connection's own cost is the
difference; the target is at most 1.0x the codec cost. Prints a Markdown table.

    .venv/bin/python bench/rpc.py
"""

from __future__ import annotations

import asyncio
import gc
import socket
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "generated"))
import acp_v2 as acp  # noqa: E402
from codec import build_lines  # noqa: E402

NOTIFICATIONS = 5_000
ROUND_TRIPS = 2_000
PASSES = 5
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="bench", version="1"))
NEW_SESSION = acp.NewSessionRequest(cwd="/work")


class Agent(acp.Agent):
    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=params.info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="s1")


class Client(acp.Client):
    def __init__(self) -> None:
        self.expected = 0
        self.received = 0
        self.done = asyncio.Event()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        self.received += 1
        if self.received == self.expected:
            self.done.set()


def wire(message: Any) -> bytes:
    """A message's line as the connection writes it (orjson when installed, as there)."""
    return acp._runtime.dump_json(acp.encode_message(message)).encode()


def parse(data: bytes) -> Any:
    """A line's JSON as the connection reads it."""
    return acp._runtime.parse_json(data)


def codec_notifications(notes: list[Any]) -> None:
    """Send and receive side of each notification, without a connection."""
    for note in notes:
        data = wire(acp.Notification(method="session/update", params=note))
        acp.decode_message(parse(data), side="client")


def codec_round_trips() -> None:
    pending = acp.PendingRequests(side="agent")
    for _ in range(ROUND_TRIPS):
        request = acp.decode_message(parse(wire(pending.request("session/new", NEW_SESSION))), side="agent")
        response = acp.Response(id=request.id, result=acp.NewSessionResponse(session_id="s1"))
        pending.resolve(parse(wire(response)))


async def connected() -> tuple[Any, Any, Client]:
    left, right = socket.socketpair()
    client = Client()
    agent_conn = acp.connect_to_client(Agent(), *await asyncio.open_connection(sock=left, limit=acp.DEFAULT_LIMIT))
    client_conn = acp.connect_to_agent(client, *await asyncio.open_connection(sock=right, limit=acp.DEFAULT_LIMIT))
    await client_conn.initialize(INIT)
    return agent_conn, client_conn, client


async def connection_notifications(notes: list[Any]) -> float:
    agent_conn, client_conn, client = await connected()
    client.expected = len(notes)
    start = time.perf_counter()
    for note in notes:
        await agent_conn.session_update(note)
    await client.done.wait()
    seconds = time.perf_counter() - start
    await client_conn.close()
    await agent_conn.close()
    return seconds


async def echo_round_trips() -> float:
    """The floor: the same lines echoed over the same kind of socket pair by bare asyncio streams."""
    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)

    async def echo() -> None:
        while line := await agent_reader.readline():
            agent_writer.write(line)
            await agent_writer.drain()

    server = asyncio.create_task(echo())
    line = wire(acp.Request(id=1, method="session/new", params=NEW_SESSION)) + b"\n"
    start = time.perf_counter()
    for _ in range(ROUND_TRIPS):
        client_writer.write(line)
        await client_writer.drain()
        await client_reader.readline()
    seconds = time.perf_counter() - start
    client_writer.close()
    await server
    agent_writer.close()
    return seconds


async def connection_round_trips() -> float:
    agent_conn, client_conn, _ = await connected()
    start = time.perf_counter()
    for _ in range(ROUND_TRIPS):
        await client_conn.session_new(NEW_SESSION)
    seconds = time.perf_counter() - start
    await client_conn.close()
    await agent_conn.close()
    return seconds


def median_us(run: Callable[[], float], messages: int) -> float:
    times = []
    for _ in range(PASSES):
        gc.collect()
        times.append(run())
    return statistics.median(times) / messages * 1e6


def timed(work: Callable[[], object]) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        work()
        return time.perf_counter() - start

    return run


def in_loop(work: Callable[[], Coroutine[Any, Any, float]]) -> Callable[[], float]:
    return lambda: asyncio.run(work())


def main() -> None:
    notes = [acp.UpdateSessionNotification.from_json(line) for line in build_lines()[:NOTIFICATIONS]]
    rows = [
        (
            "session/update notification",
            median_us(timed(lambda: codec_notifications(notes)), len(notes)),
            median_us(in_loop(lambda: connection_notifications(notes)), len(notes)),
        ),
        (
            "session/new round trip",
            median_us(timed(codec_round_trips), ROUND_TRIPS),
            median_us(in_loop(connection_round_trips), ROUND_TRIPS),
        ),
    ]
    print(f"median of {PASSES} passes; {len(notes)} notifications, {ROUND_TRIPS} sequential round trips\n")
    print("| message | codec µs | connection µs | connection adds | ratio to codec | target | met |")
    print("|---|---:|---:|---:|---:|---|---|")
    for name, codec, connection in rows:
        added = connection - codec
        ratio = added / codec
        print(
            f"| {name} | {codec:.1f} | {connection:.1f} | {added:.1f} | {ratio:.2f}x | <= 1.0x | {'yes' if ratio <= 1.0 else '**no**'} |"
        )
    echo = median_us(in_loop(echo_round_trips), ROUND_TRIPS)
    round_trip = rows[1][2] - rows[1][1] - echo
    print(f"\nnotifications per second through the connection: {1e6 / rows[0][2]:,.0f}")
    print(f"bare asyncio line echo over the same socket pair (the floor of any asyncio round trip): {echo:.1f} µs")
    print(f"round trip beyond codec and that floor: {round_trip:.1f} µs ({round_trip / rows[1][1]:.2f}x codec)")


if __name__ == "__main__":
    main()
