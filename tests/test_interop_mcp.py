"""MCP over ACP against the official TypeScript SDK 2.4.0, over stdio, both directions:
- the SDK's `McpOverAcpProvider` (interop/ts_mcp_client.mjs serves `calc` to its agent) with
  examples/mcp_agent.py, whose `mcp` client calls it through `acp_v2.mcp.McpCaller`;
- the SDK's `McpOverAcpCaller` (interop/ts_mcp_agent.mjs) with examples/mcp_client.py, which
  serves an `MCPServer` through `acp_v2.mcp.McpProvider`, over stdio and, behind the SDK's
  `AcpServer` (`ts_mcp_agent.mjs --listen`), over Streamable HTTP and WebSocket.
The inner traffic is MCP 2026-07-28 on both sides, as the provider's record of it shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.test_examples import ENV, EXAMPLES, listening_echo_agent
from tests.test_interop import INTEROP, ROOT, listening, node  # noqa: F401 (node: the fixture)


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
