"""An ACP proxy that offers whatever agent it fronts an MCP tool: it serves an MCP server named
`calc` with a tool `add(a: number, b: number)` (an `MCPServer` of the official MCP SDK, through
`acp_v2.mcp.McpProvider`) and adds it to every `session/new` it forwards, when the agent
advertises ACP-transport MCP servers (`capabilities.session.mcp.acp`); the agent's `mcp/message`
requests for it are answered here, the others go on to the client. Everything else passes
through unchanged (`acp_v2.proxy.ForwardingAgent`, `ForwardingClient`).

A conductor runs it in front of an agent:

    PYTHONPATH=generated python -m acp_v2.conductor "python examples/proxy.py" "python examples/mcp_agent.py"

Needs the `mcp` extra (the official MCP SDK)."""

from __future__ import annotations

import asyncio
import logging

import acp_v2 as acp
from acp_v2.mcp import McpProvider
from acp_v2.proxy import ForwardingAgent, ForwardingClient, run_proxy
from mcp.server.mcpserver import MCPServer

calc = MCPServer("calc")


@calc.tool()
def add(a: float, b: float) -> float:
    """The sum of a and b."""
    return a + b


class Calc:
    """The proxy's MCP server, served once for every session."""

    def __init__(self, provider: McpProvider) -> None:
        self.provider = provider
        self.entry: acp.McpServerAcpVariant | None = None

    async def server(self) -> acp.McpServerAcpVariant:
        if self.entry is None:
            self.entry = await self.provider.serve(calc, name="calc")
        return self.entry

    def serves(self, server_id: str) -> bool:
        return self.entry is not None and self.entry.server_id == server_id


class CalcProxy(ForwardingAgent):
    """Adds `calc` to the sessions of an agent that takes ACP-transport MCP servers."""

    def __init__(self, calc: Calc) -> None:
        self.calc = calc
        self.agent_takes_acp_servers = False

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        answer = await self.successor.initialize(params)  # the successor first, as a proxy must
        session = answer.capabilities.session if isinstance(answer.capabilities, acp.AgentCapabilities) else None
        mcp = session.mcp if isinstance(session, acp.SessionCapabilities) else None
        self.agent_takes_acp_servers = isinstance(mcp, acp.McpCapabilities) and isinstance(
            mcp.acp, acp.McpAcpCapabilities
        )
        return answer

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        if self.agent_takes_acp_servers:
            servers = params.mcp_servers if isinstance(params.mcp_servers, list) else []
            params.mcp_servers = [*servers, await self.calc.server()]
        return await self.successor.session_new(params)


class CalcProxyClient(ForwardingClient):
    """Answers the agent's `mcp/message` requests for `calc`; passes the others to the client."""

    def __init__(self, calc: Calc) -> None:
        self.calc = calc

    async def mcp_message(self, params: acp.MessageMcpRequest) -> acp.MessageMcpResponse:
        if self.calc.serves(params.server_id):
            return await self.calc.provider.handle(params, self.successor)  # progress goes to the agent
        return await self.predecessor.mcp_message(params)


async def main() -> None:
    async with McpProvider() as provider:
        shared = Calc(provider)
        await run_proxy(CalcProxy(shared), CalcProxyClient(shared))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)  # stderr: stdout carries only protocol lines
    asyncio.run(main())
