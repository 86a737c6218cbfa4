"""generator/runtime/_http11.py (the HTTP client's lean POSTs) against a scripted HTTP/1.1 server
on 127.0.0.1: framing by Content-Length, chunked and end of connection, keep-alive reuse and its
end, a server that closes early, headers that would break the request; and the HTTP client
posting through it, its error mapping included."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from generator.runtime import _http11
from generator.runtime import _http_client as hc

TIMEOUT = 5


class Scripted:
    """Answers each request with the next of `answers` (raw bytes); `None` closes the connection
    without answering. Records every request (its head lines and body) and each connection."""

    def __init__(self, answers: list[bytes | None]) -> None:
        self.answers = answers
        self.requests: list[tuple[list[str], bytes]] = []
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")[:-2]
                length = next(int(line.split(":")[1]) for line in head if line.lower().startswith("content-length"))
                self.requests.append((head, await reader.readexactly(length)))
                answer = self.answers.pop(0)
                if answer is None:
                    break
                writer.write(answer)
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def serving(answers: list[bytes | None]) -> AsyncIterator[tuple[Scripted, str]]:
    scripted = Scripted(answers)
    server = await asyncio.start_server(scripted.handle, "127.0.0.1", 0)
    try:
        yield scripted, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/acp?x=1"
    finally:
        server.close()
        await server.wait_closed()


ACCEPTED = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"


async def test_responses_framed_by_length_chunks_or_the_end_of_the_connection():
    chunked = b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nMiss\r\n3;x=y\r\ning\r\n0\r\n\r\n"
    until_end = b"HTTP/1.1 500 Oops\r\nX-A: 1\r\nX-A: 2\r\n\r\nto the end"
    async with asyncio.timeout(TIMEOUT), serving([ACCEPTED, chunked, until_end, ACCEPTED]) as (server, url):
        poster = _http11.Poster(url, max_body_bytes=1000)
        first = await poster.post(b'{"a":1}', [("Acp-Connection-Id", "c1")])
        assert (first.status, first.body) == (202, b"")
        second = await poster.post(b"{}", [])
        assert (second.status, second.body) == (400, b"Missing")
        third = await poster.post(b"{}", [])
        assert (third.status, third.body, third.header_values("x-a")) == (500, b"to the end", ["1", "2"])
        assert (await poster.post(b"{}", [])).status == 202
        await poster.close()
    head, body = server.requests[0]
    assert head[0] == "POST /acp?x=1 HTTP/1.1" and "Acp-Connection-Id: c1" in head and body == b'{"a":1}'
    assert server.connections == 2  # kept alive until the response without a length ended it


async def test_a_kept_alive_connection_the_server_closed_is_not_reused():
    async with asyncio.timeout(TIMEOUT), serving([ACCEPTED]) as (server, url):
        poster = _http11.Poster(url, max_body_bytes=1000)
        assert (await poster.post(b"{}", [])).status == 202
        await asyncio.sleep(0.1)  # the server has closed the idle connection meanwhile
        server.answers.append(ACCEPTED)
        assert (await poster.post(b"{}", [])).status == 202
        await poster.close()
    assert server.connections == 2


async def test_a_server_that_closes_instead_of_answering_fails_that_post_only():
    async with asyncio.timeout(TIMEOUT), serving([ACCEPTED, None, ACCEPTED]) as (server, url):
        poster = _http11.Poster(url, max_body_bytes=1000)
        assert (await poster.post(b"{}", [])).status == 202
        with pytest.raises(_http11.Http11Error, match="closed the connection without a response"):
            await poster.post(b"{}", [])  # the server read it and closed: not retried (a POST)
        assert (await poster.post(b"{}", [])).status == 202
        await poster.close()
    assert server.connections == 2


async def test_malformed_or_oversized_responses_and_broken_headers_are_errors():
    answers: list[bytes | None] = [
        b"SPDY/3 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
    ]
    async with asyncio.timeout(TIMEOUT), serving(answers) as (_, url):
        poster = _http11.Poster(url, max_body_bytes=1000)
        with pytest.raises(_http11.Http11Error, match=r"not an HTTP/1\.1 status line"):
            await poster.post(b"{}", [])
        with pytest.raises(_http11.Http11Error, match="a response body of '5000' bytes"):
            await poster.post(b"{}", [])
        with pytest.raises(_http11.Http11Error, match="cut short or malformed"):
            await poster.post(b"{}", [])
        with pytest.raises(ValueError, match="line break"):
            await poster.post(b"{}", [("X-Evil", "a\r\nInjected: 1")])
        await poster.close()
    with pytest.raises(ValueError, match="expected an http:// or https:// URL, found 'ws://h/acp'"):
        _http11.Poster("ws://h/acp", max_body_bytes=1)


def response(status: int, body: bytes = b"", headers: str = "") -> bytes:
    return f"HTTP/1.1 {status} X\r\ncontent-length: {len(body)}\r\n{headers}\r\n".encode() + body


async def test_the_http_client_posts_through_it_with_its_headers_cookies_and_error_mapping():
    """After initialize (httpx), the client's POSTs go through the lean poster: its headers, the
    cookies of the connection, and the HTTP error mapping (a request's 500 fails only it, with
    the body cut at 8 KiB; a 404 closes the transport)."""
    answers: list[bytes | None] = [
        response(202, headers="Set-Cookie: worker=w2; Path=/\r\n"),
        response(500, b"x" * 9000),
        response(404),
    ]
    async with asyncio.timeout(TIMEOUT), serving(answers) as (server, url):
        transport = hc.HttpClientTransport(url, headers={"Authorization": "Bearer t", "Cookie": "mine=1"})
        transport.connection_id = "c1"  # as if initialize had been answered
        await transport.send(json.dumps({"jsonrpc": "2.0", "method": "n"}).encode())
        await transport.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "m"}).encode())
        failure: Any = json.loads(await transport.receive() or b"null")
        assert failure["id"] == 7 and failure["error"]["code"] == -32603
        assert failure["error"]["data"] == {"status": 500, "body": "x" * 8192}
        with pytest.raises(ConnectionResetError, match="404"):
            await transport.send(json.dumps({"jsonrpc": "2.0", "method": "n"}).encode())
        assert await transport.receive() is None  # closed
    first, second = (dict(line.split(": ", 1) for line in head[1:]) for head, _ in server.requests[:2])
    assert (first["Acp-Connection-Id"], first["Authorization"], first["Cookie"]) == ("c1", "Bearer t", "mine=1")
    assert second["Cookie"] == "worker=w2; mine=1"  # the cookie the server set, sent back
