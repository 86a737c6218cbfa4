"""The cases of issue 33 (an HTTP and WebSocket server you can put in front of people), measured
against real servers on 127.0.0.1, each a child process: `acp_runtime._http_server.AcpHttpApp`
under uvicorn with a raw agent made for the case (`--serve`), `examples/echo_agent.py --listen`
(uvicorn as `--listen` runs it) and `acp_v2.serve_websocket`. Memory is the server process's
resident set (`VmRSS`), before, at its peak (sampled) and after; times are wall clock. Prints one
table: case, what was done, what was measured (medians and min-max where a case is repeated).

    .venv/bin/python bench/server_cases.py                 every case, ~6 minutes
    .venv/bin/python bench/server_cases.py blip ping       some of them (names: --list)

The deep-DecodeError case runs in each Python given by `PYTHONS` (paths, colon-separated; by
default this one and those of ~/.pyenv/versions 3.12 and 3.13 that exist). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import http.client
import json
import os
import resource
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
JSON = {"Content-Type": "application/json"}
ROUNDS = int(os.environ.get("ROUNDS", "3"))
"""The rounds of the DELETE and vanished-WebSocket cases."""
ROWS: list[tuple[str, str, str]] = []


# --- the servers (child processes) ---------------------------------------------------------------


async def _send(transport: Any, message: dict[str, Any]) -> None:
    await transport.send(json.dumps({"jsonrpc": "2.0", **message}).encode())


async def _answer_initialize(transport: Any) -> None:
    message = json.loads(await transport.receive() or b"{}")
    await _send(transport, {"id": message.get("id"), "result": {}})


async def agent_burst(transport: Any) -> None:
    """Answers `initialize`; on each `burst` sends 30 notifications `note` {n}, 20 ms apart."""
    await _answer_initialize(transport)
    while (data := await transport.receive()) is not None:
        if json.loads(data).get("method") == "burst":
            for n in range(30):
                await _send(transport, {"method": "note", "params": {"n": n}})
                await asyncio.sleep(0.02)


async def agent_stuck(transport: Any) -> None:
    """Answers `initialize`, then reads nothing more (at its concurrency limit)."""
    await _answer_initialize(transport)
    await asyncio.Event().wait()


async def agent_talker(transport: Any) -> None:
    """Answers `initialize`, then sends 64 KiB notifications for ever."""
    await _answer_initialize(transport)
    while True:
        await _send(transport, {"method": "note", "params": {"text": "x" * 65536}})


async def agent_record(transport: Any) -> None:
    """Answers `initialize`; prints the method of every message it reads, one a line."""
    await _answer_initialize(transport)
    while (data := await transport.receive()) is not None:
        print(json.loads(data).get("method"), flush=True)


AGENTS = {"burst": agent_burst, "stuck": agent_stuck, "talker": agent_talker, "record": agent_record}


def serve(agent: str, config: dict[str, Any]) -> None:
    """`--serve AGENT CONFIG`: the app with AGENT under uvicorn (uvicorn's defaults, but for
    CONFIG's "uvicorn"), `ServerSettings` from CONFIG's "settings"; prints its URL."""
    import uvicorn
    from acp_runtime import _http_server as hs

    settings = hs.ServerSettings(**config.get("settings", {}))
    app = hs.AcpHttpApp(AGENTS[agent], server_settings=settings, **config.get("app", {}))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/acp", flush=True)
    uvicorn_config = {"log_level": "error", **config.get("uvicorn", {})}
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", **uvicorn_config))
    asyncio.run(server.serve(sockets=[listener]))


def serve_websocket() -> None:
    """`--serve-websocket`: the echo agents under `acp_v2.serve_websocket`; prints its URL."""
    sys.path.insert(0, str(ROOT / "examples"))
    import acp_v2
    from echo_agent import EchoAgent, EchoAgentV1

    async def run() -> None:
        async with acp_v2.serve_websocket(EchoAgent, EchoAgentV1, port=0) as server:
            print(f"ws://127.0.0.1:{server.port}/acp", flush=True)
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            await stop.wait()

    asyncio.run(run())


class Server:
    """A server child process: its port, its pid, what it printed after its URL."""

    def __init__(self, command: list[str], nofile: int | None = None, log: Path | None = None) -> None:
        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        env = {**os.environ, "PYTHONPATH": str(GENERATED)}
        stderr = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env, preexec_fn=limit, cwd=ROOT
        )
        assert self.process.stdout is not None
        url = self.process.stdout.readline().strip()
        self.port = int(url.rsplit(":", 1)[1].split("/")[0])
        self.pid = self.process.pid
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                break
            time.sleep(0.05)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def rss(self) -> float:
        return rss_mib(self.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def running(command: list[str], **kwargs: Any) -> Iterator[Server]:
    server = Server(command, **kwargs)
    try:
        yield server
    finally:
        server.stop()


def app_server(agent: str, **config: Any) -> list[str]:
    return [sys.executable, __file__, "--serve", agent, json.dumps(config)]


LISTEN = [sys.executable, "examples/echo_agent.py", "--listen", "127.0.0.1:0"]
SERVE_WEBSOCKET = [sys.executable, __file__, "--serve-websocket"]


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))


class Peak:
    """The highest resident memory of a process, sampled every 50 ms while the context is open."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.value = rss_mib(pid)
        self._stop = threading.Event()

    def __enter__(self) -> Peak:
        threading.Thread(target=self._sample, daemon=True).start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(OSError, StopIteration):
                self.value = max(self.value, rss_mib(self.pid))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()


# --- HTTP, by hand ---------------------------------------------------------------------------------


def post(
    port: int, message: Any, headers: dict[str, str] | None = None, timeout: float = 30
) -> tuple[int, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        conn.request("POST", "/acp", body=body, headers={**JSON, **(headers or {})})
        response = conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def initialize(port: int) -> dict[str, str]:
    status, headers = post(port, INIT)
    assert status == 200, status
    return {"Acp-Connection-Id": headers["acp-connection-id"]}


def delete(port: int, connection: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    with contextlib.closing(conn):
        conn.request("DELETE", "/acp", headers=connection)
        return conn.getresponse().status


class Stream:
    """A GET event stream read by hand: its events as (id, message)."""

    def __init__(self, port: int, headers: dict[str, str], timeout: float = 10) -> None:
        self.started = time.monotonic()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.connect()
        assert self.conn.sock is not None
        self.sock: socket.socket = self.conn.sock
        self.conn.request("GET", "/acp", headers={"Accept": "text/event-stream", **headers})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.answered = time.monotonic() - self.started

    def next(self) -> tuple[int, Any]:
        event_id, data = 0, []
        while True:
            line = self.response.readline().decode().rstrip("\n")
            if not line and not self.response.fp:
                raise EOFError
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and data:
                return event_id, json.loads("\n".join(data))

    def reset(self) -> None:
        """Gone at once, as in a network blip: RST, nothing more read."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.response.close()
        self.sock.close()


def raw_connection(port: int, timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def reset(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def spread(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def counted(values: list[int]) -> dict[int, int]:
    return {value: values.count(value) for value in sorted(set(values))}


def row(case: str, how: str, figures: str) -> None:
    ROWS.append((case, how, figures))
    print(f"  {case}: {figures}", flush=True)


# --- the cases -------------------------------------------------------------------------------------


def case_blip() -> None:
    """30 notifications on the connection's stream; its client resets the socket after 3 and
    comes back 300 ms later with `Last-Event-ID`: how many of the 30 it has in the end."""
    received, after = [], []
    with running(app_server("burst")) as server:
        for _ in range(5):
            connection = initialize(server.port)
            first = Stream(server.port, connection)
            assert post(server.port, {"jsonrpc": "2.0", "method": "burst"}, connection)[0] == 202
            seen: dict[int, int] = {}
            last = 0
            while len(seen) < 3:
                last, message = first.next()
                seen[message["params"]["n"]] = last
            first.reset()
            time.sleep(0.3)
            again = Stream(server.port, {**connection, "Last-Event-ID": str(last)}, timeout=3)
            count = 0
            with contextlib.suppress(TimeoutError, OSError, EOFError):
                while len(seen) < 30:
                    event_id, message = again.next()
                    seen[message["params"]["n"]] = event_id
                    count += 1
            again.reset()
            received.append(len(seen))
            after.append(count)
            delete(server.port, connection)
    row(
        "1 blip",
        "30 notes 20 ms apart on a connection's stream; RST after 3; GET again 300 ms later with "
        "Last-Event-ID; 5 times",
        f"{spread(after, '{:.0f}')} of the 27 after the blip reach the reconnecting client, "
        f"{spread(received, '{:.0f}')} of 30 in all",
    )


def case_delete_at_limit() -> None:
    """Three rounds: a connection whose handler reads nothing gets 100 POSTs of 1 MiB at once
    (some accepted, the rest parked), then DELETE: what answers the parked POSTs, and memory."""
    body = json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"pad": "x" * (1 << 20)}}).encode()
    with running(app_server("stuck")) as server:
        before = server.rss()
        rounds = []
        with Peak(server.pid) as peak:
            for _ in range(ROUNDS):
                connection = initialize(server.port)
                statuses: list[int | str] = []

                def one(connection: dict[str, str] = connection, statuses: list[int | str] = statuses) -> None:
                    try:
                        statuses.append(post(server.port, body, connection, timeout=30)[0])
                    except OSError as error:
                        statuses.append(type(error).__name__)

                threads = [threading.Thread(target=one) for _ in range(100)]
                for thread in threads:
                    thread.start()
                time.sleep(2.0)
                accepted = len(statuses)
                at_limit = server.rss()
                started = time.monotonic()
                deleted = delete(server.port, connection)
                for thread in threads:
                    thread.join(30)
                answered = time.monotonic() - started
                parked = statuses[accepted:]
                time.sleep(6.0)  # close_grace (5 s) for the handler, then cancelled
                rounds.append(
                    f"round: {accepted} answered {sorted(set(statuses[:accepted]), key=str)} before DELETE, "
                    f"{len(parked)} parked; DELETE {deleted}; parked answered "
                    f"{ {s: parked.count(s) for s in set(parked)} } within {answered:.2f} s; "
                    f"RSS at limit {at_limit:.0f}, after {server.rss():.0f} MiB"
                )
        after = server.rss()
    row(
        "2 DELETE at the concurrency limit",
        "handler reads nothing after initialize; 100 POSTs of 1 MiB at once (max_inbound_bytes 64 MiB default), "
        f"DELETE after 2 s; {ROUNDS} rounds",
        f"RSS {before:.0f} → peak {peak.value:.0f} → {after:.0f} MiB; " + "; ".join(rounds),
    )


def websocket_handshake(port: int) -> socket.socket:
    sock = raw_connection(port)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 101"), answer[:100]
    return sock


def frame(opcode: int, payload: bytes) -> bytes:
    """A masked client frame (mask 0: the payload as is)."""
    assert len(payload) < 126
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


def case_delete_websocket() -> None:
    """Three rounds: a WebSocket whose handler reads nothing gets 80 frames of 256 KiB, then its
    client vanishes (RST): memory."""
    payload = json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"pad": "x" * (256 << 10)}}).encode()
    big = bytes([0x81, 0xFF]) + struct.pack("!Q", len(payload)) + b"\0\0\0\0" + payload
    with running(app_server("stuck", settings={"close_grace": 1.0})) as server:
        before = server.rss()
        sent = []
        with Peak(server.pid) as peak:
            for _ in range(ROUNDS):
                sock = websocket_handshake(server.port)
                sock.sendall(frame(1, json.dumps(INIT).encode()))
                sock.settimeout(2)
                count = 0
                with contextlib.suppress(TimeoutError):
                    for _ in range(80):
                        sock.sendall(big)
                        count += 1
                sent.append(count)
                time.sleep(0.5)
                reset(sock)
                time.sleep(2.0)
        time.sleep(1.0)
        after = server.rss()
    row(
        "2 vanished WebSocket at the concurrency limit",
        f"handler reads nothing after initialize; up to 80 frames of 256 KiB (2 s send timeout), then RST; {ROUNDS} rounds",
        f"RSS {before:.0f} → peak {peak.value:.0f} → {after:.0f} MiB; frames taken per round {sent}",
    )


def case_sigterm() -> None:
    """A stream whose client stopped reading, the agent writing: SIGTERM, time to exit."""
    results = []
    for label, config in [
        ("uvicorn defaults, app defaults (max_output_stall 60 s)", {}),
        ("uvicorn timeout_graceful_shutdown=5 as --listen", {"uvicorn": {"timeout_graceful_shutdown": 5}}),
    ]:
        server = Server(app_server("talker", **config))
        try:
            connection = initialize(server.port)
            stalled = raw_connection(server.port)
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            request = "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
            stalled.sendall(f"{request}Acp-Connection-Id: {connection['Acp-Connection-Id']}\r\n\r\n".encode())
            time.sleep(2.0)  # the socket's buffers fill; the stream's send waits
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            try:
                server.process.wait(120)
                results.append(f"{label}: exits {time.monotonic() - started:.1f} s after SIGTERM")
            except subprocess.TimeoutExpired:
                results.append(f"{label}: still running 120 s after SIGTERM")
            stalled.close()
        finally:
            server.stop()
    row(
        "3 SIGTERM, stalled stream", "agent writes 64 KiB notes to a GET whose client reads nothing", "; ".join(results)
    )


def ping_flood(server: Server, seconds: float = 15.0) -> str:
    sock = websocket_handshake(server.port)
    sock.settimeout(1.0)
    ping = frame(9, b"p" * 125)
    batch = ping * 64
    sent = 0
    before = server.rss()
    with Peak(server.pid) as peak:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                sent += sock.send(batch)
            except TimeoutError:
                continue
            except OSError:
                break
        at_end = server.rss()
    reset(sock)
    time.sleep(1.0)
    return (
        f"RSS {before:.0f} → peak {peak.value:.0f} (at 15 s {at_end:.0f}) → after close {server.rss():.0f} MiB, "
        f"{sent / 2**20:.0f} MiB of pings taken"
    )


def case_ping_flood() -> None:
    """A client sends pings as fast as the server takes them for 15 s and reads nothing."""
    with running(LISTEN) as server:
        listen = ping_flood(server)
    with running(SERVE_WEBSOCKET) as server:
        websocket = ping_flood(server)
    with running(app_server("stuck")) as server:
        default = ping_flood(server)
    row(
        "4 ping flood",
        "131-byte pings for 15 s, no pong read",
        f"echo_agent.py --listen (uvicorn ws=websockets): {listen}; serve_websocket: {websocket}; "
        f"the app under uvicorn's default WebSocket implementation: {default}",
    )


def http_request(connection: dict[str, str], body: bytes) -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in connection.items())
    return (
        f"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{head}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def read_answers(sock: socket.socket, count: int, buffer: bytearray) -> list[int]:
    """`count` HTTP answers read off `sock` (their bodies skipped): their status codes."""
    statuses: list[int] = []
    while len(statuses) < count:
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise EOFError
            buffer += chunk
            continue
        head = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        length = next((int(h.split(":")[1]) for h in head if h.lower().startswith("content-length:")), 0)
        while len(buffer) < end + 4 + length:
            buffer += sock.recv(1 << 16)
        del buffer[: end + 4 + length]
        statuses.append(int(head[0].split()[1]))
    return statuses


def case_invalid_ids(total: int = 120_000) -> None:
    """`total` invalid requests with ids (three kinds in turn) POSTed on 4 keep-alive sockets,
    pipelined 200 at a time, to the echo agent under --listen, its connection's stream read."""
    with running(LISTEN) as server:
        connection = initialize(server.port)
        stream = Stream(server.port, connection, timeout=60)
        answers = [0]

        def drain() -> None:
            with contextlib.suppress(Exception):
                while True:
                    stream.next()
                    answers[0] += 1

        threading.Thread(target=drain, daemon=True).start()
        before = server.rss()
        kinds = [
            lambda n: {"jsonrpc": "1.0", "id": n, "method": "m"},
            lambda n: {"jsonrpc": "2.0", "id": n, "method": 7},
            lambda n: {"jsonrpc": "2.0", "id": n, "method": "m", "result": {}},
        ]
        statuses: dict[int, int] = {}
        started = time.monotonic()
        with Peak(server.pid) as peak:
            sockets = [raw_connection(server.port, timeout=60) for _ in range(4)]
            buffers = [bytearray() for _ in sockets]
            n = 0
            while n < total:
                for sock, buffer in zip(sockets, buffers, strict=True):
                    batch = [
                        http_request(connection, json.dumps(kinds[(n + i) % 3](n + i)).encode()) for i in range(200)
                    ]
                    sock.sendall(b"".join(batch))
                    for status in read_answers(sock, 200, buffer):
                        statuses[status] = statuses.get(status, 0) + 1
                    n += 200
            elapsed = time.monotonic() - started
            time.sleep(2.0)
        after = server.rss()
        for sock in sockets:
            sock.close()
        stream.reset()
    row(
        "6 invalid requests with ids",
        f"{n:,} POSTs (jsonrpc 1.0 / method 7 / method+result, with ids) to echo_agent.py --listen, "
        "4 sockets pipelined",
        f"RSS {before:.0f} → peak {peak.value:.0f} → {after:.0f} MiB; statuses {statuses}; "
        f"{answers[0]:,} error answers on the stream; {elapsed:.0f} s",
    )


def case_cut_post() -> None:
    """A POST whose client resets the socket after half its body, then a whole one."""
    results, wholes = [], []
    with running(app_server("record")) as server:
        for _ in range(3):
            connection = initialize(server.port)
            body = json.dumps({"jsonrpc": "2.0", "method": "cut", "params": {"pad": "x" * 1000}}).encode()
            sock = raw_connection(server.port)
            request = http_request(connection, body)
            sock.sendall(request[: len(request) - 500])
            time.sleep(0.2)
            reset(sock)
            assert post(server.port, {"jsonrpc": "2.0", "method": "whole"}, connection)[0] == 202
            time.sleep(0.5)
            results.append("cut" in server.lines)
            wholes.append("whole" in server.lines)
            server.lines.clear()
            delete(server.port, connection)
    row(
        "7 POST cut before its body ends",
        "half a body then RST, then a whole POST; 3 times",
        f"the cut one executed {sum(results)} of 3 times, the whole one {sum(wholes)} of 3",
    )


def slowloris(port: int, count: int, hold: float) -> tuple[str, list[socket.socket]]:
    sockets: list[socket.socket] = []
    refused = 0
    for _ in range(count):
        try:
            sock = raw_connection(port, timeout=2)
            sock.sendall(b"POST /acp HTTP/1.1\r\nHost: x\r\n")
            sockets.append(sock)
        except OSError:
            refused += 1
    time.sleep(1.0)
    health = health_status(port)
    time.sleep(max(0.0, hold - 1.0))
    answers: dict[str, int] = {}
    for sock in sockets:
        sock.setblocking(False)
        try:
            data = sock.recv(4096)
            answer = data.split(b"\r\n", 1)[0].decode("latin-1") or "closed"
        except BlockingIOError:
            answer = "open, unanswered"
        except OSError as error:
            answer = type(error).__name__
        answers[answer] = answers.get(answer, 0) + 1
    return (
        f"{len(sockets)} sent half a request ({refused} could not connect); /health during: {health}; "
        f"after {hold:.0f} s: {answers}",
        sockets,
    )


def health_status(port: int) -> str:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
        with contextlib.closing(conn):
            conn.request("GET", "/health")
            return str(conn.getresponse().status)
    except OSError as error:
        return type(error).__name__


def case_slowloris() -> None:
    """1,100 half-sent requests against a server with 1,024 descriptors, held 20 s."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "stderr"
        with running(LISTEN, nofile=1024, log=log) as server:
            before = server.rss()
            text, sockets = slowloris(server.port, 1100, 20.0)
            peak = server.rss()
            for sock in sockets:
                sock.close()
            time.sleep(1.0)
            after_health = health_status(server.port)
            lines = log.read_text(errors="replace").splitlines()
            too_many = sum("Too many open files" in line for line in lines)
        row(
            "L slowloris, uvicorn as --listen",
            "echo_agent.py --listen under ulimit -n 1024; 1,100 sockets each send a request line and one "
            "header, then nothing, 20 s",
            f"{text}; /health after: {after_health}; RSS {before:.0f} → {peak:.0f} MiB; "
            f"{len(lines)} stderr lines ({too_many} 'Too many open files')",
        )
        haproxy = haproxy_slowloris(Path(tmp))
        if haproxy:
            row(
                "L slowloris, through haproxy",
                "the same through examples/haproxy.cfg (timeout http-request 10 s)",
                haproxy,
            )


def haproxy_slowloris(tmp: Path) -> str | None:
    """The same through haproxy with examples/haproxy.cfg, one instance behind it (the other
    address left dead), if haproxy is installed."""
    from shutil import which

    if which("haproxy") is None:
        return None
    log = tmp / "agent-stderr"
    with running([*LISTEN, "--instance", "a"], nofile=1024, log=log) as agent:
        frontend = socket.socket()
        frontend.bind(("127.0.0.1", 0))
        front_port = frontend.getsockname()[1]
        frontend.close()
        env = {
            **os.environ,
            "ACP_FRONTEND": f"127.0.0.1:{front_port}",
            "ACP_A": f"127.0.0.1:{agent.port}",
            "ACP_B": "127.0.0.1:9",
        }
        proxy = subprocess.Popen(
            ["haproxy", "-f", str(ROOT / "examples/haproxy.cfg")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(100):
                if health_status(front_port) == "200":
                    break
                time.sleep(0.1)
            text, sockets = slowloris(front_port, 1100, 12.0)
            for sock in sockets:
                sock.close()
            time.sleep(0.5)
            after = health_status(front_port)
        finally:
            proxy.terminate()
            proxy.wait(10)
        lines = log.read_text(errors="replace").splitlines()
    return f"{text}; /health after: {after}; agent's stderr: {len(lines)} lines"


def case_unfinished_bodies() -> None:
    """20 POSTs declaring 16 MiB send 15 MiB each, then nothing (default body_timeout 30 s)."""
    header = (
        "POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Acp-Connection-Id: x\r\nContent-Length: {16 << 20}\r\n\r\n"
    ).encode()
    with running(app_server("stuck")) as server:
        before = server.rss()
        sockets = []
        with Peak(server.pid) as peak:
            started = time.monotonic()
            for _ in range(20):
                sock = raw_connection(server.port, timeout=60)
                sock.sendall(header + b"x" * (15 << 20))
                sockets.append(sock)
            answers: list[bytes] = []
            times = []
            for sock in sockets:
                answer = b""
                with sock, contextlib.suppress(OSError):
                    while chunk := sock.recv(4096):
                        answer += chunk
                times.append(time.monotonic() - started)
                answers.append(answer.split(b"\r\n", 1)[0])
            time.sleep(1.0)
        after = server.rss()
    statuses = {a.decode(): answers.count(a) for a in set(answers)}
    row(
        "L 16 MiB bodies never finished",
        "20 POSTs declaring 16 MiB send 15 MiB each, then wait (ServerSettings defaults: body_timeout 30 s)",
        f"answers {statuses}, the last {max(times):.1f} s after the first byte; "
        f"RSS {before:.0f} → peak {peak.value:.0f} → {after:.0f} MiB",
    )


def case_abandoned(count: int = 3000, idle_timeout: float = 30.0) -> None:
    """`count` connections initialized and abandoned; default max_connections (256), a short
    idle_timeout (default 300 s) so that the expiry is seen."""
    import httpx

    async def initialize_all(url: str, n: int) -> list[int]:
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(60, pool=None), limits=httpx.Limits(max_connections=50)
        ) as client:
            answers = await asyncio.gather(*(client.post(url, json=INIT) for _ in range(n)))
        return [answer.status_code for answer in answers]

    with running(app_server("stuck", settings={"idle_timeout": idle_timeout})) as server:
        url = f"http://127.0.0.1:{server.port}/acp"
        before = server.rss()
        with Peak(server.pid) as peak:
            started = time.monotonic()
            statuses = asyncio.run(initialize_all(url, count))
            answered = time.monotonic()
            during = server.rss()
            time.sleep(max(0.0, answered + idle_timeout + 2.0 - time.monotonic()))
        expired = server.rss()
        again = asyncio.run(initialize_all(url, 256))
        time.sleep(0.5)
    counts = counted(statuses)
    row(
        "L abandoned connections",
        f"{count:,} initialize, never used again (max_connections 256 default; idle_timeout {idle_timeout:.0f} s, "
        "default 300 s)",
        f"statuses {counts} in {answered - started:.0f} s; RSS {before:.0f} → {during:.0f} after them (peak "
        f"{peak.value:.0f}) → {expired:.0f} MiB after the idle timeout; 256 new initialize then: "
        f"{counted(again)}",
    )


def case_half_open() -> None:
    """A stream whose client went away without a FIN (it still holds the socket, reads nothing):
    a GET without and then with `Last-Event-ID`."""
    with running(app_server("burst")) as server:
        connection = initialize(server.port)
        stale = Stream(server.port, connection)
        assert post(server.port, {"jsonrpc": "2.0", "method": "burst"}, connection)[0] == 202
        last, _ = stale.next()
        time.sleep(0.8)  # the rest of the burst goes to the socket no one reads
        plain = Stream(server.port, connection, timeout=5)
        plain_status, plain_time = plain.status, plain.answered
        plain.reset()
        resumed = Stream(server.port, {**connection, "Last-Event-ID": str(last)}, timeout=5)
        ids: list[int] = []
        with contextlib.suppress(TimeoutError, OSError, EOFError):
            while len(ids) < 30 - last:
                ids.append(resumed.next()[0])
        resumed.reset()
        stale.reset()
    row(
        "L half-open stream reattach",
        "a GET stream's client stops reading (socket kept open); GET again without, then with Last-Event-ID",
        f"without: {plain_status} in {plain_time * 1000:.0f} ms; with Last-Event-ID {last}: "
        f"{resumed.status} in {resumed.answered * 1000:.0f} ms, then events {ids[0] if ids else '-'}..{ids[-1] if ids else '-'} "
        f"({len(ids)} replayed or new)",
    )


def deep_decode() -> None:
    """`--deep-decode`: one message under 32 MiB whose `cwd` is a deep, wide value: the seconds
    `acp_v2.decode` takes to refuse it, and the length of the message of its DecodeError."""
    import acp_v2
    from acp_runtime import _runtime

    depth = min(sys.getrecursionlimit() - 100, 900)
    item = "[" * depth + "0" + "]" * depth
    text = '{"cwd": [' + ",".join([item] * ((30 << 20) // (len(item) + 1))) + '], "mcpServers": []}'
    value = _runtime.parse_json(text)
    warm = time.perf_counter()
    with contextlib.suppress(acp_v2.DecodeError):  # the first decode of the process sets things up
        acp_v2.decode(acp_v2.NewSessionRequest, {"cwd": [[0]], "mcpServers": []})
    warm = time.perf_counter() - warm
    times, length = [], 0
    for _ in range(3):
        started = time.perf_counter()
        try:
            acp_v2.decode(acp_v2.NewSessionRequest, value)
        except acp_v2.DecodeError as error:
            length = len(str(error))
        times.append(time.perf_counter() - started)
    print(json.dumps({"bytes": len(text), "depth": depth, "times": times, "message": length, "warm": warm}))


def pythons() -> list[str]:
    if "PYTHONS" in os.environ:
        return os.environ["PYTHONS"].split(":")
    found = [sys.executable]
    versions = Path.home() / ".pyenv/versions"
    for minor in ("3.12", "3.13"):
        installed = sorted(p / "bin/python3" for p in versions.glob(f"{minor}.*"))
        found += [str(python) for python in installed[-1:] if python.exists()]
    return found


def case_deep_decode() -> None:
    results = []
    for python in pythons():
        command = [python, __file__, "--deep-decode"]
        env = {**os.environ, "PYTHONPATH": str(GENERATED)}
        version = subprocess.run(
            [python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True
        )
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        if done.returncode:
            results.append(f"{version.stdout.strip()}: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        figures = json.loads(done.stdout)
        results.append(
            f"{version.stdout.strip()}: {spread([t * 1000 for t in figures['times']], '{:.2f}')} ms "
            f"(message {figures['message']} chars; a first, small decode {figures['warm'] * 1000:.0f} ms)"
        )
    row(
        "DecodeError of a deep message",
        "NewSessionRequest whose cwd is ~30 MiB of 900-deep arrays; acp_v2.decode after a small one, 3 times each",
        "; ".join(results),
    )


CASES: dict[str, Callable[[], None]] = {
    "blip": case_blip,
    "delete": case_delete_at_limit,
    "websocket": case_delete_websocket,
    "sigterm": case_sigterm,
    "ping": case_ping_flood,
    "invalid": case_invalid_ids,
    "cut": case_cut_post,
    "slowloris": case_slowloris,
    "bodies": case_unfinished_bodies,
    "abandoned": case_abandoned,
    "halfopen": case_half_open,
    "decode": case_deep_decode,
}


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], json.loads(sys.argv[3]))
        return
    if sys.argv[1:2] == ["--serve-websocket"]:
        serve_websocket()
        return
    if sys.argv[1:2] == ["--deep-decode"]:
        deep_decode()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", metavar="CASE", help=f"of: {', '.join(CASES)} (default: all)")
    parser.add_argument("--list", action="store_true")
    arguments = parser.parse_args()
    if arguments.list:
        print("\n".join(CASES))
        return
    unknown = set(arguments.cases) - set(CASES)
    if unknown:
        parser.error(f"unknown cases {sorted(unknown)}; the cases: {', '.join(CASES)}")
    for name in arguments.cases or list(CASES):
        print(f"{name}...", flush=True)
        started = time.monotonic()
        CASES[name]()
        print(f"  ({time.monotonic() - started:.0f} s)", flush=True)
    print("\n| case | how | measured |\n|---|---|---|")
    for case, how, figures in ROWS:
        print(f"| {case} | {how} | {figures} |")


if __name__ == "__main__":
    main()
