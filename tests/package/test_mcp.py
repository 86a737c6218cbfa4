"""MCP over ACP (`acp_v2.mcp`): an agent's `mcp` client reaches the MCP server its client serves
over `mcp/message`, in one process (`connect_pair`). Inner MCP outcomes stay inner (the
`mcp/message` response's `result` or `error`), binding failures are outer ACP errors, and hostile
traffic (unknown server ids, a provider that never answers, huge params, calls after the end)
gets errors and leaves nothing behind."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

from tests.support.helpers import ROOT, import_package, uvicorn_serving

acp = import_package(ROOT / "generated", "acp_v2")
acp_mcp = import_package(ROOT / "generated", "acp_v2.mcp")

ENVELOPE = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}

INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="provider", version="1"))

calc = MCPServer("calc")
tool_cancelled = asyncio.Event()


@calc.tool()
def add(a: float, b: float) -> float:
    """The sum of a and b."""
    return a + b


@calc.tool()
async def count(n: int, ctx: Context) -> str:
    """Reports progress n times."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return "counted"


@calc.tool()
async def wait_forever() -> str:
    """Never answers on its own."""
    try:
        await asyncio.Event().wait()
    finally:
        tool_cancelled.set()
    return "never"


@calc.resource("note://greeting")
def greeting() -> str:
    return "hello"


@calc.prompt()
def ask(topic: str) -> str:
    return f"Tell me about {topic}."


class Consumer(acp.Agent):
    def on_connect(self, conn: Any) -> None:
        self.caller = acp_mcp.McpCaller(conn)

    async def initialize(self, params: Any) -> Any:
        return acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="consumer", version="1"))

    async def mcp_message(self, params: Any) -> None:
        await self.caller.deliver(params)


class Provider(acp.Client):
    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def mcp_message(self, params: Any) -> Any:
        return await self.provider.handle(params, self.conn)


@asynccontextmanager
async def served() -> AsyncIterator[tuple[Any, Any, Any, Any]]:
    """The agent's caller and connection, the provider and calc's `session/new` entry."""
    agent = Consumer()
    async with acp_mcp.McpProvider() as provider:
        server = await provider.serve(calc, name="calc")
        async with acp.connect_pair(agent, Provider(provider)) as (agent_conn, client_conn):
            await client_conn.initialize(INIT)
            yield agent.caller, agent_conn, provider, server


pytestmark = pytest.mark.async_timeout(30)


def request(server_id: str, method: str, params: Any = acp.UNDEFINED, request_id: str = "r1") -> Any:
    return acp.MessageMcpRequest(server_id=server_id, request_id=request_id, method=method, params=params)


async def test_the_agents_mcp_client_lists_and_calls_the_tools_reads_resources_and_gets_prompts():
    async with served() as (caller, _conn, _provider, server):
        assert server.to_dict() == {"type": "acp", "name": "calc", "serverId": server.server_id}
        async with caller.client(server) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == {"add", "count", "wait_forever"}
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5.0} and not result.is_error
            contents = (await client.read_resource("note://greeting")).contents
            assert [c.text for c in contents] == ["hello"]
            prompt = await client.get_prompt("ask", {"topic": "ACP"})
            assert prompt.messages[0].content.text == "Tell me about ACP."


async def test_progress_of_a_tool_call_reaches_the_callers_progress_callback_as_mcp_message_notifications():
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with served() as (caller, _conn, _provider, server), caller.client(server) as client:
        result = await client.call_tool("count", {"n": 3}, progress_callback=on_progress)
        assert result.structured_content == {"result": "counted"}
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert caller._routes == {}


async def test_cancelling_a_call_withdraws_the_mcp_message_request_and_cancels_the_tool():
    tool_cancelled.clear()
    async with served() as (caller, _conn, provider, server), caller.client(server) as client:
        with anyio.move_on_after(0.3):
            await client.call_tool("wait_forever", {})
        await asyncio.wait_for(tool_cancelled.wait(), 5)
        served_calc = provider._servers[server.server_id]
        while served_calc.active:  # the provider's handler ends as its task is cancelled
            await asyncio.sleep(0.01)
        assert caller._routes == {}
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2.0}


