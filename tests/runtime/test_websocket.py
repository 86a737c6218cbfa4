"""generator/runtime/_websocket.py on its own, over 127.0.0.1: frames, the upgrade's checks
and header, the ends of the stream. Each test runs one server on a free port and is bounded
in time; the typed connections over it are tested in tests/package/test_transports.py."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Mapping

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from generator.runtime import _websocket as ws
from generator.runtime._http_server import AuthRequest

TIMEOUT = 10


async def echo(transport: ws.WebSocketTransport) -> None:
    """Sends every message back until the client's stream ends."""
    while (message := await transport.receive()) is not None:
        await transport.send(message)


async def test_a_message_is_one_text_frame_both_ways_and_the_101_names_the_connection():
    seen: list[str | None] = []

    async def handler(transport: ws.WebSocketTransport) -> None:
        seen.append(transport.connection_id)
        await echo(transport)

    async with asyncio.timeout(TIMEOUT), ws.serve_transports(handler, port=0) as server:
        assert server.url == f"ws://127.0.0.1:{server.port}/acp"
        async with connect(server.url) as raw:
            assert raw.response is not None
            connection_id = raw.response.headers["Acp-Connection-Id"]
            await raw.send('{"jsonrpc":"2.0","method":"n","params":{"text":"é"}}')
            frame = await raw.recv()
            assert isinstance(frame, str) and json.loads(frame)["params"] == {"text": "é"}
        async with ws.open_websocket(server.url) as transport:
            assert transport.connection_id is not None and transport.connection_id != connection_id
            await transport.send(b'{"a":1}')
            assert await transport.receive() == b'{"a":1}'
    assert seen == [connection_id, transport.connection_id]
    assert len(connection_id) == 32


async def test_binary_frames_are_ignored():
    async with asyncio.timeout(TIMEOUT), ws.serve_transports(echo, port=0) as server, connect(server.url) as raw:
        await raw.send(b'{"binary":true}')
        await raw.send('{"text":true}')
        assert await raw.recv() == '{"text":true}'


async def test_the_end_of_either_side_ends_the_other_stream():
    ended = asyncio.Event()

    async def handler(transport: ws.WebSocketTransport) -> None:
        assert await transport.receive() is None
        ended.set()

    async with (
        asyncio.timeout(TIMEOUT),
        ws.serve_transports(handler, port=0) as server,
        ws.open_websocket(server.url) as transport,
    ):
        await transport.close()
        await ended.wait()
        with pytest.raises(ConnectionError):
            await transport.send(b"{}")

    async def closes(transport: ws.WebSocketTransport) -> None:
        await transport.close()

    async with (
        asyncio.timeout(TIMEOUT),
        ws.serve_transports(closes, port=0) as server,
        ws.open_websocket(server.url) as transport,
    ):
        assert await transport.receive() is None


async def test_a_frame_over_the_limit_closes_the_connection_with_1009():
    async with (
        asyncio.timeout(TIMEOUT),
        ws.serve_transports(echo, port=0, max_message_bytes=100) as server,
        connect(server.url) as raw,
    ):
        await raw.send("x" * 50)
        assert await raw.recv() == "x" * 50
        await raw.send("x" * 101)
        await raw.wait_closed()
        assert raw.close_code == 1009


async def status(url: str, headers: Mapping[str, str] | None = None, origin: str | None = None) -> int:
    """The status of the upgrade: 101 when accepted."""
    try:
        async with connect(url, additional_headers=dict(headers or {}), origin=origin):  # type: ignore[arg-type]
            return 101
    except InvalidStatus as error:
        return error.response.status_code


