"""Transport benchmark: ACP over Streamable HTTP and WebSocket, this project's (`acp_v1.http_app`
under uvicorn, `acp_v1.connect_http`, `acp_v1.connect_websocket`) beside the Python SDK 0.12.1's
(`acp.http`'s ASGI `AcpServer` under uvicorn, `create_http_stream`, `create_websocket_stream`), on
127.0.0.1, the same v1 messages through both typed stacks, agent and client:

- notifications/s: one `session/prompt` whose agent streams `session/update` chunks, until the
  client has received them all;
- round trip: sequential `_bench/ping` extension requests (`{}` → `{}`), the median;
- concurrent requests/s: `_bench/ping` requests, 64 in flight;
- CPU per notification: the CPU time of both processes during the stream, per notification.

Each server runs in its own process (this file with `--serve ours|sdk|floor`), the clients here;
every pass runs each stack once, in turn (interleaved), and the table gives the medians, the
spread (min-max) over the passes and the in-run ratios (ours / SDK, per pass). A bare websockets
pair (text frames of the same notification JSON, json.loads each, no ACP) is the floor.

    make peers && .venv/bin/python bench/rpc_transports.py     (make bench-rpc runs it)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / ".cache" / "peers"  # make peers installs the Python SDK here
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(1, str(PEERS))

import acp_v1  # noqa: E402

NOTIFICATIONS = 10_000
ROUND_TRIPS = 500
CONCURRENT = 1_000
IN_FLIGHT = 64
PASSES = int(os.environ.get("PASSES", "5"))
CHUNK = "a chunk of an agent's reply, streamed word by word "
FLOOR_FRAME = json.dumps(
    {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": CHUNK}},
        },
    }
)


# --- the servers (child processes) --------------------------------------------------------


class OurAgent(acp_v1.Agent):
    def on_connect(self, conn: acp_v1.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        block = params.prompt[0]
        count = int(block.text) if isinstance(block, acp_v1.ContentBlockText) else 0
        chunk = acp_v1.SessionUpdateAgentMessageChunk(content=acp_v1.ContentBlockText(text=CHUNK))
        update = acp_v1.SessionNotification(session_id=params.session_id, update=chunk)
        for _ in range(count):
            await self.client.session_update(update)
        return acp_v1.PromptResponse(stop_reason="end_turn")

    async def ext_method(self, method: str, params: Any) -> Any:
        return {}


def sdk_app() -> Any:
    from acp import text_block
    from acp.helpers import update_agent_message
    from acp.http.asgi import create_asgi_app
    from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse

    class SdkAgent:
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
            return InitializeResponse(protocol_version=1)

        async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
            return NewSessionResponse(session_id="s1")

        async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
            update = update_agent_message(text_block(CHUNK))
            for _ in range(int(prompt[0].text)):
                await self.conn.session_update(session_id, update)
            return PromptResponse(stop_reason="end_turn")

        async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            return {}

    return create_asgi_app(SdkAgent)


async def serve(stack: str) -> None:
    """Serve `stack` on a free port of 127.0.0.1, print the port, serve until stdin ends."""
    import uvicorn

    if stack == "floor":
        from websockets.asyncio.server import ServerConnection
        from websockets.asyncio.server import serve as serve_websockets

        async def flood(websocket: ServerConnection) -> None:
            async for count in websocket:
                for _ in range(int(count)):
                    await websocket.send(FLOOR_FRAME)

        async with serve_websockets(flood, "127.0.0.1", 0, compression=None) as server:
            print(server.sockets[0].getsockname()[1], flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        return
    app = acp_v1.http_app(OurAgent) if stack == "ours" else sdk_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws_per_message_deflate=False)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    print(server.servers[0].sockets[0].getsockname()[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving


# --- the clients (this process) -------------------------------------------------------------


class Peer(Protocol):
    async def stream(self, count: int) -> None:
        """One prompt whose agent streams `count` notifications, until all are received."""

    async def ping(self) -> None: ...


class Counter:
    """Counts notifications; `until(n)` waits for the n-th."""

    def __init__(self) -> None:
        self.received = 0
        self.target = 0
        self.reached = asyncio.Event()

    def count(self) -> None:
        self.received += 1
        if self.received == self.target:
            self.reached.set()

    async def until(self, target: int) -> None:
        self.target = target
        if self.received < target:
            await self.reached.wait()
        self.received, self.reached = 0, asyncio.Event()


class OurClient(acp_v1.Client):
    def __init__(self) -> None:
        self.counter = Counter()

    async def session_update(self, params: acp_v1.SessionNotification) -> None:
        self.counter.count()


class OurPeer:
    def __init__(self, conn: acp_v1.ClientSideConnection, client: OurClient, session_id: str) -> None:
        self.conn, self.client, self.session_id = conn, client, session_id

    async def stream(self, count: int) -> None:
        prompt = [acp_v1.ContentBlockText(text=str(count))]
        await self.conn.session_prompt(acp_v1.PromptRequest(session_id=self.session_id, prompt=prompt))
        await self.client.counter.until(count)

    async def ping(self) -> None:
        await self.conn.ext_method("_bench/ping", {})


@contextlib.asynccontextmanager
async def our_peer(url: str) -> AsyncIterator[Peer]:
    client = OurClient()
    connect = acp_v1.connect_http if url.startswith("http") else acp_v1.connect_websocket
    async with connect(client, url) as conn:
        await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        session = await conn.session_new(acp_v1.NewSessionRequest(cwd="/work", mcp_servers=[]))
        yield OurPeer(conn, client, session.session_id)


class SdkClient:
    def __init__(self) -> None:
        self.counter = Counter()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.counter.count()


class SdkPeer:
    def __init__(self, conn: Any, client: SdkClient, session_id: str) -> None:
        self.conn, self.client, self.session_id = conn, client, session_id

    async def stream(self, count: int) -> None:
        from acp import text_block

        await self.conn.prompt(session_id=self.session_id, prompt=[text_block(str(count))])
        await self.client.counter.until(count)

    async def ping(self) -> None:
        await self.conn.ext_method("bench/ping", {})  # the SDK adds the leading `_`


@contextlib.asynccontextmanager
async def sdk_peer(url: str) -> AsyncIterator[Peer]:
    import httpx
    from acp import connect_to_agent
    from acp.http import create_http_stream
    from acp.ws import create_websocket_stream

    client = SdkClient()
    if url.startswith("http"):  # HTTP/1.1: its default client asks for HTTP/2, which needs h2
        transport = create_http_stream(url, client=httpx.AsyncClient(timeout=httpx.Timeout(None)))
    else:
        transport = await create_websocket_stream(url)
    conn = connect_to_agent(client, transport)
    try:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd="/work", mcp_servers=[])
        yield SdkPeer(conn, client, session.session_id)
    finally:
        await conn.close()


class FloorPeer:
    """A bare websockets client: asks for `count` frames, json.loads each."""

    def __init__(self, websocket: Any) -> None:
        self.websocket = websocket

    async def stream(self, count: int) -> None:
        await self.websocket.send(str(count))
        for _ in range(count):
            json.loads(await self.websocket.recv())

    async def ping(self) -> None:
        raise NotImplementedError("the floor measures notifications only")


@contextlib.asynccontextmanager
async def floor_peer(url: str) -> AsyncIterator[Peer]:
    from websockets.asyncio.client import connect

    async with connect(url, compression=None, max_size=None) as websocket:
        yield FloorPeer(websocket)


# --- measuring --------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(peer: Peer, server_pid: int, pings: bool) -> dict[str, float]:
    """One pass of one stack and transport: every figure of the table."""
    figures: dict[str, float] = {}
    await peer.stream(100)  # warm up
    cpu = cpu_seconds(server_pid) + time.process_time()
    start = time.perf_counter()
    await peer.stream(NOTIFICATIONS)
    elapsed = time.perf_counter() - start
    figures["notifications/s"] = NOTIFICATIONS / elapsed
    figures["CPU µs/notification"] = (cpu_seconds(server_pid) + time.process_time() - cpu) / NOTIFICATIONS * 1e6
    if not pings:
        return figures
    samples = []
    for _ in range(ROUND_TRIPS):
        start = time.perf_counter()
        await peer.ping()
        samples.append(time.perf_counter() - start)
    figures["round trip µs"] = statistics.median(samples) * 1e6

    async def worker(count: int) -> None:
        for _ in range(count):
            await peer.ping()

    start = time.perf_counter()
    await asyncio.gather(*(worker(CONCURRENT // IN_FLIGHT) for _ in range(IN_FLIGHT)))
    figures["concurrent requests/s"] = (CONCURRENT // IN_FLIGHT * IN_FLIGHT) / (time.perf_counter() - start)
    return figures


Connect = Callable[[str], contextlib.AbstractAsyncContextManager[Peer]]
ROWS: list[tuple[str, str, str, Connect]] = [  # (name, server stack, scheme, client)
    ("ours HTTP", "ours", "http", our_peer),
    ("SDK HTTP", "sdk", "http", sdk_peer),
    ("ours WebSocket", "ours", "ws", our_peer),
    ("SDK WebSocket", "sdk", "ws", sdk_peer),
    ("bare websockets", "floor", "ws", floor_peer),
]


def start_server(stack: str) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "generated"), str(PEERS)])}
    command = [sys.executable, __file__, "--serve", stack]
    server = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, int(server.stdout.readline())


def spread(values: list[float]) -> str:
    median = statistics.median(values)
    digits = 0 if median >= 100 else 1 if median >= 10 else 2
    return f"{median:,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def table(results: dict[str, list[dict[str, float]]]) -> str:
    metrics = ["notifications/s", "CPU µs/notification", "round trip µs", "concurrent requests/s"]
    lines = ["| | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for name, passes in results.items():
        cells = [spread([p[m] for p in passes]) if m in passes[0] else "" for m in metrics]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for transport in ("HTTP", "WebSocket"):
        ours, sdk = results[f"ours {transport}"], results[f"SDK {transport}"]
        ratios = [spread([o[m] / s[m] for o, s in zip(ours, sdk, strict=True)]) + "x" for m in metrics]
        lines.append(f"| ours / SDK, {transport} | " + " | ".join(ratios) + " |")
    floor, ours_ws = results["bare websockets"], results["ours WebSocket"]
    ratio = spread([o["notifications/s"] / f["notifications/s"] for o, f in zip(ours_ws, floor, strict=True)])
    lines.append(f"| ours WebSocket / bare websockets | {ratio}x | | | |")
    return "\n".join(lines)


async def main() -> None:
    if not (PEERS / "acp").is_dir():
        sys.exit("bench/rpc_transports.py needs the Python SDK in .cache/peers: run `make peers`")
    servers = {stack: start_server(stack) for stack in ("ours", "sdk", "floor")}
    results: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in ROWS}
    try:
        for number in range(PASSES):
            for name, stack, scheme, connect in ROWS:
                process, port = servers[stack]
                async with connect(f"{scheme}://127.0.0.1:{port}/acp") as peer:
                    results[name].append(await measure(peer, process.pid, pings=stack != "floor"))
            print(f"pass {number + 1}/{PASSES} done", file=sys.stderr)
    finally:
        for process, _ in servers.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait(10)
    load = os.getloadavg()
    print(f"{PASSES} passes, {NOTIFICATIONS:,} notifications, {ROUND_TRIPS} round trips, {CONCURRENT:,} requests")
    print(f"({IN_FLIGHT} in flight) each; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on")
    print(f"{os.cpu_count()} cores; medians (min-max over the passes):\n")
    print(table(results))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve(sys.argv[2]))
    else:
        asyncio.run(main())
