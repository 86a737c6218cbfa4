"""generator/runtime/_http_server.py under uvicorn on 127.0.0.1 (one server per test, bounded in
time), driven by raw httpx requests: the status codes the TypeScript SDK's `AcpServer` answers,
the streams each message goes out on, keep-alives, and the checks before any message."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import pytest

from generator.runtime import _http_server as hs
from generator.runtime._connection import Transport
from tests.support.helpers import uvicorn_serving

TIMEOUT = 10
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
JSON = {"Content-Type": "application/json"}
SSE = {"Accept": "text/event-stream"}


class Agent:
    """A raw agent: answers `initialize`, `session/new` (`s1`); `ask` first asks the client
    `session/request_permission` about the params' session; records what else it gets."""

    def __init__(self) -> None:
        self.received: list[Any] = []

    async def __call__(self, transport: Transport) -> None:
        asked = 0
        while (data := await transport.receive()) is not None:
            message = json.loads(data)
            self.received.append(message)
            if "method" not in message or "id" not in message:
                continue
            params = message.get("params") or {}
            if message["method"] == "ask":
                asked += 1
                question = {"sessionId": params["sessionId"]}
                await send(transport, {"id": f"a{asked}", "method": "session/request_permission", "params": question})
            result = {"sessionId": "s1"} if message["method"] == "session/new" else {"echo": params}
            await send(transport, {"id": message["id"], "result": result})


async def send(transport: Transport, message: dict[str, Any]) -> None:
    await transport.send(json.dumps({"jsonrpc": "2.0", **message}).encode())


async def initialize(http: httpx.AsyncClient, url: str) -> str:
    response = await http.post(url, json=INIT)
    assert response.status_code == 200 and response.json() == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"echo": {"protocolVersion": 2}},
    }
    return response.headers["Acp-Connection-Id"]


