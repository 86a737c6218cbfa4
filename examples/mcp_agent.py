"""A v2 agent over stdio that uses the MCP tools its client offers over ACP (`mcp/message`).

It advertises ACP-transport MCP servers (`capabilities.session.mcp.acp`). On a prompt
`add A B` it calls the tool `add` (`a`, `b`: JSON numbers) of the ACP-transport MCP server named
`calc` it was given in `session/new`, through an ordinary `mcp` client (`acp_v2.mcp.McpCaller`),
answers with the result as an agent message and ends the turn with an idle state update.
Anything else is answered with how to ask. `session/cancel` and `session/close` cancel the turn,
which withdraws its MCP call (the `mcp/message` request: `$/cancel_request`); it ends
`cancelled`, and a closed session's servers are forgotten. `session/resume` takes a session of
this connection up again with the servers it declares, and replays it (`replayFrom: start`).

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
from typing import Literal

import acp_v2 as acp
from acp_v2.mcp import McpCaller
from echo_agent import address, listen, loopback


class McpAgent(acp.Agent):
    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.servers: dict[acp.SessionId, dict[str, acp.McpServerAcp]] = {}  # each session's ACP MCP servers by name
        self.turns: dict[acp.SessionId, asyncio.Task[None]] = {}  # the latest turn of each session
        self.stopping: set[asyncio.Task[None]] = set()  # turns cancelled by session/cancel or session/close
        self.history = acp.SessionHistory()  # what was sent in each session, for session/resume

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
        self.servers[session_id] = acp_servers(params.mcp_servers)
        self.history.start(session_id)
        return acp.NewSessionResponse(session_id=session_id)

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        await self.client.session(params.session_id, self.history).resume(params.replay_from)
        self.servers[params.session_id] = acp_servers(params.mcp_servers)
        return acp.ResumeSessionResponse()

    async def mcp_message(self, params: acp.MessageMcpNotification) -> None:
        await self.mcp.deliver(params)  # progress of an active tool call, to its mcp client

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        if params.session_id not in self.servers:
            raise acp.RequestError.session_not_found(params.session_id)
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp.ContentBlockText))
        session, servers = self.client.session(params.session_id, self.history), self.servers[params.session_id]
        # the connection owns the turn's task: it is cancelled and awaited when the connection ends
        self.turns[params.session_id] = self.client.start_task(self.turn(session, servers, text))
        return acp.PromptResponse(message_id=await session.user_message(params.prompt))

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        self.stop(params.session_id)

    async def session_close(self, params: acp.CloseSessionRequest) -> acp.CloseSessionResponse:
        turn = self.stop(params.session_id)
        if turn is not None:
            await asyncio.wait([turn])  # its idle `cancelled` goes out before the answer
        self.servers.pop(params.session_id, None)
        self.turns.pop(params.session_id, None)
        return acp.CloseSessionResponse()

    def stop(self, session_id: acp.SessionId) -> asyncio.Task[None] | None:
        """Cancel the session's running turn, if any: that turn."""
        turn = self.turns.get(session_id)
        if turn is None or turn.done():
            return None
        self.stopping.add(turn)
        turn.cancel()
        return turn

    async def turn(self, session: acp.AgentSession, servers: dict[str, acp.McpServerAcp], text: str) -> None:
        reason: Literal["end_turn", "cancelled"] = "end_turn"
        try:
            await session.running()
            try:
                answer = await self.answer(servers, text)
            except Exception as error:  # an MCP error (MCPError), the client gone, ...
                answer = f"calc failed: {error}"
            await session.say(answer)
        except asyncio.CancelledError:  # the MCP call, if any, is withdrawn as the cancellation passes
            if asyncio.current_task() not in self.stopping:
                raise  # the connection is ending: nothing more can be sent
            reason = "cancelled"
        finally:
            self.stopping.discard(asyncio.current_task())
        await session.idle(reason)

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


def acp_servers(servers: object) -> dict[str, acp.McpServerAcp]:
    """The ACP-transport MCP servers of a `session/new` or `session/resume`, by name."""
    return {s.name: s for s in servers if isinstance(s, acp.McpServerAcp)} if isinstance(servers, list) else {}


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
