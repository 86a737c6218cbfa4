"""The protocol router (`serve_agent`, `run_agent(agent, *others)`) rule by rule, with raw lines
from a fake client, and the client side's negotiation (`connect_negotiated`) against v1 and v2
agents. (tests/test_examples.py runs the example agent against the official SDKs' clients.)"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from tests.support.helpers import ROOT, import_package, runtime_module
from tests.support.hostile_lines import DEEP, LINES

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
V2_INIT = {"protocolVersion": 2, "info": {"name": "raw", "version": "1"}}
V1_INIT = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


pytestmark = pytest.mark.async_timeout(10)


class Pipe:
    """A transport fed raw lines by the test, which reads what the router and agents send."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.outbox: asyncio.Queue[Any] = asyncio.Queue()
        self.closed = False

    def feed(self, *messages: Any) -> None:
        for message in messages:
            raw = message if message is None or isinstance(message, bytes) else json.dumps(message).encode()
            self.inbox.put_nowait(raw)  # None: the stream ends

    async def receive(self) -> bytes | None:
        return await self.inbox.get()

    async def send(self, message: bytes) -> None:
        self.outbox.put_nowait(json.loads(message))

    async def close(self) -> None:
        self.closed = True

    async def next(self) -> Any:
        return await asyncio.wait_for(self.outbox.get(), 5)


class V2Agent(acp.Agent):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        self.seen.append(params)
        return acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="v2", version="1"))


class V1Agent(acp_v1.Agent):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        self.seen.append(params)
        return acp_v1.InitializeResponse(protocol_version=1, agent_info=acp_v1.Implementation(name="v1", version="1"))

    async def session_new(self, params: Any) -> Any:
        return acp_v1.NewSessionResponse(session_id="v1-session")


def request(request_id: Any, params: Any, method: str = "initialize") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def routed(pipe: Pipe, *agents: Any) -> asyncio.Task[None]:
    return asyncio.create_task(acp.serve_agent(pipe, *agents))


async def finish(pipe: Pipe, task: asyncio.Task[None]) -> None:
    pipe.feed(None)
    await asyncio.wait_for(task, 5)
    assert pipe.closed


async def test_notifications_and_responses_before_initialize_are_ignored():
    pipe, v2 = Pipe(), V2Agent()
    task = await routed(pipe, v2, V1Agent())
    pipe.feed(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 9, "result": {}},
        {"jsonrpc": "2.0", "id": 8, "error": {"code": 1, "message": "x"}},
        request(1, V2_INIT),
    )
    assert await pipe.next() == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"protocolVersion": 2, "info": {"name": "v2", "version": "1"}},
    }
    await finish(pipe, task)


@pytest.mark.parametrize(
    ("message", "answer_id", "error"),
    [
        (request(3, {}, "session/new"), 3, ("Invalid request", "first ACP request must be initialize")),
        ([request(3, V2_INIT)], None, ("Invalid request: JSON-RPC batches are not supported", None)),
        ([], None, ("Invalid request: JSON-RPC batches are not supported", None)),
        (5, None, ("Invalid request", "first ACP message must be an initialize request")),
        (
            {"jsonrpc": "1.0", "id": 4, "method": "initialize", "params": V2_INIT},
            None,
            ("Invalid request", "first ACP message must be an initialize request"),
        ),
        (
            {"jsonrpc": "2.0", "id": 2.5, "method": "initialize", "params": V2_INIT},
            None,
            ("Invalid request: ACP v2 request IDs must be strings or integers", None),
        ),
    ],
    ids=[
        "another request",
        "a batch",
        "an empty batch",
        "not an object",
        "not JSON-RPC 2.0",
        "a v2 id that is no integer",
    ],
)
async def test_what_cannot_start_the_connection_is_answered_minus_32600_and_it_stays_open(message, answer_id, error):
    """In the TypeScript SDK's words (its router puts some details in `data`)."""
    pipe, v2 = Pipe(), V2Agent()
    task = await routed(pipe, v2, V1Agent())
    pipe.feed(message)
    answer = await pipe.next()
    text, data = error
    assert answer["id"] == answer_id
    assert answer["error"] == {"code": -32600, "message": text, **({} if data is None else {"data": data})}
    pipe.feed(request(1, V2_INIT))  # the client may initialize now
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    await finish(pipe, task)