class Events:
    """One SSE stream, read event by event."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.aiter_lines()
        self.comments = 0

    async def next(self) -> Any:
        data = []
        async with asyncio.timeout(TIMEOUT):
            async for line in self.lines:
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and data:
                    return json.loads("\n".join(data))
        raise EOFError


@contextlib.asynccontextmanager
async def events(http: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> AsyncIterator[Events]:
    async with http.stream("GET", url, headers={**SSE, **headers}) as response:
        assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
        yield Events(response)


async def test_the_status_codes_of_acp_server():
    agent = Agent()
    async with (
        asyncio.timeout(TIMEOUT),
        uvicorn_serving(hs.AcpHttpApp(agent, max_message_bytes=1000)) as url,
        httpx.AsyncClient() as http,
    ):
        assert (await http.post(url.replace("/acp", "/other"), json=INIT)).status_code == 404
        assert (await http.put(url, json=INIT)).status_code == 405
        assert (
            await http.post(url, content=json.dumps(INIT), headers={"Content-Type": "text/plain"})
        ).status_code == 415
        assert (await http.post(url, content="{", headers=JSON)).status_code == 400
        batch = await http.post(url, json=[INIT])
        assert batch.status_code == 400 and batch.json()["id"] is None and batch.json()["error"]["code"] == -32600
        assert (await http.post(url, json=3)).status_code == 400
        assert (await http.post(url, json={"jsonrpc": "2.0", "method": "n"})).status_code == 400  # no connection
        unknown = {"Acp-Connection-Id": "nope"}
        assert (await http.post(url, json={"jsonrpc": "2.0", "method": "n"}, headers=unknown)).status_code == 404
        assert (await http.post(url, json={"x": "y" * 1000})).status_code == 413
        assert (await http.post(url, json=INIT, headers=unknown)).status_code == 400  # initialize on a connection
        connection = {"Acp-Connection-Id": await initialize(http, url)}
        assert (await http.get(url, headers=connection)).status_code == 406
        assert (await http.get(url, headers=SSE)).status_code == 400
        assert (await http.get(url, headers={**SSE, **unknown})).status_code == 404
        assert (await http.delete(url)).status_code == 400
        assert (await http.delete(url, headers=unknown)).status_code == 404
        assert (await http.post(url, json={"jsonrpc": "2.0", "method": "n"}, headers=connection)).status_code == 202
        assert (await http.delete(url, headers=connection)).status_code == 202
        assert (await http.post(url, json={"jsonrpc": "2.0", "method": "m"}, headers=connection)).status_code == 404
        assert (await http.delete(url, headers=connection)).status_code == 404
    assert agent.received == [INIT, {"jsonrpc": "2.0", "method": "n"}]


async def test_messages_go_out_on_the_connections_stream_and_their_sessions_streams():
    agent = Agent()
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(hs.AcpHttpApp(agent)) as url, httpx.AsyncClient() as http:
        connection = {"Acp-Connection-Id": await initialize(http, url)}
        session = {**connection, "Acp-Session-Id": "s1"}
        async with events(http, url, connection) as main:
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}}
            assert (await http.post(url, json=new, headers=connection)).status_code == 202
            assert await main.next() == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}
            async with events(http, url, session) as s1:
                assert (await http.get(url, headers={**SSE, **session})).status_code == 409  # one receiver
                ask = {"jsonrpc": "2.0", "id": 2, "method": "ask", "params": {"sessionId": "s1"}}
                assert (await http.post(url, json=ask, headers=connection)).status_code == 400  # missing
                mismatched = {**connection, "Acp-Session-Id": "s2"}
                assert (await http.post(url, json=ask, headers=mismatched)).status_code == 400
                prompt = {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {}}
                assert (await http.post(url, json=prompt, headers=connection)).status_code == 400  # session-scoped
                assert (await http.post(url, json=ask, headers=session)).status_code == 202
                question = await s1.next()
                assert (question["id"], question["method"]) == ("a1", "session/request_permission")
                assert (await s1.next())["id"] == 2  # the answer goes out on the stream of its session
                # the client's answer to a session's request: matched by id, with or without the header
                # (the Python SDK 0.12.1 sends none); a mismatched one is refused
                answer = {"jsonrpc": "2.0", "id": "a1", "result": {"outcome": {"outcome": "cancelled"}}}
                assert (await http.post(url, json=answer, headers=connection)).status_code == 202
                ask["id"] = 3
                assert (await http.post(url, json=ask, headers=session)).status_code == 202
                assert (await s1.next())["id"] == "a2"
                assert (await s1.next())["id"] == 3
                answer["id"] = "a2"
                assert (await http.post(url, json=answer, headers=mismatched)).status_code == 400
                assert (await http.post(url, json=answer, headers=session)).status_code == 202
            # a message posted without a session goes out on the connection's stream
            ping = {"jsonrpc": "2.0", "id": 4, "method": "ping"}
            assert (await http.post(url, json=ping, headers=connection)).status_code == 202
            assert await main.next() == {"jsonrpc": "2.0", "id": 4, "result": {"echo": {}}}
            assert (await http.delete(url, headers=connection)).status_code == 202
            try:
                await main.next()
                raise AssertionError("the stream goes on after DELETE")
            except EOFError:
                pass  # DELETE ends the connection's streams
    answers = [message for message in agent.received if "method" not in message]
    assert [answer["id"] for answer in answers] == ["a1", "a2"]


async def test_a_stream_without_messages_gets_keep_alives():
    async with (
        asyncio.timeout(TIMEOUT),
        uvicorn_serving(hs.AcpHttpApp(Agent(), keep_alive=0.05)) as url,
        httpx.AsyncClient() as http,
    ):
        connection = {"Acp-Connection-Id": await initialize(http, url)}
        async with http.stream("GET", url, headers={**SSE, **connection}) as response:
            lines = response.aiter_lines()
            assert [await anext(lines), await anext(lines), await anext(lines)] == [":", "", ":"]
        await http.delete(url, headers=connection)


async def test_origin_and_authorization_are_checked_before_any_message():
    agent = Agent()

    async def authorize(request: hs.AuthRequest) -> bool:
        return request.headers.get("authorization") == "Bearer t"

    app = hs.AcpHttpApp(agent, allowed_origins=["https://editor.example"], authorize=authorize)
    good = {"Authorization": "Bearer t"}
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        assert (await http.post(url, json=INIT)).status_code == 401
        assert (await http.post(url, json=INIT, headers={"Authorization": "Bearer x"})).status_code == 401
        assert (await http.post(url, json=INIT, headers={**good, "Origin": "https://evil.example"})).status_code == 403
        allowed = await http.post(url, json=INIT, headers={**good, "Origin": "https://editor.example"})
        assert allowed.status_code == 200
        await http.delete(url, headers={**good, "Acp-Connection-Id": allowed.headers["Acp-Connection-Id"]})
    assert agent.received == [INIT]


async def test_authorize_sees_the_method_path_query_client_headers_cookies_and_named_connection():
    seen: list[hs.AuthRequest] = []

    def authorize(request: hs.AuthRequest) -> str:
        seen.append(request)
        return "alice"

    app = hs.AcpHttpApp(Agent(), authorize=authorize)
    cookies = 'session=abc; theme="dark"; session=later; flag'
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        opened = await http.post(f"{url}?tenant=blue&x=1", json=INIT, headers={"X-Tenant": "Blue", "Cookie": cookies})
        connection_id = opened.headers["Acp-Connection-Id"]
        assert (await http.delete(url, headers={"Acp-Connection-Id": connection_id})).status_code == 202
    first, second = seen
    assert (first.method, first.path, first.query, first.transport) == ("POST", "/acp", "tenant=blue&x=1", "http")
    assert first.connection_id is None  # initialize names none
    assert first.client is not None and first.client[0] == "127.0.0.1" and first.client[1] > 0
    assert first.headers["x-tenant"] == "Blue" and "X-Tenant" not in first.headers
    assert dict(first.cookies) == {"session": "abc", "theme": "dark"}
    assert (second.method, second.query, second.connection_id) == ("DELETE", "", connection_id)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.method = "GET"  # type: ignore[misc]
    headers: Any = first.headers
    with pytest.raises(TypeError):
        headers["x-tenant"] = "Red"


async def test_a_connection_belongs_to_its_principal_and_another_principal_is_refused_403():
    agent = Agent()
    tokens = {"Bearer a": "alice", "Bearer b": "bob", "Bearer f": False}

    def authorize(request: hs.AuthRequest) -> str | bool | None:
        return tokens.get(request.headers.get("authorization", ""))

    app = hs.AcpHttpApp(agent, authorize=authorize)
    alice, bob = {"Authorization": "Bearer a"}, {"Authorization": "Bearer b"}
    from_alice = {"jsonrpc": "2.0", "method": "from/alice"}
    from_bob = {"jsonrpc": "2.0", "method": "from/bob"}
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        assert (await http.post(url, json=INIT)).status_code == 401  # None: refused
        assert (await http.post(url, json=INIT, headers={"Authorization": "Bearer f"})).status_code == 401
        opened = await http.post(url, json=INIT, headers=alice)
        assert opened.status_code == 200
        named = {"Acp-Connection-Id": opened.headers["Acp-Connection-Id"]}
        assert (await http.post(url, json=from_bob, headers={**bob, **named})).status_code == 403
        assert (await http.get(url, headers={**bob, **named, **SSE})).status_code == 403
        assert (await http.delete(url, headers={**bob, **named})).status_code == 403
        assert (await http.post(url, json=from_alice, headers={**alice, **named})).status_code == 202
        while len(agent.received) < 2:
            await asyncio.sleep(0.01)
        assert agent.received == [INIT, from_alice]  # bob's message never reached the agent
        assert len(app.connections) == 1  # nor did his DELETE end the connection
        assert (await http.delete(url, headers={**alice, **named})).status_code == 202


async def test_a_websocket_connection_carries_its_principal_to_the_handler():
    principals: list[object] = []

    async def handler(transport: Transport) -> None:
        principals.append(getattr(transport, "principal", None))
        await transport.close()

    seen: list[hs.AuthRequest] = []

    def authorize(request: hs.AuthRequest) -> str:
        seen.append(request)
        return "alice"

    from websockets.asyncio.client import connect

    app = hs.AcpHttpApp(handler, authorize=authorize)
    async with (
        asyncio.timeout(TIMEOUT),
        uvicorn_serving(app) as url,
        connect(f"{url}?room=1".replace("http", "ws", 1)) as raw,
    ):
        await raw.wait_closed()
    (request,) = seen
    assert (request.method, request.path, request.query, request.transport) == ("GET", "/acp", "room=1", "websocket")
    assert principals == ["alice"]


async def test_an_allowed_origin_gets_cors_a_preflight_and_every_response_readable_by_its_page():
    async def authorize(request: hs.AuthRequest) -> bool:
        return request.headers.get("authorization") == "Bearer t"

    page = {"Origin": "https://editor.example"}
    app = hs.AcpHttpApp(Agent(), allowed_origins=[page["Origin"]], authorize=authorize)
    preflight = {**page, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        answer = await http.options(url, headers=preflight)  # no Authorization: a browser sends none
        assert answer.status_code == 204
        assert answer.headers["Access-Control-Allow-Origin"] == page["Origin"]
        assert answer.headers["Access-Control-Allow-Credentials"] == "true"
        assert answer.headers["Access-Control-Allow-Methods"] == "GET, POST, DELETE"
        allowed = {name.strip().lower() for name in answer.headers["Access-Control-Allow-Headers"].split(",")}
        assert allowed == {"acp-connection-id", "acp-session-id", "authorization", "content-type"}
        assert answer.headers["Vary"] == "Origin" and answer.headers["Access-Control-Max-Age"] == "600"

        refused = await http.options(url, headers={**preflight, "Origin": "https://evil.example"})
        assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused.headers
        not_preflight = await http.options(url, headers={"Authorization": "Bearer t"})
        assert not_preflight.status_code == 405  # as AcpServer answers

        good = {**page, "Authorization": "Bearer t"}
        opened = await http.post(url, json=INIT, headers=good)
        assert opened.status_code == 200 and opened.headers["Access-Control-Allow-Origin"] == page["Origin"]
        assert opened.headers["Access-Control-Expose-Headers"] == "Acp-Connection-Id, Acp-Session-Id"
        assert opened.headers["Vary"] == "Origin"
        connection = {"Acp-Connection-Id": opened.headers["Acp-Connection-Id"]}
        async with http.stream("GET", url, headers={**good, **SSE, **connection}) as stream:
            assert stream.status_code == 200 and stream.headers["Access-Control-Allow-Origin"] == page["Origin"]
        for failed in (  # errors are readable by the page too
            await http.post(url, json=INIT, headers={**page, "Authorization": "Bearer x"}),
            await http.delete(url, headers={**good, "Acp-Connection-Id": "unknown"}),
        ):
            assert failed.status_code in (401, 404) and failed.headers["Access-Control-Allow-Origin"] == page["Origin"]
        without_origin = await http.post(url, json=INIT, headers={"Authorization": "Bearer t"})
        assert without_origin.status_code == 200 and "Access-Control-Allow-Origin" not in without_origin.headers
        for ended in (connection, {"Acp-Connection-Id": without_origin.headers["Acp-Connection-Id"]}):
            assert (await http.delete(url, headers={**good, **ended})).status_code in (200, 202, 204)


async def test_an_agent_whose_client_reads_nothing_waits_then_loses_the_connection():
    outcome: list[str] = []

    async def flood(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        try:
            for _ in range(100):  # nobody reads the connection's stream
                await send(transport, {"method": "note", "params": {"text": "x" * 100}})
        except ConnectionError as error:
            outcome.append(str(error))

    app = hs.AcpHttpApp(flood, max_buffered_bytes=1000, max_output_stall=0.3)
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        response = await http.post(url, json=INIT)
        connection = {"Acp-Connection-Id": response.headers["Acp-Connection-Id"]}
        while not outcome:
            await asyncio.sleep(0.05)
        assert outcome == ["the client stopped reading its output"]
        assert (await http.post(url, json={"jsonrpc": "2.0", "method": "n"}, headers=connection)).status_code == 404


async def test_the_websocket_of_the_app_shares_its_path_and_its_checks():
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    agent = Agent()
    app = hs.AcpHttpApp(agent, allowed_origins=["https://editor.example"], max_message_bytes=1000)
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url:
        ws_url = url.replace("http", "ws", 1)
        for bad, status in ((ws_url.replace("/acp", "/x"), 404), (ws_url, 403)):
            try:
                async with connect(bad, origin="https://evil.example"):  # type: ignore[arg-type]
                    raise AssertionError("upgraded")
            except InvalidStatus as error:
                assert error.response.status_code == status
        async with connect(ws_url, close_timeout=1) as socket_:
            assert socket_.response is not None
            instance, _, token = socket_.response.headers["Acp-Connection-Id"].partition(".")
            assert instance == app.instance and len(token) == 32
            await socket_.send(json.dumps(INIT))
            assert json.loads(await socket_.recv())["result"] == {"echo": {"protocolVersion": 2}}
            await socket_.send("x" * 1001)
            await socket_.wait_closed()
            assert socket_.close_code == 1009
    assert agent.received == [INIT]


async def test_a_post_body_over_max_request_body_bytes_is_refused_413_declared_or_not():
    agent = Agent()
    app = hs.AcpHttpApp(agent, max_request_body_bytes=500)

    async def chunked(data: bytes) -> AsyncIterator[bytes]:  # no Content-Length: the body is counted as read
        for start in range(0, len(data), 100):
            yield data[start : start + 100]

    big = json.dumps({**INIT, "params": {"protocolVersion": 2, "pad": "x" * 500}}).encode()
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        declared = await http.post(url, content=big, headers=JSON)
        assert (declared.status_code, declared.text) == (413, "Request body exceeds 500 bytes")
        assert (await http.post(url, content=chunked(big), headers=JSON)).status_code == 413
        await initialize(http, url)
    assert agent.received == [INIT]


async def test_ids_over_max_id_length_are_refused_400_and_close_the_websocket_1008():
    from websockets.asyncio.client import connect

    agent = Agent()
    app = hs.AcpHttpApp(agent, max_id_length=8)
    long_id = "i" * 9
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        refused = await http.post(url, json={**INIT, "id": long_id})
        assert (refused.status_code, refused.text) == (400, "Request ID exceeds maxIdLength (8)")
        connection = {"Acp-Connection-Id": await initialize(http, url)}
        request = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}}
        for message, headers in (
            ({**request, "id": long_id}, connection),
            ({**request, "params": {"sessionId": long_id}}, {**connection, "Acp-Session-Id": long_id}),
            ({**request, "method": "n"}, {**connection, "Acp-Session-Id": long_id}),
        ):
            answer = await http.post(url, json=message, headers=headers)
            assert answer.status_code == 400 and "exceeds maxIdLength (8)" in answer.text, message
        stream = await http.get(url, headers={**SSE, **connection, "Acp-Session-Id": long_id})
        assert (stream.status_code, stream.text) == (400, "Session ID exceeds maxIdLength (8)")
        assert (await http.post(url, json={**request, "id": "i" * 8}, headers=connection)).status_code == 202
        async with connect(url.replace("http", "ws", 1), close_timeout=1) as socket_:
            await socket_.send(json.dumps(INIT))
            await socket_.recv()
            await socket_.send(json.dumps({**request, "id": long_id}))
            await socket_.wait_closed()
            assert socket_.close_code == 1008
    assert [message["id"] for message in agent.received] == [0, "i" * 8, 0]


async def test_an_agent_issuing_a_session_id_over_max_id_length_loses_the_connection():
    outcome: list[str] = []

    async def agent(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        try:
            await send(transport, {"method": "session/update", "params": {"sessionId": "s" * 9}})
        except ConnectionError as error:
            outcome.append(str(error))

    app = hs.AcpHttpApp(agent, max_id_length=8)
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        connection = {"Acp-Connection-Id": (await http.post(url, json=INIT)).headers["Acp-Connection-Id"]}
        while not outcome:
            await asyncio.sleep(0.02)
        assert (await http.post(url, json={"jsonrpc": "2.0", "method": "n"}, headers=connection)).status_code == 404
    assert outcome == ["the connection closed: its agent issued a session ID over maxIdLength (8)"]


async def test_output_for_more_sessions_than_max_buffered_session_streams_ends_the_connection():
    outcome: list[str] = []

    async def agent(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        try:
            for session in ("s1", "s2", "s1", "s3"):  # nobody receives any session's stream
                await send(transport, {"method": "session/update", "params": {"sessionId": session}})
                outcome.append(session)
        except ConnectionError as error:
            outcome.append(str(error))

    app = hs.AcpHttpApp(agent, max_buffered_session_streams=2)
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        await http.post(url, json=INIT)
        while len(outcome) < 4:
            await asyncio.sleep(0.02)
    assert outcome == [
        "s1",
        "s2",
        "s1",
        "the connection closed: its output would buffer more than maxBufferedSessionStreams (2) sessions",
    ]


class FakeHttp:
    """One ASGI HTTP request by hand: its body, then `http.disconnect` once `leave` is set."""

    def __init__(self, body: dict[str, Any], headers: Mapping[str, str]) -> None:
        self.scope = {
            "type": "http",
            "method": "POST",
            "path": "/acp",
            "headers": [(k.lower().encode(), v.encode()) for k, v in {**JSON, **headers}.items()],
        }
        self.body = json.dumps(body).encode()
        self.leave = asyncio.Event()
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if self.body:
            body, self.body = self.body, b""
            return {"type": "http.request", "body": body, "more_body": False}
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def status(self) -> int | None:
        return next((m["status"] for m in self.sent if m["type"] == "http.response.start"), None)


async def test_a_client_that_leaves_during_initialize_is_answered_499_and_leaves_no_connection():
    started = asyncio.Event()

    async def silent(transport: Transport) -> None:  # never answers initialize
        await transport.receive()
        started.set()
        await transport.receive()

    app = hs.AcpHttpApp(silent)
    request = FakeHttp(INIT, {})
    async with asyncio.timeout(TIMEOUT):
        posting = asyncio.ensure_future(app(request.scope, request.receive, request.send))
        await started.wait()
        assert len(app.connections) == 1 and request.status() is None
        request.leave.set()
        await posting
        assert request.status() == 499 and app.connections == {}
        await app.close()


async def test_a_request_is_held_back_while_output_waits_for_the_client_499_if_it_leaves():
    full = asyncio.Event()

    async def flood(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        full.set()
        await send(transport, {"method": "note", "params": {"text": "x" * 2000}})  # over the limit: waits
        while (data := await transport.receive()) is not None:
            received.append(json.loads(data))

    received: list[Any] = []
    app = hs.AcpHttpApp(flood, max_buffered_bytes=1000, max_output_stall=TIMEOUT)
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        connection = {"Acp-Connection-Id": (await http.post(url, json=INIT)).headers["Acp-Connection-Id"]}
        await full.wait()
        request = {"jsonrpc": "2.0", "id": 1, "method": "m"}
        leaving = FakeHttp({**request, "id": "gone"}, connection)
        left = asyncio.ensure_future(app({**leaving.scope}, leaving.receive, leaving.send))
        held = asyncio.ensure_future(http.post(url, json=request, headers=connection))
        notified = await http.post(url, json={"jsonrpc": "2.0", "method": "n"}, headers=connection)
        assert notified.status_code == 202  # a notification is not held back
        await asyncio.sleep(0.3)
        assert not held.done() and not left.done()
        leaving.leave.set()
        await left
        assert leaving.status() == 499
        async with events(http, url, connection) as stream:
            assert (await stream.next())["method"] == "note"
            assert (await held).status_code == 202
        while len(received) < 2:
            await asyncio.sleep(0.02)
    assert received == [{"jsonrpc": "2.0", "method": "n"}, request]


async def test_the_apps_websocket_drops_a_client_that_stops_reading():
    from websockets.asyncio.client import connect

    outcome: list[str] = []

    async def flood(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        text = secrets.token_hex(32768)  # random: permessage-deflate would shrink repeated text to nothing
        try:
            for _ in range(2000):  # 128 MiB at most; the client reads nothing
                await send(transport, {"method": "note", "params": {"text": text}})
        except ConnectionError as error:
            outcome.append(str(error))

    app = hs.AcpHttpApp(flood, max_output_stall=0.3)
    async with (
        asyncio.timeout(TIMEOUT),
        uvicorn_serving(app) as url,
        connect(url.replace("http", "ws", 1), max_queue=1, close_timeout=0.5) as socket_,
    ):
        await socket_.send(json.dumps(INIT))
        while not outcome:
            await asyncio.sleep(0.05)
    assert outcome == ["the client stopped reading"]


async def test_within_times_out_its_work_and_lets_other_cancellations_through():
    with pytest.raises(asyncio.TimeoutError):
        await hs.within(asyncio.sleep(10), 0.05)
    current = asyncio.current_task()
    assert current is not None and current.cancelling() == 0  # its own cancellation, handled
    await hs.within(asyncio.sleep(0), 0.05)
    await asyncio.sleep(0.1)  # the timer of a finished call fires never
    outer = asyncio.ensure_future(hs.within(asyncio.sleep(10), 10))
    await asyncio.sleep(0.01)
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer


class FakeRequest:
    """One ASGI HTTP request by hand, for what a real client cannot stage on cue: its body (in
    one chunk, `more_body` as given), then `http.disconnect` once `leave` is set; what the app
    sends after that is lost, as uvicorn drops it; `stuck` makes every send after the response's
    start wait forever (a client that stopped reading)."""

    def __init__(
        self,
        method: str,
        headers: Mapping[str, str],
        body: Any = None,
        *,
        more_body: bool = False,
        stuck: bool = False,
    ) -> None:
        headers = {**(JSON if body is not None else SSE), **headers}
        self.scope = {
            "type": "http",
            "method": method,
            "path": "/acp",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        }
        self.body = b"" if body is None else json.dumps(body).encode()
        self.more_body = more_body
        self.stuck = stuck
        self.leave = asyncio.Event()
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if self.body:
            body, self.body = self.body, b""
            return {"type": "http.request", "body": body, "more_body": self.more_body}
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if self.stuck and self.sent:
            await asyncio.Event().wait()
        if not self.leave.is_set():
            self.sent.append(message)

    def status(self) -> int | None:
        return next((m["status"] for m in self.sent if m["type"] == "http.response.start"), None)

    def events(self) -> list[tuple[int, Any]]:
        """The (id, message) of each server-sent event received."""
        text = b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body").decode()
        found = []
        for block in text.split("\n\n"):
            fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
            if "data" in fields:
                found.append((int(fields["id"]), json.loads(fields["data"])))
        return found


async def open_connection(app: hs.AcpHttpApp) -> dict[str, str]:
    """`initialize` posted to `app` in-process: the headers naming the new connection."""
    request = FakeRequest("POST", {}, INIT)
    await app(request.scope, request.receive, request.send)
    assert request.status() == 200
    headers = dict(next(m for m in request.sent if m["type"] == "http.response.start")["headers"])
    return {"Acp-Connection-Id": headers[b"acp-connection-id"].decode()}


async def post(app: hs.AcpHttpApp, headers: Mapping[str, str], message: Any) -> int | None:
    request = FakeRequest("POST", headers, message)
    await app(request.scope, request.receive, request.send)
    return request.status()


async def test_messages_queued_for_a_client_that_left_wait_for_its_return_and_last_event_id_replays():
    async def burst(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        await transport.receive()  # "burst"
        for n in range(30):
            await send(transport, {"method": "note", "params": {"n": n}})
        await transport.receive()

    app = hs.AcpHttpApp(burst)
    async with asyncio.timeout(TIMEOUT):
        connection = await open_connection(app)
        assert await post(app, connection, {"jsonrpc": "2.0", "method": "burst"}) == 202
        while (
            app.connections[connection["Acp-Connection-Id"]].streams[None].bytes == 0
            or len(app.connections[connection["Acp-Connection-Id"]].streams[None].messages) < 30
        ):
            await asyncio.sleep(0.01)
        blip = FakeRequest("GET", connection)
        blip.leave.set()  # gone before its stream starts: whatever is sent to it is lost
        await app(blip.scope, blip.receive, blip.send)
        back = FakeRequest("GET", {**connection, "Last-Event-ID": "0"})
        streaming = asyncio.ensure_future(app(back.scope, back.receive, back.send))
        while len(back.events()) < 30:
            await asyncio.sleep(0.01)
        assert back.events() == [(n + 1, {"jsonrpc": "2.0", "method": "note", "params": {"n": n}}) for n in range(30)]
        # a half-open receiver is taken over by a client resuming with Last-Event-ID
        again = FakeRequest("GET", {**connection, "Last-Event-ID": "28"})
        resumed = asyncio.ensure_future(app(again.scope, again.receive, again.send))
        await streaming  # the old receiver is ended
        while len(again.events()) < 2:  # one send each: the first may be seen alone
            await asyncio.sleep(0.01)
        assert again.status() == 200 and [id_ for id_, _ in again.events()] == [29, 30]
        assert (await post(app, connection, {"jsonrpc": "2.0", "method": "n"})) == 202
        second = FakeRequest("GET", connection)  # without Last-Event-ID: one receiver, as AcpServer
        await app(second.scope, second.receive, second.send)
        assert second.status() == 409
        again.leave.set()
        await resumed
        await app.close()


async def test_delete_at_the_concurrency_limit_releases_the_handler_its_queue_and_answers_parked_posts():
    cancelled = asyncio.Event()

    async def stuck(transport: Transport) -> None:  # answers initialize, then reads nothing more
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app = hs.AcpHttpApp(stuck, server_settings=hs.ServerSettings(close_grace=0.2))
    async with asyncio.timeout(TIMEOUT):
        connection = await open_connection(app)
        held = app.connections[connection["Acp-Connection-Id"]]
        for n in range(256):
            assert await post(app, connection, {"jsonrpc": "2.0", "method": "n", "params": {"n": n}}) == 202
        parked = [asyncio.ensure_future(post(app, connection, {"jsonrpc": "2.0", "method": "n"})) for _ in range(3)]
        await asyncio.sleep(0.1)
        assert not any(task.done() for task in parked)
        assert await _delete(app, connection) == 202
        assert await asyncio.gather(*parked) == [404, 404, 404]
        await cancelled.wait()
        while app._tasks:
            await asyncio.sleep(0.01)
        assert held.inbound.qsize() <= 1  # the end, nothing else


async def _delete(app: hs.AcpHttpApp, headers: Mapping[str, str]) -> int | None:
    request = FakeRequest("DELETE", headers)
    await app(request.scope, request.receive, request.send)
    return request.status()


async def test_a_stream_whose_client_stopped_reading_lets_the_server_shut_down():
    async def talker(transport: Transport) -> None:
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        await send(transport, {"method": "note"})
        await transport.receive()

    app = hs.AcpHttpApp(talker, max_output_stall=0.2)
    async with asyncio.timeout(TIMEOUT):
        connection = await open_connection(app)
        stalled = FakeRequest("GET", connection, stuck=True)
        await app(stalled.scope, stalled.receive, stalled.send)  # returns: its send gave up
        await app.close()
        assert stalled.status() == 200


async def test_invalid_requests_with_ids_leave_no_route_behind():
    async def reader(transport: Transport) -> None:  # as a connection: malformed envelopes answered `id: null`
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        while await transport.receive() is not None:
            await send(transport, {"id": None, "error": {"code": -32600, "message": "Invalid request"}})

    app = hs.AcpHttpApp(reader)
    async with asyncio.timeout(TIMEOUT):
        connection = await open_connection(app)
        for n in range(100):
            invalid = [
                {"jsonrpc": "1.0", "id": n, "method": "m"},
                {"jsonrpc": "2.0", "id": n, "method": 7},
                {"jsonrpc": "2.0", "id": n, "method": "m", "result": {}},
            ][n % 3]
            assert await post(app, connection, invalid) == 202
        assert app.connections[connection["Acp-Connection-Id"]].pending_routes == {}
        await app.close()


async def test_a_post_whose_client_leaves_before_its_body_ends_is_not_executed():
    agent = Agent()
    app = hs.AcpHttpApp(agent)
    async with asyncio.timeout(TIMEOUT):
        connection = await open_connection(app)
        cut = FakeRequest("POST", connection, {"jsonrpc": "2.0", "method": "cut"}, more_body=True)
        cut.leave.set()
        await app(cut.scope, cut.receive, cut.send)
        assert await post(app, connection, {"jsonrpc": "2.0", "method": "whole"}) == 202
        while len(agent.received) < 2:
            await asyncio.sleep(0.01)
        await app.close()
    assert [message["method"] for message in agent.received] == ["initialize", "whole"]


async def test_a_websocket_client_that_vanishes_while_its_handler_reads_nothing_ends_the_handler():
    cancelled = asyncio.Event()

    async def stuck(transport: Transport) -> None:  # at its concurrency limit: reads no more
        await transport.receive()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    frames = [
        {"type": "websocket.connect"},
        *(
            {"type": "websocket.receive", "text": json.dumps({"jsonrpc": "2.0", "id": n, "method": "m"})}
            for n in range(3)
        ),
        {"type": "websocket.disconnect", "code": 1006},
    ]

    async def receive() -> dict[str, Any]:
        if frames:
            return frames.pop(0)
        await asyncio.Event().wait()
        raise AssertionError

    async def ignore(message: dict[str, Any]) -> None:
        pass

    app = hs.AcpHttpApp(stuck, server_settings=hs.ServerSettings(close_grace=0.2))
    scope = {"type": "websocket", "path": "/acp", "headers": []}
    async with asyncio.timeout(TIMEOUT):
        await app(scope, receive, ignore)  # returns: the handler is ended
        assert cancelled.is_set() and not app._tasks


async def get_health(app: hs.AcpHttpApp) -> tuple[int | None, bytes]:
    request = FakeRequest("GET", {"Origin": "http://elsewhere"})
    request.scope["path"] = "/health"
    await app(request.scope, request.receive, request.send)
    return request.status(), b"".join(m.get("body", b"") for m in request.sent if m["type"] == "http.response.body")


async def test_the_health_endpoint_answers_before_any_check_and_drain_refuses_new_connections():
    async def agent(transport: Transport) -> None:  # answers initialize, then nothing: a turn running
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        while await transport.receive() is not None:
            pass

    async def refuse(request: hs.AuthRequest) -> bool:
        return "authorization" in request.headers

    app = hs.AcpHttpApp(agent, authorize=refuse)
    async with asyncio.timeout(TIMEOUT):
        assert await get_health(app) == (200, b"ok")  # no credentials, a foreign origin: a probe
        credentials = {"Authorization": "Bearer t"}
        first = FakeRequest("POST", credentials, INIT)
        await app(first.scope, first.receive, first.send)
        assert first.status() == 200 and len(app.connections) == 1
        (running,) = app.connections.values()
        turn = {"jsonrpc": "2.0", "id": 1, "method": "slow"}
        assert await post(app, {**credentials, "Acp-Connection-Id": running.id}, turn) == 202
        draining = asyncio.ensure_future(app.drain(0.3))
        await asyncio.sleep(0.05)
        assert await get_health(app) == (503, b"draining")
        assert await post(app, credentials, INIT) == 503  # no new connection
        upgrade = FakeRequest("GET", credentials)
        upgrade.scope["type"] = "websocket"
        await app(upgrade.scope, upgrade.receive, upgrade.send)
        assert upgrade.sent[0] == {"type": "websocket.http.response.start", "status": 503, "headers": hs._TEXT_HEADERS}
        assert not draining.done()  # a connection with a request unanswered is given its time
        await draining  # after 0.3 s: the agent never answers "slow"
        assert running.closed and app.connections == {} and not app._tasks


# --- everything bounded: body and idle timeouts, the connection cap, bytes, log lines -----------


async def idle_agent(transport: Transport) -> None:
    """Answers `initialize`, then reads (and records nothing) until the connection ends."""
    message = json.loads(await transport.receive() or b"{}")
    await send(transport, {"id": message["id"], "result": {}})
    while await transport.receive() is not None:
        pass


async def test_a_post_whose_body_does_not_arrive_within_body_timeout_is_answered_408_and_not_executed():
    agent = Agent()
    app = hs.AcpHttpApp(agent, server_settings=hs.ServerSettings(body_timeout=0.2))
    async with asyncio.timeout(TIMEOUT):
        connection = await open_connection(app)
        slow = FakeRequest("POST", connection, {"jsonrpc": "2.0", "method": "slow"}, more_body=True)
        started = asyncio.get_running_loop().time()
        await app(slow.scope, slow.receive, slow.send)  # the rest of its body never comes
        assert 0.2 <= asyncio.get_running_loop().time() - started < 2
        assert slow.status() == 408
        start = next(m for m in slow.sent if m["type"] == "http.response.start")
        assert (b"connection", b"close") in start["headers"]
        assert await post(app, connection, {"jsonrpc": "2.0", "method": "whole"}) == 202
        while len(agent.received) < 2:
            await asyncio.sleep(0.01)
        await app.close()
    assert [message["method"] for message in agent.received] == ["initialize", "whole"]


async def test_connections_over_max_connections_are_refused_503_with_retry_after_http_and_websocket():
    app = hs.AcpHttpApp(idle_agent, server_settings=hs.ServerSettings(max_connections=2))
    async with asyncio.timeout(TIMEOUT):
        first = await open_connection(app)
        await open_connection(app)
        over = FakeRequest("POST", {}, INIT)
        await app(over.scope, over.receive, over.send)
        assert over.status() == 503
        start = next(m for m in over.sent if m["type"] == "http.response.start")
        assert (b"retry-after", b"5") in start["headers"]
        upgrade = FakeRequest("GET", {})
        upgrade.scope["type"] = "websocket"
        await app(upgrade.scope, upgrade.receive, upgrade.send)
        assert upgrade.sent[0]["status"] == 503 and (b"retry-after", b"5") in upgrade.sent[0]["headers"]
        assert len(app.connections) == 2
        assert await _delete(app, first) == 202
        await open_connection(app)  # a place freed is taken again
        await app.close()


async def test_the_websockets_open_count_toward_max_connections():
    app = hs.AcpHttpApp(Agent(), server_settings=hs.ServerSettings(max_connections=1))
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus

        async with connect(url.replace("http", "ws", 1)):
            while app.websockets == 0:
                await asyncio.sleep(0.01)
            response = await http.post(url, json=INIT)
            assert response.status_code == 503 and response.headers["retry-after"] == "5"
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url.replace("http", "ws", 1)):
                    pass
            assert refused.value.response.status_code == 503
        while app.websockets:
            await asyncio.sleep(0.01)
        await initialize(http, url)  # the WebSocket's place is free again


async def test_a_connection_idle_for_idle_timeout_ends_and_its_later_requests_get_404():
    app = hs.AcpHttpApp(idle_agent, server_settings=hs.ServerSettings(idle_timeout=0.3))
    notification = {"jsonrpc": "2.0", "method": "ping"}
    async with asyncio.timeout(TIMEOUT):
        idle = await open_connection(app)
        busy = await open_connection(app)
        stream = FakeRequest("GET", busy)  # an open stream: not idle, however long it lasts
        streaming = asyncio.ensure_future(app(stream.scope, stream.receive, stream.send))
        for _ in range(3):  # requests keep it alive too
            await asyncio.sleep(0.15)
            assert await post(app, idle, notification) == 202
        await asyncio.sleep(0.6)
        assert await post(app, idle, notification) == 404
        assert await post(app, busy, notification) == 202
        stream.leave.set()
        await streaming
        await asyncio.sleep(0.6)
        assert await post(app, busy, notification) == 404
        assert app.connections == {}
        await app.close()


async def test_the_posts_a_connection_holds_for_its_handler_are_bounded_in_bytes():
    reading = asyncio.Event()

    async def stalled(transport: Transport) -> None:  # at its concurrency limit: reads nothing more
        message = json.loads(await transport.receive() or b"{}")
        await send(transport, {"id": message["id"], "result": {}})
        await reading.wait()
        while await transport.receive() is not None:
            pass

    app = hs.AcpHttpApp(stalled, server_settings=hs.ServerSettings(max_inbound_bytes=10_000))
    big = {"jsonrpc": "2.0", "method": "big", "params": {"pad": "x" * 4_000}}
    async with asyncio.timeout(TIMEOUT):
        headers = await open_connection(app)
        connection = app.connections[headers["Acp-Connection-Id"]]
        assert await post(app, headers, big) == 202
        assert await post(app, headers, big) == 202
        parked = asyncio.ensure_future(post(app, headers, big))  # a third would pass 10,000 bytes
        await asyncio.sleep(0.2)
        assert not parked.done() and connection.inbound.qsize() == 2
        assert connection.inbound_bytes <= 10_000
        reading.set()
        assert await parked == 202
        await app.close()


async def test_the_websocket_read_ahead_is_bounded_in_bytes():
    frames = [{"type": "websocket.receive", "text": "x" * 4_000} for _ in range(5)]
    taken: list[int] = []

    async def receive() -> dict[str, Any]:
        taken.append(1)
        return frames.pop(0) if frames else await asyncio.Event().wait()  # type: ignore[func-returntype]

    async def ignore(message: Any) -> None:
        pass

    transport = hs.AsgiWebSocketTransport(receive, ignore, 1 << 20, max_read_ahead_bytes=10_000)
    reading = asyncio.ensure_future(transport.read_frames())
    await asyncio.sleep(0.1)
    assert len(taken) == 3  # 12,000 bytes read ahead, then it waits
    assert await transport.receive() is not None
    await asyncio.sleep(0.05)
    assert len(taken) == 4
    reading.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reading


def test_log_throttle_logs_one_warning_per_cause_per_interval_then_counts_the_rest(caplog):
    now = [0.0]
    throttle = hs.LogThrottle(hs._log, 60.0, clock=lambda: now[0])
    with caplog.at_level("WARNING", logger=hs._log.name):
        assert throttle.warning("binary", "ignoring a binary frame")
        assert not any(throttle.warning("binary", "ignoring a binary frame") for _ in range(999))
        assert throttle.warning("stall", "a client stopped reading")  # another cause: its own line
        now[0] = 61.0
        assert throttle.warning("binary", "ignoring a binary frame")
    assert [record.getMessage() for record in caplog.records] == [
        "ignoring a binary frame",
        "a client stopped reading",
        "ignoring a binary frame (999 more like it suppressed in the last 61 s)",
    ]


async def test_binary_frames_log_one_line_and_the_connection_id_is_never_logged_whole(caplog):
    app = hs.AcpHttpApp(idle_agent, max_buffered_bytes=10, max_output_stall=0.1)
    frames = [{"type": "websocket.receive", "bytes": b"\x00"} for _ in range(100)]

    async def receive() -> dict[str, Any]:
        return frames.pop(0) if frames else {"type": "websocket.disconnect"}

    async def ignore(message: Any) -> None:
        pass

    with caplog.at_level("WARNING", logger=hs._log.name):
        transport = hs.AsgiWebSocketTransport(receive, ignore, 1 << 20, log=app.log)
        reading = asyncio.ensure_future(transport.read_frames())
        assert await transport.receive() is None
        await reading
        async with asyncio.timeout(TIMEOUT):
            headers = await open_connection(app)
            connection = app.connections[headers["Acp-Connection-Id"]]
            with pytest.raises(ConnectionResetError):
                await connection.send(b'{"jsonrpc":"2.0","method":"update","params":{"pad":"xxxxxxxxxxxx"}}')
            await app.close()
    messages = [record.getMessage() for record in caplog.records]
    assert messages.count("ignoring a binary WebSocket frame") == 1
    closing = [m for m in messages if m.startswith("closing HTTP connection")]
    token = connection.id.removeprefix(f"{app.instance}.")
    assert closing == [f"closing HTTP connection {app.instance}.{token[:8]}…: its client stopped reading"]
    assert not any(connection.id in m for m in messages)


async def test_a_named_instance_starts_every_connection_id_with_its_name_and_sets_the_affinity_cookie():
    """What a load balancer routes a connection's requests by: the id's prefix, or the cookie
    set on the answer to `initialize` (the WebSocket needs neither: its one socket stays put)."""
    from websockets.asyncio.client import connect

    app = hs.AcpHttpApp(Agent(), server_settings=hs.ServerSettings(instance="blue-1"))
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
        opened = await http.post(url, json=INIT)
        assert opened.status_code == 200
        instance, dot, token = opened.headers["Acp-Connection-Id"].partition(".")
        assert (instance, dot, len(token), int(token, 16) >= 0) == ("blue-1", ".", 32, True)
        assert opened.headers.get_list("set-cookie") == ["acp_instance=blue-1; Path=/; HttpOnly; SameSite=Lax"]
        connection = {"Acp-Connection-Id": opened.headers["Acp-Connection-Id"]}
        later = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "m"}, headers=connection)
        assert later.status_code == 202 and "set-cookie" not in later.headers  # set once, kept by the client
        async with connect(url.replace("http", "ws", 1)) as socket:
            assert socket.response.headers["Acp-Connection-Id"].startswith("blue-1.")
            assert "set-cookie" not in socket.response.headers
        assert (await http.delete(url, headers=connection)).status_code == 202


async def test_without_an_instance_each_application_names_itself_at_random_and_sets_no_cookie():
    first, second = hs.AcpHttpApp(Agent()), hs.AcpHttpApp(Agent())
    assert first.instance != second.instance and len(first.instance) == 8
    async with asyncio.timeout(TIMEOUT), uvicorn_serving(first) as url, httpx.AsyncClient() as http:
        opened = await http.post(url, json=INIT)
        assert opened.headers["Acp-Connection-Id"].startswith(first.instance + ".")
        assert "set-cookie" not in opened.headers
        assert (
            await http.delete(url, headers={"Acp-Connection-Id": opened.headers["Acp-Connection-Id"]})
        ).status_code == 202


async def test_a_request_for_another_instances_connection_gets_404_saying_whose_it_is_and_is_logged(caplog):
    """A load balancer that sends a connection's request to the wrong process (`uvicorn --workers`,
    or hashing that does not follow the connection) is named, in the answer and in the log, once
    per `log_interval`; an unknown id of this instance's own (a connection that ended) is the
    plain 404."""
    app = hs.AcpHttpApp(Agent(), server_settings=hs.ServerSettings(instance="blue-1"))
    stray = {"Acp-Connection-Id": "green-2." + secrets.token_hex(16)}
    why = "Unknown Acp-Connection-Id: issued by instance 'green-2', this is instance 'blue-1'"
    with caplog.at_level("WARNING", logger=hs._log.name):
        async with asyncio.timeout(TIMEOUT), uvicorn_serving(app) as url, httpx.AsyncClient() as http:
            for answer in [
                await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "m"}, headers=stray),
                await http.get(url, headers={**SSE, **stray}),
                await http.delete(url, headers=stray),
            ]:
                assert (answer.status_code, answer.text) == (404, why)
            for unknown in ["blue-1." + secrets.token_hex(16), "nope", "a b.c", "x" * 65 + ".y"]:
                answer = await http.delete(url, headers={"Acp-Connection-Id": unknown})
                assert (answer.status_code, answer.text) == (404, "Unknown Acp-Connection-Id"), unknown
    misrouted = [r.getMessage() for r in caplog.records if "reached instance" in r.getMessage()]
    assert misrouted == [
        f"a request for connection green-2.{stray['Acp-Connection-Id'][8:16]}… of instance 'green-2' reached "
        "instance 'blue-1': route a connection's requests by the acp_instance cookie or by its id's prefix"
    ]


@pytest.mark.parametrize("name", ["", "a.b", "a b", "x" * 65, "é", "a;b"])
def test_an_instance_name_that_a_cookie_a_header_or_a_prefix_cannot_carry_is_refused(name):
    with pytest.raises(ValueError, match=r"ServerSettings\.instance: expected 1 to 64 letters"):
        hs.ServerSettings(instance=name)
    assert hs.ServerSettings(instance="A_z-9" * 12 + "abcd").instance is not None