async def test_authorize_sees_the_upgrade_and_its_principal_reaches_the_transport():
    seen: list[AuthRequest] = []
    principals: list[object] = []

    def authorize(request: AuthRequest) -> str | None:
        seen.append(request)
        return {"Bearer a": "alice"}.get(request.headers.get("authorization", ""))

    async def handler(transport: ws.WebSocketTransport) -> None:
        principals.append(transport.principal)
        await echo(transport)

    async with asyncio.timeout(TIMEOUT), ws.serve_transports(handler, port=0, authorize=authorize) as server:
        headers = {"Authorization": "Bearer a", "Cookie": "session=s1"}
        assert await status(f"{server.url}?room=2", headers) == 101
        assert await status(server.url, {"Authorization": "Bearer b"}) == 401
    first = seen[0]
    assert (first.method, first.path, first.query, first.transport) == ("GET", "/acp", "room=2", "websocket")
    assert first.client is not None and first.client[0] == "127.0.0.1"
    assert first.cookies == {"session": "s1"} and first.connection_id is None
    assert principals == ["alice"]  # the refused upgrade ran no handler


async def test_the_path_the_origin_and_the_authorization_are_checked_before_the_upgrade():
    def authorize(request: AuthRequest) -> bool:
        return request.headers.get("authorization") == "Bearer good"

    async def authorize_async(request: AuthRequest) -> bool:
        await asyncio.sleep(0)
        return authorize(request)

    good = {"Authorization": "Bearer good"}
    for check in (authorize, authorize_async):
        options = {"allowed_origins": ["https://editor.example"], "authorize": check}
        async with asyncio.timeout(TIMEOUT), ws.serve_transports(echo, port=0, **options) as server:  # type: ignore[arg-type]
            base = f"ws://127.0.0.1:{server.port}"
            assert await status(f"{base}/acp", good) == 101
            assert await status(f"{base}/acp?x=1", good) == 101
            assert await status(f"{base}/other", good) == 404
            assert await status(f"{base}/acp/x", good) == 404
            assert await status(f"{base}/acp") == 401
            assert await status(f"{base}/acp", {"Authorization": "Bearer bad"}) == 401
            assert await status(f"{base}/acp", good, origin="https://evil.example") == 403
            assert await status(f"{base}/acp", good, origin="https://editor.example") == 101

    async with asyncio.timeout(TIMEOUT), ws.serve_transports(echo, port=0) as server:
        assert await status(server.url, origin="http://127.0.0.1:1234") == 403  # no origin is allowed by default
        assert await status(server.url) == 101


async def test_a_failing_handler_closes_its_socket_and_the_server_serves_on():
    async def handler(transport: ws.WebSocketTransport) -> None:
        message = await transport.receive()
        if message == b"fail":
            raise ValueError("handler failed")
        await echo(transport)

    async with asyncio.timeout(TIMEOUT), ws.serve_transports(handler, port=0) as server:
        async with ws.open_websocket(server.url) as transport:
            await transport.send(b"fail")
            assert await transport.receive() is None
        async with ws.open_websocket(server.url) as transport:
            await transport.send(b"first")
            await transport.send(b"second")
            assert await transport.receive() == b"second"


async def test_a_client_that_stops_reading_is_dropped_after_the_output_stall():
    failed = asyncio.Event()

    async def flood(transport: ws.WebSocketTransport) -> None:
        try:
            while True:
                await transport.send(b'"' + b"x" * (1 << 20) + b'"')
        except ConnectionError:
            failed.set()

    async with (
        asyncio.timeout(TIMEOUT),
        ws.serve_transports(flood, port=0, max_output_stall=0.5) as server,
        connect(server.url, max_queue=1, max_size=None, close_timeout=1) as raw,
    ):
        await failed.wait()  # the client never reads past its first frames: the flood ends
        assert raw.response is not None


async def test_a_client_that_vanishes_while_its_handler_reads_nothing_ends_the_handler():
    cancelled = asyncio.Event()

    async def stuck(transport: ws.WebSocketTransport) -> None:  # at its concurrency limit: reads no more
        await transport.receive()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async with asyncio.timeout(TIMEOUT), ws.serve_transports(stuck, port=0, close_grace=0.2) as server:
        async with connect(server.url) as raw:
            for n in range(3):
                await raw.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "m"}))
        await cancelled.wait()


