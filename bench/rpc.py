"""Connection benchmark: the typed connection against a raw NDJSON floor, the same bytes on the wire.

The floor is what any Python JSON-RPC peer must pay: `json` (or orjson) and asyncio streams,
a dict of handlers by method and a dict of futures by id, no types and no checks. Both sides
write byte-identical lines (checked before timing). Three targets, each with the standard
library's json and with orjson, over a pipe to a child process (the peer runs the same
implementation as the side measured) or in one process over a socket pair:

- notification flood over a pipe: `session/update` notifications (the seeded stream of
  bench/codec.py) sent as fast as the peer takes them; rate, target >= 0.7x the floor's;
- concurrent requests over a pipe: `session/new` requests, 32 in flight; rate, target >= 0.7x;
- round trip in one process: sequential `session/new` requests; time, target <= 1.25x.

Each pass runs the floor and the connection back to back (alternating which goes first); the
ratio of each pass is taken, and the table gives the medians with their spread (min-max). Beside
the wall-clock ratio, the ratio of the CPU time both processes spent (each asks its peer for
its `process_time` before and after): on a shared machine it varies much less.

    .venv/bin/python bench/rpc.py [--passes 7]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "generated"))
import acp_runtime._runtime as rt  # noqa: E402
import acp_v2 as acp  # noqa: E402
import orjson  # noqa: E402

NOTIFICATIONS = 5_000
REQUESTS = 2_000
IN_FLIGHT = 32
ROUND_TRIPS = 2_000
PASSES = 7
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="bench", version="1"))
NEW_SESSION = acp.NewSessionRequest(cwd="/work")
DONE = "_bench/done"  # the flood's receiver says it has handled them all
CPU = "_bench/cpu"  # a request for the peer's CPU seconds so far
JSONS = ("json", "orjson")
ORJSON = rt.ORJSON


# --- JSON, as each side uses it -------------------------------------------------

_STDLIB_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Codec:
    loads: Callable[[bytes], Any]
    dumps: Callable[[Any], bytes]


RAW_JSON = {
    "json": Codec(json.loads, lambda value: _STDLIB_ENCODER.encode(value).encode()),
    "orjson": Codec(orjson.loads, orjson.dumps),
}


def use_json(name: str) -> None:
    """Make the package parse and write JSON with the standard library or with orjson."""
    rt.ORJSON = ORJSON if name == "orjson" else None


# --- the floor: raw NDJSON over asyncio streams -------------------------------------


class RawPeer:
    """A JSON-RPC peer without types: a handler per method, a future per request sent."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        codec: Codec,
        requests: dict[str, Callable[[Any], Awaitable[Any]]],
        notifications: dict[str, Callable[[Any], Awaitable[None]]],
    ) -> None:
        self._reader, self._writer, self._codec = reader, writer, codec
        self._requests, self._notifications = requests, notifications
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        loads = self._codec.loads
        while line := await self._reader.readline():
            message = loads(line)
            if "method" not in message:
                self._waiting.pop(message["id"]).set_result(message["result"])
            elif "id" in message:
                result = await self._requests[message["method"]](message["params"])
                await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            else:
                await self._notifications[message["method"]](message["params"])
        self._writer.close()

    async def _send(self, message: Any) -> None:
        self._writer.write(self._codec.dumps(message) + b"\n")
        await self._writer.drain()

    async def request(self, method: str, params: Any) -> Any:
        request_id = self._next_id
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await future

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def close(self) -> None:
        self._writer.close()
        await self.task


# --- the handlers, typed and raw ----------------------------------------------------


class Counter:
    """Counts flood notifications; calls `done` after each `expected` of them."""

    def __init__(self, expected: int, done: Callable[[], Awaitable[None]]) -> None:
        self.expected, self.received, self.done = expected, 0, done

    async def note(self) -> None:
        self.received += 1
        if self.received == self.expected:
            self.received = 0
            await self.done()