async def test_inner_mcp_errors_are_the_mcp_message_responses_error_not_an_acp_error():
    async with served() as (_caller, conn, _provider, server):
        sid = server.server_id
        missing = await conn.mcp_message(request(sid, "tools/list"))
        assert isinstance(missing, acp.MessageMcpResponseError) and missing.error.code == -32602
        old = {"_meta": {**ENVELOPE["_meta"], "io.modelcontextprotocol/protocolVersion": "2025-06-18"}}
        other_version = await conn.mcp_message(request(sid, "tools/list", old))
        assert isinstance(other_version, acp.MessageMcpResponseError) and other_version.error.code == -32022
        handshake = await conn.mcp_message(request(sid, "initialize", ENVELOPE))
        assert isinstance(handshake, acp.MessageMcpResponseError) and handshake.error.code == -32601
        unknown = await conn.mcp_message(request(sid, "no/such/method", ENVELOPE))
        assert isinstance(unknown, acp.MessageMcpResponseError) and unknown.error.code == -32601
        listed = await conn.mcp_message(request(sid, "tools/list", ENVELOPE))
        assert isinstance(listed, acp.MessageMcpResponseResult)
        assert [tool["name"] for tool in listed.result["tools"]] == ["add", "count", "wait_forever"]


async def test_an_unknown_server_id_is_an_outer_acp_error_and_an_mcp_error_to_the_mcp_client():
    async with served() as (caller, conn, _provider, _server):
        with pytest.raises(acp.RequestError) as raised:
            await conn.mcp_message(request("no-such-server", "tools/list", ENVELOPE))
        assert raised.value.code == acp_mcp.SERVER_UNAVAILABLE == -33001
        async with caller.client("no-such-server") as client:
            with pytest.raises(MCPError) as inner:
                await client.list_tools()
            assert inner.value.error.code == -33001


async def test_a_request_id_already_active_on_the_server_is_refused_minus_32602():
    async with served() as (_caller, conn, provider, server):
        sid = server.server_id
        call = {"name": "wait_forever", "arguments": {}, **ENVELOPE}
        first = asyncio.create_task(conn.mcp_message(request(sid, "tools/call", call, "same")))
        while "same" not in provider._servers[sid].active:
            await asyncio.sleep(0.01)
        with pytest.raises(acp.RequestError) as raised:
            await conn.mcp_message(request(sid, "tools/list", ENVELOPE, "same"))
        assert raised.value.code == -32602
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)


async def test_a_provider_that_never_answers_times_the_call_out_and_leaves_no_route_behind():
    class Silent(acp.Client):
        async def mcp_message(self, params: Any) -> Any:
            await asyncio.Event().wait()

    agent = Consumer()
    async with acp.connect_pair(agent, Silent()) as (agent_conn, client_conn):
        await client_conn.initialize(INIT)
        async with agent.caller.client("calc-id", read_timeout_seconds=0.3) as client:
            for _ in range(3):  # the client goes on: each call is withdrawn, none is left waiting
                with pytest.raises(MCPError):
                    await client.list_tools()
                await settled(agent.caller._routes, agent_conn._waiting, client_conn._serving)
        assert agent.caller._routes == {}


async def test_params_longer_than_a_peer_reads_are_refused_before_sending_and_the_server_keeps_serving():
    async with served() as (caller, _conn, _provider, server), caller.client(server) as client:
        with pytest.raises(MCPError) as raised:  # a peer skips such a line unanswered: it would hang
            await client.call_tool("add", {"a": 1, "b": 2, "padding": "x" * (33 * 1024 * 1024)})
        assert raised.value.error.code == -32600
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3.0}