async def test_unparsable_json_is_answered_minus_32700_and_it_stays_open():
    pipe = Pipe()
    task = await routed(pipe, V2Agent(), V1Agent())
    pipe.feed(b"{not json")
    answer = await pipe.next()
    assert (answer["id"], answer["error"]["code"]) == (None, -32700)
    pipe.feed(request(1, V1_INIT))
    assert (await pipe.next())["result"]["protocolVersion"] == 1
    await finish(pipe, task)


@pytest.mark.parametrize("use_orjson", [True, False], ids=["orjson", "json"])
@pytest.mark.parametrize("hostile", LINES, ids=[line.name for line in LINES])
async def test_no_line_before_initialize_ends_the_routed_connection(hostile, use_orjson, monkeypatch):
    """Each hostile line of tests/support/hostile_lines.py gets at most one answer, an error, and the
    router routes the `initialize` that follows; nothing escapes to asyncio."""
    if not use_orjson:
        monkeypatch.setattr(runtime_module("_runtime"), "ORJSON", None)
    unhandled: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
    pipe = Pipe()
    task = await routed(pipe, V2Agent(), V1Agent())
    pipe.feed(hostile.line, request("next", V2_INIT))
    answers = []
    while (answer := await pipe.next()).get("id") != "next":
        answers.append(answer)
    assert answer["result"]["protocolVersion"] == 2
    assert len(answers) <= 1 and all("error" in answer for answer in answers), answers
    await finish(pipe, task)
    assert not unhandled


@pytest.mark.parametrize(
    ("params", "agents"),
    [
        ({**V2_INIT, "protocolVersion": 7, "x": "DEEP"}, "v2 v1"),
        ({**V2_INIT, "_meta": {"x": "DEEP"}}, "v1"),
    ],
    ids=["newer, served by v2", "v2, downgraded to v1"],
)
async def test_an_initialize_as_deep_as_the_parser_reads_is_routed_or_refused_and_it_stays_open(params, agents, caplog):
    """Params nested as deep as the parser reads, which the router writes again for the version
    it selects: on Python 3.11 encoding them raises `RecursionError` (this message's error,
    answered -32603); since 3.12 the C encoder has a recursion limit of its own, and they are
    routed. Either way the connection stays open (a `RecursionError` once ended `serve_agent`)."""
    pipe = Pipe()
    task = await routed(pipe, *([V2Agent()] if "v2" in agents else []), V1Agent())
    line = json.dumps(request(0, params)).replace('"DEEP"', "[" * 985 + "1" + "]" * 985)
    pipe.feed(line.encode(), request(1, V1_INIT))
    answer, following = await pipe.next(), await pipe.next()
    if "error" in answer:  # not routed: the next initialize is
        assert answer == {"jsonrpc": "2.0", "id": 0, "error": {"code": -32603, "message": "Internal error"}}
        assert "RecursionError" in caplog.text
        assert following["result"]["protocolVersion"] == 1
    else:  # routed: the typed connection answers the next one
        assert answer["result"]["protocolVersion"] == (2 if "v2" in agents else 1)
        assert following["id"] == 1
    await finish(pipe, task)


@pytest.mark.parametrize("failure", [RecursionError, MemoryError])
async def test_an_initialize_that_fails_while_routed_is_answered_minus_32603_and_it_stays_open(
    failure, monkeypatch, caplog
):
    """Whatever fails while an `initialize` is routed (here: rewriting its params for the
    selected version) is that message's error, as in the typed connection."""

    rewrite = runtime_module("_router")._initialize_params

    def fail_for_v2(params: dict[str, Any], requested: int, selected: int) -> dict[str, Any]:
        if requested == 2:
            raise failure("rewriting failed")
        return rewrite(params, requested, selected)

    monkeypatch.setattr(runtime_module("_router"), "_initialize_params", fail_for_v2)
    pipe = Pipe()
    task = await routed(pipe, V2Agent(), V1Agent())
    pipe.feed(request(0, V2_INIT), request(1, V1_INIT))
    assert await pipe.next() == {"jsonrpc": "2.0", "id": 0, "error": {"code": -32603, "message": "Internal error"}}
    assert (await pipe.next())["result"]["protocolVersion"] == 1
    await finish(pipe, task)
    assert failure.__name__ in caplog.text


