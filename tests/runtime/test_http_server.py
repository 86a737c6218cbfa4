"""generator/runtime/_http_server.py under uvicorn on 127.0.0.1 (one server per test, bounded in
time), driven by raw httpx requests: the status codes the TypeScript SDK's `AcpServer` answers,
the streams each message goes out on, keep-alives, and the checks before any message."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from generator.runtime import _http_server as hs
from generator.runtime._connection import Transport
from tests.helpers import uvicorn_serving

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

    async def authorize(headers: Mapping[str, str]) -> bool:
        return headers.get("authorization") == "Bearer t"

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
            assert socket_.response is not None and len(socket_.response.headers["Acp-Connection-Id"]) == 32
            await socket_.send(json.dumps(INIT))
            assert json.loads(await socket_.recv())["result"] == {"echo": {"protocolVersion": 2}}
            await socket_.send("x" * 1001)
            await socket_.wait_closed()
            assert socket_.close_code == 1009
    assert agent.received == [INIT]