class Agent(acp.Agent):
    def __init__(self) -> None:
        self.initialized = asyncio.Event()
        self.done = asyncio.Event()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        self.initialized.set()
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=params.info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="s1")

    async def ext_notification(self, method: str, params: Any) -> None:
        self.done.set()

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"cpu": time.process_time()}


class Client(acp.Client):
    def __init__(self, counter: Counter | None = None) -> None:
        self.counter = counter

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        if self.counter is not None:
            await self.counter.note()

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"cpu": time.process_time()}


async def raw_new_session(params: Any) -> Any:
    return {"sessionId": "s1"}


async def raw_cpu(params: Any) -> Any:
    return {"cpu": time.process_time()}


# --- the child process: the peer over a pipe -------------------------------------------


async def child(kind: str, role: str, json_name: str, expected: int) -> None:
    """Serve the parent over stdin/stdout: `flood` receives notifications, `serve` answers requests."""
    use_json(json_name)
    reader, writer = await acp.connection.stdio_streams()
    if kind == "typed":
        if role == "flood":
            counter = Counter(expected, lambda: conn.ext_notification(DONE, {}))
            conn = acp.connect_to_agent(Client(counter), reader, writer)
            await conn.initialize(INIT)
            await conn.wait_closed()
        else:
            await acp.connect_to_client(Agent(), reader, writer).wait_closed()
        return
    raw_counter = Counter(expected, lambda: peer.notify(DONE, {}))
    requests = {"session/new": raw_new_session, CPU: raw_cpu}
    peer = RawPeer(reader, writer, RAW_JSON[json_name], requests, {"session/update": lambda _: raw_counter.note()})
    await peer.task


async def spawn(kind: str, role: str, json_name: str) -> Any:
    """Start the peer of `role` and return (process, the parent's side, its agent or None)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--child",
        kind,
        role,
        json_name,
        str(NOTIFICATIONS),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=acp.DEFAULT_LIMITS.max_message_bytes,
    )
    assert process.stdout is not None and process.stdin is not None
    if kind == "typed":
        if role == "flood":
            agent = Agent()
            conn: Any = acp.connect_to_client(agent, process.stdout, process.stdin)
            await agent.initialized.wait()  # its response is written before any notification
            return process, conn, agent
        conn = acp.connect_to_agent(Client(), process.stdout, process.stdin)
        await conn.initialize(INIT)
        return process, conn, None
    done = asyncio.Event()

    async def finished(_: Any) -> None:
        done.set()

    peer = RawPeer(process.stdout, process.stdin, RAW_JSON[json_name], {}, {DONE: finished})
    return process, peer, done


# --- the measured runs ---------------------------------------------------------------


async def peer_cpu(kind: str, side: Any) -> float:
    """The CPU seconds the peer process has spent so far."""
    answer = await (side.ext_method(CPU, {}) if kind == "typed" else side.request(CPU, {}))
    return float(answer["cpu"])


async def measured(kind: str, peer: Any, work: Awaitable[None]) -> tuple[float, float]:
    """The wall-clock seconds of `work` and the CPU seconds of this process and of `peer`'s (None: none)."""
    peer_start = 0.0 if peer is None else await peer_cpu(kind, peer)
    wall, cpu = time.perf_counter(), time.process_time()
    await work
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if peer is not None:
        cpu += await peer_cpu(kind, peer) - peer_start
    return wall, cpu


async def flood(kind: str, side: Any, signal: Any, notes: list[Any], raw_params: list[Any]) -> None:
    """Send every notification and hear that the peer handled the last one."""
    done: asyncio.Event = signal.done if kind == "typed" else signal
    done.clear()
    if kind == "typed":
        for note in notes:
            await side.session_update(note)
    else:
        for params in raw_params:
            await side.notify("session/update", params)
    await done.wait()


async def concurrent(kind: str, side: Any, raw_params: Any) -> None:
    """REQUESTS `session/new` requests, IN_FLIGHT at a time."""

    async def worker() -> None:
        if kind == "typed":
            for _ in range(REQUESTS // IN_FLIGHT):
                await side.session_new(NEW_SESSION)
        else:
            for _ in range(REQUESTS // IN_FLIGHT):
                await side.request("session/new", raw_params)

    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))