async def test_a_strict_router_refuses_an_initialize_lenient_decoding_would_salvage_before_routing():
    """Refused before routing, as the strict typed connection would refuse it: the client may
    initialize again, with another version."""
    pipe = Pipe()
    task = asyncio.create_task(acp.serve_agent(pipe, V2Agent(), V1Agent(), options=acp.ConnectionOptions(strict=True)))
    pipe.feed(request(0, {**V2_INIT, "capabilities": 5}), request(1, V1_INIT))
    answer = await pipe.next()
    assert (answer["id"], answer["error"]["code"]) == (0, -32602)
    assert answer["error"]["data"]["path"] == "$.params.capabilities"
    assert (await pipe.next())["result"]["protocolVersion"] == 1
    await finish(pipe, task)


async def test_on_salvage_sees_a_routed_initializes_salvage_once():
    """The router's check of the `initialize` does not report it: the typed connection does."""
    pipe, seen = Pipe(), []
    task = asyncio.create_task(acp.serve_agent(pipe, V2Agent(), options=acp.ConnectionOptions(on_salvage=seen.append)))
    pipe.feed(request(0, {**V2_INIT, "capabilities": 5}))
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    assert [salvage.path for salvage in seen] == ["$.params.capabilities"]
    await finish(pipe, task)


@pytest.mark.parametrize(
    ("params", "code", "text"),
    [
        (
            None,
            -32602,
            '"message": "Invalid params", "data": "initialize.protocolVersion must be a valid ACP protocol version"',
        ),
        ({"info": V2_INIT["info"]}, -32602, "initialize.protocolVersion must be a valid"),
        ({**V2_INIT, "protocolVersion": "2"}, -32602, "initialize.protocolVersion must be a valid"),
        ({**V2_INIT, "protocolVersion": 70000}, -32602, "initialize.protocolVersion must be a valid"),
        ({**V2_INIT, "protocolVersion": True}, -32602, "initialize.protocolVersion must be a valid"),
        ({"protocolVersion": 2}, -32602, "$.params.info"),  # the selected version reads it strictly
        ({**V2_INIT, "protocolVersion": 0}, -32022, "Unsupported protocol version"),
    ],
    ids=[
        "no params",
        "no version",
        "a string",
        "too large",
        "a boolean",
        "v2 without info",
        "too old",
    ],
)
async def test_a_failing_initialize_is_answered_and_does_not_close(params, code, text):
    pipe, v2, v1 = Pipe(), V2Agent(), V1Agent()
    task = await routed(pipe, v2, v1)
    pipe.feed(request("a", params))
    answer = await pipe.next()
    assert answer["id"] == "a" and answer["error"]["code"] == code
    assert text in json.dumps(answer["error"])
    if code == -32022:
        assert answer["error"]["data"] == {"requested": 0, "supported": [1, 2]}
    assert v2.seen == v1.seen == []  # no agent saw it
    pipe.feed(request("b", V2_INIT))
    assert (await pipe.next())["id"] == "b"
    await finish(pipe, task)


@pytest.mark.parametrize(
    ("requested", "configured", "selected"),
    [
        (1, "v1 v2", 1),
        (2, "v1 v2", 2),
        (7, "v1 v2", 2),
        (2, "v2", 2),
        (9, "v2", 2),
        (1, "v1", 1),
        (5, "v1", 1),
        (0, "v1", 1),
    ],
)
async def test_the_highest_configured_version_at_or_below_the_request_serves_it(requested, configured, selected):
    pipe, v2, v1 = Pipe(), V2Agent(), V1Agent()
    agents = {"v1 v2": (v2, v1), "v2": (v2,), "v1": (v1,)}[configured]
    task = await routed(pipe, *agents)
    params = V2_INIT if requested >= 2 else V1_INIT
    pipe.feed(request(1, {**params, "protocolVersion": requested}))
    assert (await pipe.next())["result"]["protocolVersion"] == selected
    chosen, other = (v2, v1) if selected == 2 else (v1, v2)
    assert len(chosen.seen) == 1 and other.seen == []
    assert chosen.seen[0].protocol_version == selected  # the selected version's params
    await finish(pipe, task)


async def test_a_v2_only_endpoint_refuses_a_v1_client_with_minus_32022():
    pipe = Pipe()
    task = await routed(pipe, V2Agent())
    pipe.feed(request(1, V1_INIT))
    answer = await pipe.next()
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"requested": 1, "supported": [2]}
    await finish(pipe, task)


