"""MCP over ACP (`mcp/message`) with the official MCP SDK: `pip install "DIR[mcp]"`.

A client (or proxy) serves `mcp` servers to its agent, an agent reaches them through ordinary
`mcp` clients; the inner traffic is MCP's stateless 2026-07-28 revision (see `_mcp`):

    async with McpProvider() as provider:             # the client's side
        calc = await provider.serve(server, name="calc")   # an MCPServer or a low-level Server
        await conn.session_new(NewSessionRequest(cwd=cwd, mcp_servers=[calc]))
        # its Client.mcp_message(params): return await provider.handle(params, conn)

    caller = McpCaller(conn)                          # the agent's side
    # its Agent.mcp_message(params): await caller.deliver(params)
    async with caller.client(server) as mcp_client:   # server: the McpServerAcp of session/new
        result = await mcp_client.call_tool("add", {"a": 2, "b": 3})

Importing the package never imports this module, nor `mcp`."""

from __future__ import annotations

from typing import Any

from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from . import _mcp
from ._mcp import PROTOCOL_VERSION, SERVER_UNAVAILABLE
from .models import (
    McpError,
    McpServerAcpVariant,
    MessageMcpNotification,
    MessageMcpRequest,
    MessageMcpResponse,
    MessageMcpResponseError,
    MessageMcpResponseResult,
)

__all__ = ["PROTOCOL_VERSION", "SERVER_UNAVAILABLE", "McpCaller", "McpProvider"]

_MESSAGES = _mcp.McpMessages(
    request=MessageMcpRequest,
    notification=MessageMcpNotification,
    result=MessageMcpResponseResult,
    error=MessageMcpResponseError,
    error_object=McpError,
    server=McpServerAcpVariant,
)


class McpProvider(_mcp.McpProvider):
    __doc__ = _mcp.McpProvider.__doc__
    messages = _MESSAGES

    async def serve(self, server: Server[Any] | MCPServer, *, name: str | None = None) -> McpServerAcpVariant:
        """Serve `server` from now on; its `McpServerAcp` entry for `session/new`."""
        entry: McpServerAcpVariant = await super().serve(server, name=name)
        return entry

    async def handle(self, params: MessageMcpRequest, peer: _mcp.Peer) -> MessageMcpResponse:
        """The answer to one `mcp/message` request (see `McpProvider`)."""
        answer: MessageMcpResponse = await super().handle(params, peer)
        return answer


class McpCaller(_mcp.McpCaller):
    __doc__ = _mcp.McpCaller.__doc__
    messages = _MESSAGES
