"""generator/runtime/_http_client.py against a scripted server (httpx.MockTransport, no network):
the HTTP error mapping the TypeScript SDK's `createHttpStream` documents, case by case."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from generator.runtime import _http_client as hc

URL = "http://agent.test/acp"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
TIMEOUT = 5


class Server:
    """A scripted Streamable HTTP server: `post(message, headers)` decides each POST's answer;
    the SSE streams stay open until `end()`, and carry what `push(stream, message)` puts there."""

    def __init__(self, post: Callable[[Any, httpx.Headers], httpx.Response] | None = None) -> None:
        self.post = post or (lambda message, headers: httpx.Response(202))
        self.requests: list[tuple[str, Any, httpx.Headers]] = []
        self.streams: dict[str | None, asyncio.Queue[bytes | None]] = {}
        self.get_status: dict[str | None, int] = {}

    def queue(self, stream: str | None) -> asyncio.Queue[bytes | None]:
        return self.streams.setdefault(stream, asyncio.Queue())

    def push(self, stream: str | None, message: Any) -> None:
        self.queue(stream).put_nowait(json.dumps(message).encode())

    def end(self, stream: str | None) -> None:
        self.queue(stream).put_nowait(None)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        session = request.headers.get("Acp-Session-Id")
        if request.method == "GET":
            self.requests.append(("GET", session, request.headers))
            status = self.get_status.get(session, 200)
            if status != 200:
                return httpx.Response(status, text="conflict")
            return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=self.events(session))
        if request.method == "DELETE":
            self.requests.append(("DELETE", None, request.headers))
            return httpx.Response(202)
        message = json.loads(request.content)
        self.requests.append(("POST", message, request.headers))
        if message.get("method") == "initialize":
            result = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 2}}
            return httpx.Response(200, json=result, headers={"Acp-Connection-Id": "c1"})
        return self.post(message, request.headers)

    async def events(self, stream: str | None) -> AsyncIterator[bytes]:
        queue = self.queue(stream)
        yield b":\n\n"  # a keep-alive
        while (message := await queue.get()) is not None:
            yield b"data: " + message + b"\n\n"

    def posted(self) -> list[Any]:
        return [message for method, message, _ in self.requests if method == "POST"]


async def connected(server: Server) -> hc.HttpClientTransport:
    transport = hc.HttpClientTransport(URL, client=httpx.AsyncClient(transport=httpx.MockTransport(server.handle)))
    await transport.send(json.dumps(INIT).encode())
    assert json.loads(await next_message(transport))["result"] == {"protocolVersion": 2}
    return transport


async def next_message(transport: hc.HttpClientTransport) -> bytes:
    message = await asyncio.wait_for(transport.receive(), TIMEOUT)
    assert message is not None
    return message


def request(request_id: int, method: str = "m", session: str | None = None) -> bytes:
    params = {"sessionId": session} if session else {}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


async def test_initialize_then_posts_carry_the_connection_and_the_streams_deliver():
    server = Server()
    transport = await connected(server)
    server.push(None, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}})
    assert json.loads(await next_message(transport))["id"] == 1
    await transport.send(request(2, "session/prompt", "s1"))  # waits until the session's stream is open
    gets = [(session, headers["Acp-Connection-Id"]) for method, session, headers in server.requests if method == "GET"]
    assert gets == [(None, "c1"), ("s1", "c1")]
    post = server.requests[-1]
    assert (post[2]["Acp-Connection-Id"], post[2]["Acp-Session-Id"]) == ("c1", "s1")
    # the agent's request on the session's stream is answered with that session's header
    server.push("s1", {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {}})
    assert json.loads(await next_message(transport))["id"] == 7
    await transport.send(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}).encode())
    assert server.requests[-1][2]["Acp-Session-Id"] == "s1"
    await transport.close()
    assert server.requests[-1][0] == "DELETE" and server.requests[-1][2]["Acp-Connection-Id"] == "c1"
    assert await transport.receive() is None


async def test_another_error_of_a_requests_post_fails_only_that_request_with_the_body_cut_at_8_kib():
    server = Server(lambda message, headers: httpx.Response(502 if message["id"] == 1 else 202, text="x" * 10_000))
    transport = await connected(server)
    await transport.send(request(1))
    error = json.loads(await next_message(transport))
    assert error["id"] == 1 and error["error"]["code"] == -32603
    assert error["error"]["data"] == {"status": 502, "body": "x" * 8192}
    await transport.send(request(2))  # the transport is still open
    assert server.posted()[-1]["id"] == 2
    server2 = Server(lambda message, headers: httpx.Response(500, json={"detail": "boom"}))
    transport2 = await connected(server2)
    await transport2.send(request(1))
    assert json.loads(await next_message(transport2))["error"]["data"] == {"status": 500, "body": {"detail": "boom"}}
    for each in (transport, transport2):
        await each.close()


@pytest.mark.parametrize("status", [401, 403, 404, 410])
async def test_401_403_404_410_close_the_transport(status):
    server = Server(lambda message, headers: httpx.Response(status))
    transport = await connected(server)
    with pytest.raises(ConnectionError):
        await transport.send(request(1))
    assert await asyncio.wait_for(transport.receive(), TIMEOUT) is None
    with pytest.raises(ConnectionError):
        await transport.send(request(2))


async def test_a_failed_post_of_a_notification_or_a_response_closes_the_transport():
    for message in ({"jsonrpc": "2.0", "method": "n"}, {"jsonrpc": "2.0", "id": 3, "result": {}}):
        transport = await connected(Server(lambda message, headers: httpx.Response(500)))
        with pytest.raises(ConnectionError):
            await transport.send(json.dumps(message).encode())
        assert await asyncio.wait_for(transport.receive(), TIMEOUT) is None


async def test_a_409_fails_its_session_until_it_is_reattached_and_leaves_the_others_alone():
    server = Server()
    server.get_status["s1"] = 409
    transport = await connected(server)
    await transport.send(request(1, "session/prompt", "s1"))
    error = json.loads(await next_message(transport))
    assert (error["id"], error["error"]["data"]["status"]) == (1, 409)
    posts = len(server.posted())
    await transport.send(request(2, "session/prompt", "s1"))  # not posted: the session stays failed
    assert json.loads(await next_message(transport))["error"]["data"]["status"] == 409
    assert len(server.posted()) == posts
    await transport.send(request(3, "session/prompt", "s2"))  # another session
    assert server.posted()[-1]["id"] == 3
    del server.get_status["s1"]
    await transport.send(request(4, "session/load", "s1"))  # reattaches
    assert server.posted()[-1]["id"] == 4
    await transport.send(request(5, "session/prompt", "s1"))
    assert server.posted()[-1]["id"] == 5
    await transport.close()


async def test_a_409_of_a_sessions_post_fails_the_session():
    server = Server(lambda message, headers: httpx.Response(409 if message["id"] == 1 else 202))
    transport = await connected(server)
    await transport.send(request(1, "session/prompt", "s1"))
    assert json.loads(await next_message(transport))["error"]["data"]["status"] == 409
    await transport.send(request(2, "session/prompt", "s1"))
    assert json.loads(await next_message(transport))["id"] == 2
    assert [message["id"] for message in server.posted()[1:]] == [1]
    await transport.close()


async def test_the_end_of_a_sessions_stream_fails_its_requests_in_flight_and_the_next_message_reopens_it():
    server = Server()
    transport = await connected(server)
    await transport.send(request(1, "session/prompt", "s1"))
    server.end("s1")
    error = json.loads(await next_message(transport))
    assert error["id"] == 1 and "session SSE stream closed" in error["error"]["message"]
    server.streams.pop("s1")
    await transport.send(request(2, "session/prompt", "s1"))
    assert [session for method, session, _ in server.requests if method == "GET"] == [None, "s1", "s1"]
    server.end(None)  # the connection's stream ends: so does the transport
    assert await asyncio.wait_for(transport.receive(), TIMEOUT) is None


async def test_initialize_must_come_first_and_be_answered_with_the_connection():
    transport = hc.HttpClientTransport(URL, client=httpx.AsyncClient(transport=httpx.MockTransport(Server().handle)))
    with pytest.raises(ValueError, match="initialize"):
        await transport.send(request(1))
    missing = httpx.MockTransport(lambda request: httpx.Response(200, json={"jsonrpc": "2.0", "id": 0, "result": {}}))
    transport = hc.HttpClientTransport(URL, client=httpx.AsyncClient(transport=missing))
    with pytest.raises(ConnectionError, match="Acp-Connection-Id"):
        await transport.send(json.dumps(INIT).encode())
    refused = httpx.MockTransport(lambda request: httpx.Response(401, text="no"))
    transport = hc.HttpClientTransport(URL, client=httpx.AsyncClient(transport=refused))
    with pytest.raises(ConnectionError, match="401"):
        await transport.send(json.dumps(INIT).encode())
    assert await transport.receive() is None


async def test_at_most_max_connections_posts_are_in_flight_the_rest_wait_their_turn():
    server, release = Server(), asyncio.Event()
    in_flight: list[Any] = []

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or json.loads(request.content)["method"] == "initialize":
            return await server.handle(request)
        in_flight.append(request)
        await release.wait()
        return httpx.Response(202)

    transport = hc.HttpClientTransport(URL, client=httpx.AsyncClient(transport=httpx.MockTransport(handle)))
    await transport.send(json.dumps(INIT).encode())
    await next_message(transport)
    sends = [asyncio.create_task(transport.send(request(i))) for i in range(1, 3 * hc.MAX_CONNECTIONS)]
    await asyncio.sleep(0.1)
    assert len(in_flight) == hc.MAX_CONNECTIONS
    release.set()
    await asyncio.wait_for(asyncio.gather(*sends), TIMEOUT)
    assert len(in_flight) == 3 * hc.MAX_CONNECTIONS - 1
    await transport.close()


async def test_the_transports_share_one_tls_context_made_once():
    """httpx makes a TLS context for each client it is not given one (its CA bundle loaded
    again, ~24 ms here, even for `http://`): the transports are given one, made once."""
    hc.default_ssl_context.cache_clear()
    first, second = (hc.HttpClientTransport("http://127.0.0.1:9/acp") for _ in range(2))
    try:
        contexts = [transport._http._transport._pool._ssl_context for transport in (first, second)]
        assert contexts[0] is contexts[1] is hc.default_ssl_context()
        assert hc.default_ssl_context.cache_info().misses == 1
        assert contexts[0].verify_mode.name == "CERT_REQUIRED" and contexts[0].check_hostname  # httpx's defaults
    finally:
        await first.close()
        await second.close()


async def test_close_while_a_failure_ends_the_transport_returns_once_that_end_is_done():
    """The connection's stream ends (the server drained it): the transport ends itself, sending
    `DELETE`. A `close()` meanwhile waits for that end instead of returning at once with the
    stream's task still running (it outlived the connection)."""
    server = Server()
    deleting, answer_delete = asyncio.Event(), asyncio.Event()
    handle = server.handle

    async def slow_delete(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            deleting.set()
            await answer_delete.wait()
        return await handle(request)

    server.handle = slow_delete  # type: ignore[method-assign]
    transport = await connected(server)
    server.end(None)
    await asyncio.wait_for(deleting.wait(), TIMEOUT)
    closing = asyncio.ensure_future(transport.close())
    await asyncio.sleep(0.05)
    assert not closing.done()  # the DELETE of the failure is still on its way
    answer_delete.set()
    await asyncio.wait_for(closing, TIMEOUT)
    assert [method for method, _, _ in server.requests].count("DELETE") == 1
    assert await transport.receive() is None