async def test_a_newer_request_downgraded_to_v1_becomes_v1_params():
    pipe, v1 = Pipe(), V1Agent()
    task = await routed(pipe, v1)
    v2_params = {**V2_INIT, "capabilities": {"auth": {"terminal": {}}}, "_meta": {"k": 1}}
    pipe.feed(request(1, v2_params))
    assert (await pipe.next())["result"]["protocolVersion"] == 1
    (params,) = v1.seen
    assert params.to_dict() == {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
            "session": {"configOptions": {"boolean": {}}},
            "plan": {},
            "auth": {"terminal": True},
        },
        "clientInfo": {"name": "raw", "version": "1"},
        "_meta": {"k": 1},
    }
    await finish(pipe, task)


async def test_a_newer_request_served_by_v2_gets_an_unknown_info_in_place_of_a_bad_one():
    pipe, v2 = Pipe(), V2Agent()
    task = await routed(pipe, v2, V1Agent())
    pipe.feed(request(1, {"protocolVersion": 3, "info": "nobody"}))
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    assert v2.seen[0].info == acp.Implementation(name="unknown", version="unknown")
    await finish(pipe, task)


async def test_a_routed_connection_is_never_routed_again():
    pipe, v2, v1 = Pipe(), V2Agent(), V1Agent()
    task = await routed(pipe, v2, v1)
    pipe.feed(request(1, V1_INIT))
    assert (await pipe.next())["result"]["protocolVersion"] == 1
    pipe.feed(request(2, V2_INIT), request(3, {"cwd": "/", "mcpServers": []}, "session/new"))
    answers = {answer["id"]: answer for answer in (await pipe.next(), await pipe.next())}
    assert answers[3]["result"] == {"sessionId": "v1-session"}  # the v1 agent serves the rest
    assert len(v1.seen) == 2 and v2.seen == []  # the repeated initialize went to v1 too
    await finish(pipe, task)


async def test_a_repeated_initialize_on_a_v2_connection_is_refused_minus_32600_as_the_typescript_sdk_refuses_it():
    """A repeat must ask for v2 (or newer) and come before any other request; the agent's
    handler never sees a refused one (it could answer protocolVersion 1 on a v2 connection)."""
    pipe, v2, v1 = Pipe(), V2Agent(), V1Agent()
    task = await routed(pipe, v2, v1)
    pipe.feed(request(1, V2_INIT))
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    below = "Invalid request: a repeated initialize must request protocol version 2 or later"
    for request_id, params in ((2, {**V2_INIT, "protocolVersion": 1}), (3, V1_INIT)):
        pipe.feed(request(request_id, params))
        assert await pipe.next() == {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32600, "message": below},
        }
    pipe.feed(request(4, {**V2_INIT, "protocolVersion": 3}))  # newer: served as v2
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    pipe.feed(request(5, {"cwd": "/"}, "session/new"), request(6, V2_INIT))
    answers = {answer["id"]: answer for answer in (await pipe.next(), await pipe.next())}
    assert answers[5]["error"]["code"] == -32601  # V2Agent serves no session/new
    assert answers[6]["error"] == {  # TS: `RequestError.invalidRequest(text)`, the text as data
        "code": -32600,
        "message": "Invalid request",
        "data": "ACP v2 initialize must not be repeated after other requests",
    }
    assert [params.protocol_version for params in v2.seen] == [2, 2] and v1.seen == []
    await finish(pipe, task)


