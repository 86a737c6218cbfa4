"""A v2 agent over stdio that uses the MCP tools its client offers over ACP (`mcp/message`).

It advertises ACP-transport MCP servers (`capabilities.session.mcp.acp`). On a prompt
`add A B` it calls the tool `add` (`a`, `b`: JSON numbers) of the ACP-transport MCP server named
`calc` it was given in `session/new`, through an ordinary `mcp` client (`acp_v2.mcp.McpCaller`),
answers with the result as an agent message and ends the turn with an idle state update.
Anything else is answered with how to ask.

    PYTHONPATH=generated python examples/mcp_client.py python examples/mcp_agent.py
    PYTHONPATH=generated python examples/mcp_agent.py --listen 127.0.0.1:8765

`--listen HOST:PORT` serves it over Streamable HTTP and WebSocket instead, at
`http://HOST:PORT/acp` and `ws://HOST:PORT/acp` (`acp.http_app` under uvicorn, as
`echo_agent.py --listen` does: it prints both URLs once it listens and drains on SIGINT or
SIGTERM; the `mcp/message` requests then travel to each client on its connection's stream).

Needs the `mcp` extra (the official MCP SDK), and `uvicorn` for `--listen`."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging

import acp_v2 as acp
from acp_v2.mcp import McpCaller
from echo_agent import address, listen, loopback


class McpAgent(acp.Agent):
    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.servers: dict[acp.SessionId, dict[str, acp.McpServerAcp]] = {}  # each session's ACP MCP servers by name

    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn
        self.mcp = McpCaller(conn)

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        mcp = acp.McpCapabilities(acp=acp.McpAcpCapabilities())
        return acp.InitializeResponse(
            protocol_version=params.protocol_version,
            info=acp.Implementation(name="mcp-agent", version="1.0"),
            capabilities=acp.AgentCapabilities(session=acp.SessionCapabilities(mcp=mcp)),
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"session-{next(self.ids)}"
        servers = params.mcp_servers if isinstance(params.mcp_servers, list) else []
        self.servers[session_id] = {s.name: s for s in servers if isinstance(s, acp.McpServerAcp)}
        return acp.NewSessionResponse(session_id=session_id)

    async def mcp_message(self, params: acp.MessageMcpNotification) -> None:
        await self.mcp.deliver(params)  # progress of an active tool call, to its mcp client

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        if params.session_id not in self.servers:
            raise acp.RequestError.session_not_found(params.session_id)
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp.ContentBlockText))
        session = self.client.session(params.session_id)
        self.client.start_task(self.turn(session, self.servers[params.session_id], text))
        return acp.PromptResponse(message_id=await session.user_message(params.prompt))

    async def turn(self, session: acp.AgentSession, servers: dict[str, acp.McpServerAcp], text: str) -> None:
        await session.running()
        try:
            try:
                answer = await self.answer(servers, text)
            except Exception as error:  # an MCP error (MCPError), the client gone, ...
                answer = f"calc failed: {error}"
            await session.say(answer)
        finally:
            await session.idle("end_turn")

    async def answer(self, servers: dict[str, acp.McpServerAcp], text: str) -> str:
        match text.split():
            case ["add", a, b]:
                if "calc" not in servers:
                    return "no MCP server named calc was given"
                arguments = {"a": json.loads(a), "b": json.loads(b)}
                async with self.mcp.client(servers["calc"]) as calc:
                    result = await calc.call_tool("add", arguments)
                words = " ".join(block.text for block in result.content if block.type == "text")
                return f"{a} + {b} = {words}" if not result.is_error else f"calc failed: {words}"
            case _:
                return "ask me: add A B"


def main() -> None:
    parser = argparse.ArgumentParser(description="A v2 agent that calls the MCP tools its client offers over ACP.")
    parser.add_argument(
        "--listen", type=address, metavar="HOST:PORT", help="serve http://HOST:PORT/acp and ws://HOST:PORT/acp"
    )
    arguments = parser.parse_args()
    if arguments.listen is not None and not loopback(arguments.listen[0]):
        parser.error(f"--listen {arguments.listen[0]}: not a loopback address, and this agent has no authorization")
    logging.basicConfig(level=logging.INFO)  # stderr: over stdio, stdout carries only protocol lines
    if arguments.listen is None:
        asyncio.run(acp.run_agent(McpAgent()))
    else:
        host, port = arguments.listen
        asyncio.run(listen(host, port, app=acp.http_app(McpAgent)))


if __name__ == "__main__":
    main()
