"""MCP over ACP against the official TypeScript SDK 2.4.0, live, both directions, over stdio,
Streamable HTTP and WebSocket. The MCP server is always the client's (the provider), the caller
always the agent; over HTTP and WebSocket the agent listens and its `mcp/message` requests reach
the client on the connection's event stream or as frames.

Each pair below runs over stdio, HTTP and WebSocket (12 runs, all in `make test`):
- the SDK's `McpOverAcpProvider` (interop/ts_mcp_client.mjs serves `calc`) with our
  `McpCaller` (examples/mcp_agent.py): `add 2 3`;
- our `McpProvider` (examples/mcp_client.py serves an `MCPServer`) with the SDK's
  `McpOverAcpCaller` (interop/ts_mcp_agent.mjs): `add 2 3`;
- the SDK's provider with our caller, hostile (tests/support/mcp_hostile_agent.py);
- our provider with the SDK's caller, hostile (ts_mcp_agent.mjs's prompt `hostile`).

HTTP and WebSocket: `mcp_agent.py --listen` and `mcp_hostile_agent.py --listen` (`http_app`
under uvicorn) with the SDK's `createHttpStream` and `createWebSocketStream`
(`ts_mcp_client.mjs --url`); `ts_mcp_agent.mjs --listen` (the SDK's `AcpServer`) with
`mcp_client.py --url` and `connect_http` / `connect_websocket`.

Hostile traffic, each direction: an unknown server id is the provider's outer -33001; a call
the provider never answers is withdrawn (`$/cancel_request`: the mcp client's read timeout, the
SDK caller's abort signal) and the provider's handler is cancelled; params longer than a peer
reads are refused by our caller before sending, and, sent by the SDK's caller (which has no
such check; over stdio), skipped by our connection and answered -32600 by their request's id;
then the same client calls again, and neither side holds a route, an unanswered request or an
active handler. Left out: over-long params from the SDK's caller over HTTP and WebSocket (such a
message ends our client's connection), and calls after the ACP session or connection closed
against the SDK (tests/test_examples.py runs session/close against examples/mcp_agent.py;
tests/package/test_mcp.py the rest without the SDK, in one process and over HTTP and WebSocket).

The inner traffic is MCP 2026-07-28 on both sides, as the provider's record of it shows."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from tests.support.helpers import import_package
from tests.test_examples import ENV, EXAMPLES, INIT, listening_echo_agent, prompt
from tests.test_interop import INTEROP, ROOT, listening, node  # noqa: F401 (node: the fixture)

acp = import_package(ROOT / "generated", "acp_v2")
acp_mcp = import_package(ROOT / "generated", "acp_v2.mcp")


def test_the_mcp_agent_calls_a_typescript_clients_mcp_server_over_acp(node):  # noqa: F811
    command = [node, str(INTEROP / "ts_mcp_client.mjs"), sys.executable, str(EXAMPLES / "mcp_agent.py")]
    result = subprocess.run(command, cwd=ROOT, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_mcp_client_report(json.loads(result.stdout))


def check_typescript_mcp_client_report(report: dict) -> None:
    assert report["agent"] == "mcp-agent" and report["mcpAcp"] is True  # it advertises session.mcp.acp
    assert report["messages"] == ["2 + 3 = 5"] and report["stopReason"] == "end_turn"
    # the mcp client validates the tool's result against the tool's listing, which it fetches
    assert {call["method"] for call in report["calls"]} == {"tools/call", "tools/list"}
    assert {call["protocolVersion"] for call in report["calls"]} == {"2026-07-28"}


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_listening_mcp_agent_calls_a_typescript_clients_mcp_server_over_http_and_websocket(node, scheme):  # noqa: F811
    """`mcp_agent.py --listen`: its `mcp/message` requests reach the SDK's `createHttpStream`
    client on the connection's event stream, and its `createWebSocketStream` client as frames."""
    with listening_echo_agent("mcp_agent.py") as (urls, _):
        command = [node, str(INTEROP / "ts_mcp_client.mjs"), "--url", urls[scheme]]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_mcp_client_report(json.loads(result.stdout))


HOSTILE_AGENT = ROOT / "tests" / "support" / "mcp_hostile_agent.py"


@contextmanager
def hostile_agent(transport: str) -> Iterator[list[str]]:
    """tests/support/mcp_hostile_agent.py, for ts_mcp_client.mjs: its command (stdio), or the
    `--url` of it listening (`http`, `ws`)."""
    if transport == "stdio":
        yield [sys.executable, str(HOSTILE_AGENT)]
        return
    with listening_echo_agent(str(HOSTILE_AGENT)) as (urls, _):
        yield ["--url", urls[transport]]