async def round_trips(kind: str, json_name: str, raw_params: Any) -> tuple[float, float]:
    """ROUND_TRIPS sequential `session/new` requests between two peers of one process."""
    left, right = socket.socketpair()
    server_streams = await asyncio.open_connection(sock=left, limit=acp.DEFAULT_LIMITS.max_message_bytes)
    client_streams = await asyncio.open_connection(sock=right, limit=acp.DEFAULT_LIMITS.max_message_bytes)
    if kind == "typed":
        server: Any = acp.connect_to_client(Agent(), *server_streams)
        client: Any = acp.connect_to_agent(Client(), *client_streams)
        await client.initialize(INIT)

        async def work() -> None:
            for _ in range(ROUND_TRIPS):
                await client.session_new(NEW_SESSION)

    else:
        codec = RAW_JSON[json_name]
        server = RawPeer(*server_streams, codec, {"session/new": raw_new_session}, {})
        client = RawPeer(*client_streams, codec, {}, {})

        async def work() -> None:
            for _ in range(ROUND_TRIPS):
                await client.request("session/new", raw_params)

    seconds = await measured(kind, None, work())
    await client.close()
    await server.close()
    return seconds


# --- the run ---------------------------------------------------------------------------


def same_bytes(notes: list[Any], raw_notes: list[Any], raw_new: Any) -> None:
    """Abort unless the floor writes what the connection writes."""
    for json_name in JSONS:
        use_json(json_name)
        dumps = RAW_JSON[json_name].dumps
        pairs = [
            (acp.Notification(method="session/update", params=notes[0]), {"jsonrpc": "2.0", "method": "session/update", "params": raw_notes[0]}),
            (acp.Request(id=7, method="session/new", params=NEW_SESSION), {"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": raw_new}),
            (acp.Response(id=7, result=acp.NewSessionResponse(session_id="s1")), {"jsonrpc": "2.0", "id": 7, "result": {"sessionId": "s1"}}),
        ]  # fmt: skip
        for typed, raw in pairs:
            if rt.dump_json_bytes(acp.encode_message(typed)) != dumps(raw):
                sys.exit(f"the floor ({json_name}) does not write what the connection writes: {dumps(raw)!r}")


@dataclass(frozen=True)
class Target:
    name: str
    unit: str  # "rate": messages per second, higher is better; "time": µs per message
    limit: float  # the ratio to the floor the connection must reach


TARGETS = (
    Target("notification flood, pipe", "rate", 0.7),
    Target("concurrent requests, pipe", "rate", 0.7),
    Target("round trip, one process", "time", 1.25),
)


Times = dict[tuple[str, str, str], list[tuple[float, float]]]