async def test_websockets_over_max_connections_are_refused_503_with_retry_after():
    from generator.runtime._http_server import ServerSettings

    settings = ServerSettings(max_connections=1)
    async with asyncio.timeout(TIMEOUT), ws.serve_transports(echo, port=0, server_settings=settings) as server:
        async with connect(server.url) as first:
            await first.send('{"a":1}')
            assert await first.recv() == '{"a":1}'
            with pytest.raises(InvalidStatus) as refused:
                async with connect(server.url):
                    pass
            assert refused.value.response.status_code == 503
            assert refused.value.response.headers["Retry-After"] == "5"
        for _ in range(100):  # the place is freed once the first is closed on the server's side
            try:
                async with connect(server.url) as again:
                    await again.send('{"b":2}')
                    assert await again.recv() == '{"b":2}'
                break
            except InvalidStatus:
                await asyncio.sleep(0.02)
        else:
            pytest.fail("the first WebSocket's place was never freed")


async def test_a_flood_of_binary_frames_logs_one_warning(caplog, monkeypatch):
    from generator.runtime._http_server import LogThrottle

    monkeypatch.setattr(ws, "_throttle", LogThrottle(ws._log, 60.0))  # none logged by an earlier test
    with caplog.at_level("WARNING", logger=ws._log.name):
        async with asyncio.timeout(TIMEOUT), ws.serve_transports(echo, port=0) as server, connect(server.url) as raw:
            for _ in range(200):
                await raw.send(b"\x00")
            await raw.send('{"text":true}')
            assert await raw.recv() == '{"text":true}'
    assert sum("binary WebSocket frame" in record.getMessage() for record in caplog.records) == 1


async def send_until_dropped(writer: asyncio.StreamWriter, frame: bytes, limit: int) -> int:
    """Sends `frame` over and over, reading nothing: the bytes sent once the peer drops the
    socket, or `limit` if it never does."""
    block = frame * 1024
    sent = 0
    while sent < limit:
        try:
            writer.write(block)
            await writer.drain()
        except ConnectionError:
            return sent
        sent += len(block)
    return sent


PING = b"p" * 125
MASKED_PING = bytes([0x89, 0x80 | 125]) + b"mask" + PING  # FIN + ping, 125 bytes, masked
"""A ping as a client sends it (the mask does not matter)."""


async def flood_pings(url: str, limit: int) -> int:
    """Opens a WebSocket at `url` over a plain socket, then sends pings and reads none of the
    pongs: `send_until_dropped`."""
    host, _, rest = url.removeprefix("ws://").partition(":")
    port, _, path = rest.partition("/")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(
            f"GET /{path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 101 ")
        return await send_until_dropped(writer, MASKED_PING, limit)
    finally:
        writer.close()


async def test_a_client_that_floods_pings_and_reads_no_pongs_is_dropped(caplog, monkeypatch):
    from generator.runtime._http_server import LogThrottle

    monkeypatch.setattr(ws, "_throttle", LogThrottle(ws._log, 60.0))  # none logged by an earlier test
    limit = 64 << 20
    with caplog.at_level("WARNING", logger=ws._log.name):
        async with (
            asyncio.timeout(60),
            ws.serve_transports(echo, port=0, max_buffered_bytes=1 << 20) as server,
        ):
            sent = await flood_pings(server.url, limit)
            assert sent < limit, "the server answered every ping of a client that reads none"
            async with connect(server.url) as raw:  # a client that reads is served on
                await raw.send('{"a":1}')
                assert await raw.recv() == '{"a":1}'
    assert sum("reads none of the" in record.getMessage() for record in caplog.records) == 1


async def test_an_agent_that_floods_pings_and_reads_no_pongs_is_dropped():
    """The client's side, against a raw server that upgrades, then sends pings (unmasked, as a
    server does) and reads nothing."""
    limit = 64 << 20
    sent: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            key = next(
                line.split(b":", 1)[1].strip()
                for line in request.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key:")
            )
            accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            writer.write(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
            )
            sent.set_result(await send_until_dropped(writer, bytes([0x89, 125]) + PING, limit))
        finally:
            writer.close()

    async with asyncio.timeout(60), await asyncio.start_server(flood, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with ws.open_websocket(f"ws://127.0.0.1:{port}/acp", max_buffered_bytes=1 << 20) as transport:
            assert await sent < limit, "the client answered every ping of an agent that reads none"
            assert await transport.receive() is None
