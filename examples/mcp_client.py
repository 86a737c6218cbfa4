"""An ACP client that offers its agent an MCP server over ACP: starts the agent command, serves
an MCP server named `calc` with a tool `add(a: number, b: number)` over `mcp/message`
(`acp_v2.mcp.McpProvider`, an `MCPServer` of the official MCP SDK), prompts `add 2 3`, prints
the agent's messages and exits 0 once the turn has ended (the agent's idle state update).

    PYTHONPATH=generated python examples/mcp_client.py python examples/mcp_agent.py
    PYTHONPATH=generated python examples/mcp_client.py --url ws://127.0.0.1:8765/acp

`--url` connects to a running agent over Streamable HTTP (`http://`: the `http` extra) or
WebSocket (`ws://`: the `websocket` extra) instead of starting one. Needs the `mcp` extra (the
official MCP SDK)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import acp_v2 as acp
from acp_v2.mcp import McpProvider
from mcp.server.mcpserver import MCPServer

calc = MCPServer("calc")


@calc.tool()
def add(a: float, b: float) -> float:
    """The sum of a and b."""
    return a + b


class McpClient(acp.Client):
    def __init__(self, provider: McpProvider) -> None:
        self.provider = provider
        self.messages: dict[str, str] = {}  # agent message id → its chunks' text so far
        self.turn_ended = asyncio.Event()

    def on_connect(self, conn: acp.ClientSideConnection) -> None:
        self.conn = conn

    async def mcp_message(self, params: acp.MessageMcpRequest) -> acp.MessageMcpResponse:
        return await self.provider.handle(params, self.conn)  # an inner request for calc

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        match params.update:
            case acp.SessionUpdateAgentMessageChunk(message_id=message_id, content=acp.ContentBlockText(text=text)):
                self.messages[message_id] = self.messages.get(message_id, "") + text
            case acp.SessionUpdateStateUpdate(state=acp.StateUpdateIdle()):
                self.turn_ended.set()


@contextlib.asynccontextmanager
async def opened(agent: list[str]) -> AsyncIterator[acp.Transport]:
    """A transport to the agent at `--url URL`, or to the agent command started here."""
    if agent[:1] == ["--url"] and agent[1].startswith(("ws://", "wss://")):
        async with acp.open_websocket(agent[1]) as transport:
            yield transport
    elif agent[:1] == ["--url"]:
        async with acp.open_http(agent[1]) as transport:
            yield transport
    else:
        async with acp.open_agent_process(*agent) as (transport, _process):
            yield transport


async def main(agent: list[str]) -> None:
    async with McpProvider() as provider, opened(agent) as transport:
        client = McpClient(provider)
        async with acp.ClientSideConnection(client, transport) as conn:
            info = acp.Implementation(name="mcp-client", version="1.0")
            init = await conn.initialize(acp.InitializeRequest(protocol_version=2, info=info))
            print(f"connected to {init.info.name}")
            server = await provider.serve(calc, name="calc")
            cwd = str(Path.cwd().resolve())
            session = await conn.session_new(acp.NewSessionRequest(cwd=cwd, mcp_servers=[server]))
            prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="add 2 3")]
            await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
            await client.turn_ended.wait()
            for text in client.messages.values():
                print(f"agent: {text}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