@pytest.mark.parametrize("transport", ["stdio", "http", "ws"])
def test_hostile_mcp_calls_to_a_typescript_provider_get_errors_and_leave_nothing(node, transport):  # noqa: F811
    """Our caller against the SDK's `McpOverAcpProvider`: an unknown server id is its outer
    -33001; params longer than a peer reads are refused before sending (-32600); a call it never
    answers times out (-32001) and is withdrawn, which aborts the provider's handler; then the
    same mcp client adds, and the agent holds no route and no unanswered request."""
    with hostile_agent(transport) as agent:
        command = [node, str(INTEROP / "ts_mcp_client.mjs"), "--prompt", "hostile", *agent]
        result = subprocess.run(
            command, cwd=ROOT, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["stopReason"] == "end_turn"
    assert json.loads(report["messages"][0]) == {
        "unknownServer": {"code": -33001},
        "hugeParams": {"code": -32600},
        "neverAnswers": {"code": -32001},
        "routes": 0,
        "waiting": 0,
        "afterwards": {"result": "5"},
    }
    assert [call["method"] for call in report["calls"] if call["method"] != "tools/list"] == [
        "tools/call",  # wait
        "cancelled",  # its abort signal: $/cancel_request reached the provider
        "tools/call",  # add
    ]


def test_a_typescript_agent_calls_the_mcp_clients_mcp_server_over_acp(node):  # noqa: F811
    command = [sys.executable, str(EXAMPLES / "mcp_client.py"), node, str(INTEROP / "ts_mcp_agent.mjs")]
    result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["connected to ts-mcp-agent", "agent: 2 + 3 = 5.0"]


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_a_listening_typescript_agent_calls_the_mcp_clients_mcp_server_over_http_and_websocket(node, scheme):  # noqa: F811
    with listening([node, str(INTEROP / "ts_mcp_agent.mjs"), "--listen"]) as url:
        command = [sys.executable, str(EXAMPLES / "mcp_client.py"), "--url", url.replace("http", scheme, 1)]
        result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["connected to ts-mcp-agent", "agent: 2 + 3 = 5.0"]


class HostileCalcClient(acp.Client):
    """A client serving `calc` (`add`, and `wait`, which answers only when cancelled) through
    `McpProvider`: what the agent said, each turn's end, and each `wait` that was cancelled."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.said: list[str] = []
        self.idle: asyncio.Queue[str] = asyncio.Queue()
        self.waits_cancelled = 0
        self.server = MCPServer("calc")

        @self.server.tool()
        def add(a: float, b: float) -> float:
            return a + b

        @self.server.tool()
        async def wait() -> str:
            try:
                await asyncio.Event().wait()
            finally:
                self.waits_cancelled += 1
            return "never"

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def mcp_message(self, params: Any) -> Any:
        return await self.provider.handle(params, self.conn)

    async def session_update(self, params: Any) -> None:
        match params.update:
            case acp.SessionUpdateAgentMessageChunk(content=acp.ContentBlockText(text=text)):
                self.said.append(text)
            case acp.SessionUpdateStateUpdate(state=acp.StateUpdateIdle(stop_reason=reason)):
                self.idle.put_nowait(reason.stop_reason)


@asynccontextmanager
async def typescript_mcp_agent(client: Any, node: str, transport: str) -> AsyncIterator[Any]:  # noqa: F811
    """A connection of `client` to interop/ts_mcp_agent.mjs over `transport`."""
    script = str(INTEROP / "ts_mcp_agent.mjs")
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            conn, _ = await stack.enter_async_context(acp.spawn_agent_process(client, node, script, cwd=ROOT))
        else:
            url = stack.enter_context(listening([node, script, "--listen"])).replace("http", transport, 1)
            connect = acp.connect_http if transport == "http" else acp.connect_websocket
            conn = await stack.enter_async_context(connect(client, url))
        yield conn


@pytest.mark.async_timeout(60)
@pytest.mark.parametrize("transport", ["stdio", "http", "ws"])
async def test_hostile_mcp_calls_from_a_typescript_caller_get_errors_and_our_provider_keeps_nothing(node, transport):  # noqa: F811
    """The SDK's `McpOverAcpCaller` against `McpProvider`: an unknown server id is our outer
    -33001; a call it withdraws (its abort signal: `$/cancel_request`) cancels our tool and is
    answered -32800; over stdio, params over the 32 MiB a peer reads (the SDK's caller sends
    them) are skipped by our connection and answered -32600 by the request's id (without the
    id the caller could not match the answer, and it waits for one even after its abort
    signal); then it adds, and our provider holds no active request and our connection no
    handler."""
    async with acp_mcp.McpProvider() as provider:
        client = HostileCalcClient(provider)
        calc = await provider.serve(client.server, name="calc")
        async with typescript_mcp_agent(client, node, transport) as conn:
            await conn.initialize(INIT)
            session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[calc]))
            huge = transport == "stdio"  # over HTTP and WebSocket such a message ends our connection
            await conn.session_prompt(prompt(session.session_id, "hostile huge" if huge else "hostile"))
            assert await client.idle.get() == "end_turn"
            assert json.loads(client.said[-1]) == {
                "unknownServer": {"code": -33001},
                "neverAnswers": {"aborted": True},
                **({"hugeParams": {"code": -32600}} if huge else {}),  # skipped, answered by its id
                "afterwards": {"result": "5.0"},
            }
            assert client.waits_cancelled == 1
            assert provider._servers[calc.server_id].active == set() and conn._serving == {}