class HeldV2Agent(V2Agent):
    """Answers each `initialize` when the test releases it, with the protocol version it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.released: asyncio.Queue[int] = asyncio.Queue()

    async def initialize(self, params: Any) -> Any:
        self.seen.append(params)
        version = await self.released.get()
        return acp.InitializeResponse(protocol_version=version, info=acp.Implementation(name="v2", version="1"))


IN_PROGRESS = {"code": -32600, "message": "Invalid request", "data": "ACP v2 initialize is already in progress"}


async def test_an_initialize_while_another_is_being_answered_is_refused_minus_32600_as_the_typescript_sdk_refuses_it():
    """The first `initialize`, or a repeat, whose handler has not returned: another meanwhile is
    refused without reaching the handler; once it is answered, a repeat is served again."""
    pipe, v2 = Pipe(), HeldV2Agent()
    task = await routed(pipe, v2, V1Agent())
    pipe.feed(request(1, V2_INIT), request(2, V2_INIT))  # the second read before the first is answered
    assert await pipe.next() == {"jsonrpc": "2.0", "id": 2, "error": IN_PROGRESS}
    v2.released.put_nowait(2)
    assert (await pipe.next())["id"] == 1
    pipe.feed(request(3, V2_INIT))  # a repeat, held too
    while len(v2.seen) < 2:
        await asyncio.sleep(0)
    pipe.feed(request(4, {**V2_INIT, "protocolVersion": 1}))  # in progress comes first, as in TS
    assert await pipe.next() == {"jsonrpc": "2.0", "id": 4, "error": IN_PROGRESS}
    v2.released.put_nowait(2)
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    assert len(v2.seen) == 2
    await finish(pipe, task)


@pytest.mark.parametrize("answered", [1, 3])
async def test_an_agent_answering_initialize_with_another_version_on_v2_is_answered_minus_32600_as_in_typescript(
    answered,
):
    """The client gets the TypeScript SDK's error instead of the answer; the connection stays as
    it was: uninitialized (other requests refused), then initialized by an answer of v2."""
    pipe, v2 = Pipe(), HeldV2Agent()
    task = await routed(pipe, v2, V1Agent())
    v2.released.put_nowait(answered)
    pipe.feed(request(1, V2_INIT))
    assert await pipe.next() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32600,
            "message": "Invalid request: The v2 API only supports protocol version 2",
            "data": {"expectedProtocolVersion": 2, "receivedProtocolVersion": answered},
        },
    }
    pipe.feed(request(2, {"cwd": "/"}, "session/new"))
    assert (await pipe.next())["error"]["data"] == "ACP v2 connection must be initialized before 'session/new'"
    v2.released.put_nowait(2)
    pipe.feed(request(3, V2_INIT))  # the first answered initialize
    assert (await pipe.next())["result"]["protocolVersion"] == 2
    v2.released.put_nowait(answered)
    pipe.feed(request(4, V2_INIT))  # a repeat answered with another version: refused, v2 stays
    assert (await pipe.next())["error"]["data"]["receivedProtocolVersion"] == answered
    pipe.feed(request(5, {"cwd": "/"}, "session/new"))
    assert (await pipe.next())["error"]["code"] == -32601  # initialized: V2Agent serves no session/new
    await finish(pipe, task)


async def test_the_stream_ending_before_initialize_closes_the_transport():
    pipe = Pipe()
    task = await routed(pipe, V2Agent(), V1Agent())
    pipe.feed({"jsonrpc": "2.0", "method": "x"})
    await finish(pipe, task)
    assert pipe.outbox.empty()


async def test_two_agents_of_one_version_are_refused():
    with pytest.raises(ValueError, match="two agents or clients of protocol version 2"):
        await acp.serve_agent(Pipe(), V2Agent(), V2Agent())


async def socket_transports() -> tuple[Any, Any]:
    left, right = socket.socketpair()
    agent_end = acp.StreamTransport(*await asyncio.open_connection(sock=left))
    client_end = acp.StreamTransport(*await asyncio.open_connection(sock=right))
    return agent_end, client_end


V2_PARAMS = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="client", version="1"))


@pytest.mark.parametrize("agents", ["v2", "v1 v2"])
async def test_negotiation_with_a_v2_agent_gives_the_v2_connection(agents):
    agent_end, client_end = await socket_transports()
    serving = asyncio.create_task(acp.serve_agent(agent_end, V2Agent(), *([V1Agent()] if " " in agents else [])))
    conn, response = await acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS, acp_v1.Client())
    assert isinstance(conn, acp.ClientSideConnection)
    assert response == acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="v2", version="1"))
    with pytest.raises(acp.RequestError) as error:  # the connection goes on: V2Agent has no session/new
        await conn.session_new(acp.NewSessionRequest(cwd="/"))
    assert error.value.code == -32601
    await conn.close()
    await serving


async def test_negotiation_falls_back_to_the_v1_client_a_v1_agent_answers():
    agent_end, client_end = await socket_transports()
    v1 = V1Agent()
    serving = asyncio.create_task(acp_v1.AgentSideConnection(v1, agent_end).wait_closed())
    conn, response = await acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS, acp_v1.Client())
    assert isinstance(conn, acp_v1.ClientSideConnection)
    assert response.protocol_version == 1 and response.agent_info.name == "v1"
    session = await conn.session_new(acp_v1.NewSessionRequest(cwd="/", mcp_servers=[]))
    assert session.session_id == "v1-session"
    assert [params.protocol_version for params in v1.seen] == [2]  # it saw the v2 request once
    await conn.close()
    await serving


async def test_negotiation_without_a_client_of_the_answered_version_is_a_clear_error():
    agent_end, client_end = await socket_transports()
    serving = asyncio.create_task(acp_v1.AgentSideConnection(V1Agent(), agent_end).wait_closed())
    with pytest.raises(
        acp.ProtocolVersionMismatch,
        match=r"protocolVersion 1, this client speaks \[2\]; pass a client of protocol version 1",
    ):
        await acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS)
    await client_end.close()
    await serving


async def test_negotiation_answered_with_a_result_that_does_not_parse_raises_decode_error():
    """An answer nested deeper than the parser reaches: the client is not left waiting for another."""
    agent_end, client_end = await socket_transports()
    negotiating = asyncio.create_task(acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS))
    request_id = json.loads(await agent_end.receive())["id"]
    deep = "[" * DEEP + "]" * DEEP
    await agent_end.send(f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id)}, "result": {deep}}}'.encode())
    with pytest.raises(acp.DecodeError):
        await negotiating
    await client_end.close()
    await agent_end.close()


async def test_negotiation_answered_with_an_error_raises_it():
    agent_end, client_end = await socket_transports()
    serving = asyncio.create_task(acp.serve_agent(agent_end, V2Agent()))
    params = acp.InitializeRequest(protocol_version=0, info=acp.Implementation(name="client", version="1"))
    with pytest.raises(acp.RequestError) as error:
        await acp.connect_negotiated(acp.Client(), client_end, params)
    assert error.value.code == -32022
    await client_end.close()
    await serving


async def test_an_answer_naming_v2_with_a_v1_body_is_read_as_v1():
    """Agents built on the official Python SDK echo the requested version with a v1 body."""
    agent_end, client_end = await socket_transports()
    negotiating = asyncio.create_task(acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS, acp_v1.Client()))
    request_id = json.loads(await agent_end.receive())["id"]
    v1_body = {"protocolVersion": 2, "agentCapabilities": {"loadSession": True}, "authMethods": []}
    await agent_end.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": v1_body}).encode())
    conn, response = await negotiating
    assert isinstance(conn, acp_v1.ClientSideConnection)
    assert response.agent_capabilities.load_session is True
    await conn.close()
    await agent_end.close()


async def test_a_failed_negotiation_leaves_nothing_reading_and_may_be_retried_on_the_same_transport():
    agent_end, client_end = await socket_transports()
    negotiating = asyncio.create_task(acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS))
    request_id = json.loads(await agent_end.receive())["id"]
    unreadable = {"protocolVersion": 2, "info": 5}
    await agent_end.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": unreadable}).encode())
    with pytest.raises(acp.DecodeError):
        await negotiating
    serving = asyncio.create_task(acp.serve_agent(agent_end, V2Agent()))
    conn, response = await acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS)
    assert response.info.name == "v2"
    await conn.close()
    await serving


class FileSystemClientV1(acp_v1.Client):
    async def fs_read_text_file(self, params: Any) -> Any:
        return acp_v1.ReadTextFileResponse(content="")


async def test_a_v1_agent_reached_by_negotiation_gets_the_v1_clients_capabilities_and_client_info():
    agent_end, client_end = await socket_transports()
    v1 = V1Agent()
    serving = asyncio.create_task(acp_v1.AgentSideConnection(v1, agent_end).wait_closed())
    conn, _ = await acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS, FileSystemClientV1())
    seen = v1.seen[0]
    assert seen.client_info == acp_v1.Implementation(name="client", version="1")
    assert seen.client_capabilities.fs == acp_v1.FileSystemCapabilities(read_text_file=True, write_text_file=False)
    assert seen.client_capabilities.terminal is False
    await conn.close()
    await serving


async def test_a_v2_agent_reads_the_negotiating_initialize_as_its_own():
    agent_end, client_end = await socket_transports()
    v2 = V2Agent()
    serving = asyncio.create_task(acp.serve_agent(agent_end, v2, V1Agent(), options=acp.ConnectionOptions(strict=True)))
    conn, _ = await acp.connect_negotiated(acp.Client(), client_end, V2_PARAMS, FileSystemClientV1())
    assert isinstance(conn, acp.ClientSideConnection)
    assert v2.seen[0].info == acp.Implementation(name="client", version="1")
    await conn.close()
    await serving
