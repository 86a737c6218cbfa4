"""A v1 echo agent written with the official Python SDK (`agent-client-protocol` 0.12.1), served by
the SDK's own server: `acp.http.asgi.create_asgi_app` (its `AcpServer`: Streamable HTTP, and
WebSocket through `acp.ws`) under uvicorn, on a free port of 127.0.0.1. It prints
`http://127.0.0.1:PORT/acp` on one line (`ws://` the same) and serves until stdin ends.

A turn, as examples/echo_agent.py's v1 route has it: `session/prompt` opens an "echo" tool call,
asks permission with an "allow" option, streams the prompt's words as `agent_message_chunk`s,
completes the tool call and answers `end_turn`; `session/cancel` during the permission request
ends the turn `cancelled`. Run with the SDK on PYTHONPATH (`make test` installs it into
.cache/peers)."""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
from typing import Any

import uvicorn
from acp import text_block
from acp.helpers import start_tool_call, update_agent_message, update_tool_call
from acp.http.asgi import create_asgi_app
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)


class EchoAgent:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.ids = itertools.count(1)
        self.turns: dict[str, asyncio.Task[Any]] = {}

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        info = Implementation(name="py-sdk-echo-agent", version="0.12.1")
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities(), agent_info=info)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"session-{next(self.ids)}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if turn := self.turns.get(session_id):
            turn.cancel()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        turn = asyncio.current_task()
        assert turn is not None
        self.turns[session_id] = turn
        tool = f"echo-{next(self.ids)}"
        text = " ".join(block.text for block in prompt if getattr(block, "type", None) == "text")
        try:
            await self.client.session_update(session_id, start_tool_call(tool, "Echo", kind="other"))
            options = [
                PermissionOption(option_id="allow", name="Echo", kind="allow_once"),
                PermissionOption(option_id="reject", name="Don't", kind="reject_once"),
            ]
            call = ToolCallUpdate(tool_call_id=tool)
            answer = await self.client.request_permission(session_id=session_id, tool_call=call, options=options)
            allowed = getattr(answer.outcome, "option_id", None) == "allow"
            for word in re.findall(r"\s*\S+", text) if allowed else []:
                await self.client.session_update(session_id, update_agent_message(text_block(word)))
            status = "completed" if allowed else "failed"
            await self.client.session_update(session_id, update_tool_call(tool, status=status))
            return PromptResponse(stop_reason="end_turn")
        except asyncio.CancelledError:  # session/cancel
            return PromptResponse(stop_reason="cancelled")
        finally:
            self.turns.pop(session_id, None)


async def main() -> None:
    server = uvicorn.Server(uvicorn.Config(create_asgi_app(EchoAgent), host="127.0.0.1", port=0, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    print(f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/acp", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving


if __name__ == "__main__":
    asyncio.run(main())