async def settled(*tables: Any) -> None:
    """Wait (bounded by the test's timeout) until every table is empty: what a withdrawn call
    leaves behind goes as its tasks end, a step or two of the event loop later."""
    while any(tables):
        await asyncio.sleep(0.01)


async def test_a_thousand_calls_withdrawn_from_a_provider_that_never_answers_leave_memory_where_it_was():
    """A hundred calls at a time, each withdrawn after 50 ms (a cancel scope): once they have
    ended, the caller, both connections and the mcp client hold what they held before, within
    256 bytes a call (measured: 24 KiB in all for 1,000, the same after 4,000)."""

    class Silent(acp.Client):
        async def mcp_message(self, params: Any) -> Any:
            await asyncio.Event().wait()

    async def withdrawn(client: Any, calls: int) -> None:
        async def one() -> None:
            with anyio.move_on_after(0.05):
                await client.list_tools()

        for _ in range(calls // 100):
            async with anyio.create_task_group() as group:
                for _ in range(100):
                    group.start_soon(one)
            await settled(agent.caller._routes, agent_conn._waiting, client_conn._serving)

    agent = Consumer()
    async with acp.connect_pair(agent, Silent()) as (agent_conn, client_conn):
        await client_conn.initialize(INIT)
        async with agent.caller.client("calc-id") as client:
            await withdrawn(client, 300)  # what the first calls allocate for good (caches, free lists)
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                await withdrawn(client, 1000)
                gc.collect()
                growth = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
    assert growth < 1000 * 256, f"{growth / 1024:.0f} KiB held after 1,000 withdrawn calls"


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_a_remote_provider_that_never_answers_or_leaves_fails_the_call_and_leaves_nothing(scheme):
    """The agent behind `http_app` calls its client over Streamable HTTP or WebSocket: a call the
    client never answers times out and is withdrawn (`$/cancel_request` ends the client's
    handler); a call pending when the client leaves, and one made after, fail at once."""
    agents: list[Any] = []
    handlers: list[str] = []  # each call's state: "waiting", then "withdrawn" once cancelled

    class Silent(acp.Client):
        async def mcp_message(self, params: Any) -> Any:
            handlers.append("waiting")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                handlers[handlers.index("waiting")] = "withdrawn"
                raise

    def agent() -> Any:
        agents.append(Consumer())
        return agents[-1]

    connect = acp.connect_http if scheme == "http" else acp.connect_websocket
    async with (
        uvicorn_serving(acp.http_app(agent)) as url,
        connect(Silent(), url.replace("http", scheme, 1)) as client_conn,
    ):
        await client_conn.initialize(INIT)
        caller, agent_conn = agents[0].caller, agents[0].caller.conn
        async with caller.client("calc-id", read_timeout_seconds=0.3) as client:
            with pytest.raises(MCPError) as timed_out:
                await client.list_tools()
            assert timed_out.value.error.code == -32001  # the mcp client's timeout
            await settled(caller._routes, agent_conn._waiting, client_conn._serving)
            assert handlers == ["withdrawn"]
            pending = asyncio.ensure_future(client.list_tools())
            while len(handlers) < 2:
                await asyncio.sleep(0.01)
            await client_conn.close()
            with pytest.raises(MCPError) as left:
                await asyncio.wait_for(pending, 5)
            assert "closed" in left.value.error.message
            with pytest.raises(MCPError):
                await asyncio.wait_for(client.list_tools(), 5)
        assert caller._routes == {} and agent_conn._waiting == {}


LIMIT = 64 * 1024  # max_message_bytes of both connections in the tests of sizes below

repeater = MCPServer("repeater")


@repeater.tool()
def repeat(text: str, times: int) -> str:
    """`text`, `times` times."""
    return text * times


@asynccontextmanager
async def limited() -> AsyncIterator[tuple[Any, Any, Any]]:
    """A consumer and a provider whose connections read messages of at most LIMIT bytes: the
    agent's caller, its connection and repeater's `session/new` entry."""
    agent = Consumer()
    options = acp.ConnectionOptions(limits=acp.ConnectionLimits(max_message_bytes=LIMIT))
    async with acp_mcp.McpProvider() as provider:
        server = await provider.serve(repeater, name="repeater")
        async with acp.connect_pair(agent, Provider(provider), options=options) as (agent_conn, client_conn):
            await client_conn.initialize(INIT)
            yield agent.caller, agent_conn, server


@pytest.mark.parametrize(
    "text",
    [
        "x" * (LIMIT - 200),  # the params fit the limit, the mcp/message request around them does not
        "\u20ac" * (LIMIT // 2),  # fewer characters than the limit, more UTF-8 bytes (3 each)
    ],
    ids=["envelope", "utf8"],
)
async def test_a_request_longer_than_the_connections_limit_is_refused_before_sending_however_it_is_long(text):
    """What counts is the whole `mcp/message` line in bytes, as the peer reads it: the caller
    takes its connection's `max_message_bytes` (the TypeScript SDK's default where not set)."""
    async with limited() as (caller, _conn, server), caller.client(server, read_timeout_seconds=5) as client:
        with pytest.raises(MCPError) as raised:  # sent, the peer would skip it: a timeout
            await client.call_tool("repeat", {"text": text, "times": 1})
        assert raised.value.error.code == -32600
        assert (await client.call_tool("repeat", {"text": "ab", "times": 2})).structured_content == {"result": "abab"}
        assert caller._routes == {}


async def test_a_result_longer_than_the_connections_limit_is_an_inner_error_and_the_connection_goes_on():
    """The provider does not send an answer its peer would skip (which would leave the caller
    waiting for ever): it answers an inner MCP error (-32603) that says so."""
    async with limited() as (caller, conn, server), caller.client(server, read_timeout_seconds=5) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("repeat", {"text": "x", "times": LIMIT})
        assert raised.value.error.code == -32603 and f"{LIMIT} bytes" in raised.value.error.message
        assert (await client.call_tool("repeat", {"text": "ab", "times": 2})).structured_content == {"result": "abab"}
        assert caller._routes == {} and conn._waiting == {}


async def test_calls_after_the_connection_or_the_provider_closed_are_errors():
    async with served() as (caller, conn, provider, server):
        await provider.aclose()
        with pytest.raises(acp.RequestError) as raised:
            await conn.mcp_message(request(server.server_id, "tools/list", ENVELOPE))
        assert raised.value.code == -33001
        await conn.close()
        async with caller.client(server) as client:
            with pytest.raises(MCPError):
                await client.list_tools()
        assert caller._routes == {}


def test_import_acp_v2_imports_neither_the_mcp_module_nor_the_mcp_sdk():
    code = "import sys, acp_v2; acp_v2.Agent; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp' or m == 'acp_v2.mcp'))"
    result = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONPATH": str(ROOT / "generated")}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


acp_v1 = import_package(ROOT / "generated", "acp_v1")
acp_v1_mcp = import_package(ROOT / "generated", "acp_v1.mcp")


class V1Consumer(acp_v1.Agent):
    def on_connect(self, conn: Any) -> None:
        self.caller = acp_v1_mcp.McpCaller(conn)

    async def initialize(self, params: Any) -> Any:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def mcp_message(self, params: Any) -> None:
        await self.caller.deliver(params)


class V1Provider(acp_v1.Client):
    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def mcp_message(self, params: Any) -> Any:
        return await self.provider.handle(params, self.conn)


async def test_a_v1_agent_calls_a_tool_its_v1_client_serves_over_acp():
    """The unstable v1 schema carries `mcp/message` too: `acp_v1.mcp` works as `acp_v2.mcp` does."""
    agent = V1Consumer()
    async with acp_v1_mcp.McpProvider() as provider:
        server = await provider.serve(calc, name="calc")
        async with acp_v1.connect_pair(agent, V1Provider(provider)) as (_, client_conn):
            await client_conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
            async with agent.caller.client(server) as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
                assert result.structured_content == {"result": 5.0} and not result.is_error