async def run(passes: int) -> Times:
    """Wall-clock and CPU seconds per message of every pass: (target, json, "floor" | "typed") → [(wall, cpu)]."""
    from codec import build_lines

    notes = [acp.UpdateSessionNotification.from_json(line) for line in build_lines()[:NOTIFICATIONS]]
    raw_notes = [acp.encode_message(acp.Notification(method="session/update", params=note))["params"] for note in notes]
    raw_new = acp.encode_message(acp.Request(id=0, method="session/new", params=NEW_SESSION))["params"]
    same_bytes(notes, raw_notes, raw_new)
    # The benchmark's own objects (both sides' messages) out of the cyclic GC: otherwise full
    # collections over them, not the connection, decide a pass's time.
    gc.collect()
    gc.freeze()
    kinds = {"floor": "raw", "typed": "typed"}
    peers = {
        (role, json_name, side): await spawn(kinds[side], role, json_name)
        for role in ("flood", "serve")
        for json_name in JSONS
        for side in kinds
    }
    for (role, _, side), (_, conn, signal) in peers.items():  # a first pass, not measured, warms both
        if role == "flood":
            await flood(kinds[side], conn, signal, notes, raw_notes)
    times: Times = {}

    def note(target: Target, json_name: str, side: str, seconds: tuple[float, float], messages: int) -> None:
        times.setdefault((target.name, json_name, side), []).append((seconds[0] / messages, seconds[1] / messages))

    for number in range(passes):
        for json_name in JSONS:
            for side in ("floor", "typed") if number % 2 == 0 else ("typed", "floor"):
                use_json(json_name)
                kind = kinds[side]
                _, conn, signal = peers["flood", json_name, side]
                gc.collect()
                seconds = await measured(kind, conn, flood(kind, conn, signal, notes, raw_notes))
                note(TARGETS[0], json_name, side, seconds, NOTIFICATIONS)
                _, conn, _ = peers["serve", json_name, side]
                gc.collect()
                seconds = await measured(kind, conn, concurrent(kind, conn, raw_new))
                note(TARGETS[1], json_name, side, seconds, REQUESTS // IN_FLIGHT * IN_FLIGHT)
                gc.collect()
                note(TARGETS[2], json_name, side, await round_trips(kind, json_name, raw_new), ROUND_TRIPS)
    for process, conn, _ in peers.values():
        await conn.close()
        await process.wait()
    return times


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def ratios(target: Target, floor: list[float], typed: list[float]) -> list[float]:
    """The connection's ratio to the floor in each pass: of rates (floor time / its time) or of times."""
    if target.unit == "rate":
        return [f / t for f, t in zip(floor, typed, strict=True)]
    return [t / f for f, t in zip(floor, typed, strict=True)]


def shown(target: Target, seconds: list[float]) -> str:
    median = statistics.median(seconds)
    return f"{1 / median:,.0f}/s" if target.unit == "rate" else f"{median * 1e6:.1f} µs"


def report(times: Times, passes: int, load: tuple[float, float]) -> None:
    print(
        f"{passes} interleaved passes, load average {load[0]:.1f} before and {load[1]:.1f} after, "
        f"on {os.cpu_count()} cores; {NOTIFICATIONS} notifications, {REQUESTS} requests "
        f"({IN_FLIGHT} in flight), {ROUND_TRIPS} round trips\n"
    )
    print("| target | json | floor | connection | ratio (spread) | CPU ratio (spread) | target | met (wall, CPU) |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for target in TARGETS:
        for json_name in JSONS:
            floor = times[target.name, json_name, "floor"]
            typed = times[target.name, json_name, "typed"]
            wall = ratios(target, [f[0] for f in floor], [t[0] for t in typed])
            cpu = ratios(target, [f[1] for f in floor], [t[1] for t in typed])
            if target.unit == "rate":
                wanted, met = f">= {target.limit}x", [statistics.median(r) >= target.limit for r in (wall, cpu)]
            else:
                wanted, met = f"<= {target.limit}x", [statistics.median(r) <= target.limit for r in (wall, cpu)]
            print(
                f"| {target.name} | {json_name} | {shown(target, [f[0] for f in floor])} | "
                f"{shown(target, [t[0] for t in typed])} | {statistics.median(wall):.2f}x ({spread(wall)}) | "
                f"{statistics.median(cpu):.2f}x ({spread(cpu)}) | {wanted} | "
                f"{', '.join('yes' if m else '**no**' for m in met)} |"
            )
    print("\nwhat the connection adds per message, µs of CPU (median, both processes):")
    for target in TARGETS:
        added = [
            (statistics.median(t[1] for t in times[target.name, json_name, "typed"])
             - statistics.median(f[1] for f in times[target.name, json_name, "floor"])) * 1e6
            for json_name in JSONS
        ]  # fmt: skip
        print(f"- {target.name}: {added[0]:.1f} (json), {added[1]:.1f} (orjson)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, role, json_name, expected = sys.argv[2:6]
        asyncio.run(child(kind, role, json_name, int(expected)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=PASSES)
    passes = parser.parse_args().passes
    load = os.getloadavg()[0]
    times = asyncio.run(run(passes))
    report(times, passes, (load, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
