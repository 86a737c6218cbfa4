"""A v1 agent written with the official Python SDK (`agent-client-protocol` 0.12.1) over stdio, as
the agents people run are written: `initialize` is answered with the version the client asked
for (the SDK's examples echo it: a v2 request gets `protocolVersion: 2` with a v1 body), and
`agentInfo.name` tells what the client sent (`fs:read=...,write=...;terminal=...;client=NAME`).
A turn streams the prompt's words as `agent_message_chunk`s just before its `end_turn` answer;
a prompt "wait" runs until `session/cancel` ends it `cancelled`.

`--deaf`: once stdin ends the agent neither exits nor heeds SIGTERM (as some native agents);
it prints its pid to stderr first. Run with the SDK on PYTHONPATH (`make peers` installs it into
.cache/peers)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from typing import Any

from acp import run_agent, text_block
from acp.helpers import update_agent_message
from acp.schema import AgentCapabilities, Implementation, InitializeResponse, NewSessionResponse, PromptResponse


class EchoAgent:
    def __init__(self) -> None:
        self.client: Any = None
        self.turns: dict[str, asyncio.Task[Any]] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities is not None else None
        seen = (
            f"fs:read={fs is not None and fs.read_text_file},write={fs is not None and fs.write_text_file};"
            f"terminal={client_capabilities is not None and client_capabilities.terminal};"
            f"client={client_info.name if client_info is not None else None}"
        )
        info = Implementation(name=seen, version="0.12.1")
        return InitializeResponse(
            protocol_version=protocol_version, agent_capabilities=AgentCapabilities(), agent_info=info
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="py-sdk-session")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if turn := self.turns.get(session_id):
            turn.cancel()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = " ".join(block.text for block in prompt if getattr(block, "type", None) == "text")
        self.turns[session_id] = asyncio.current_task()  # type: ignore[assignment]
        try:
            if text == "wait":
                await asyncio.sleep(60)
            for word in re.findall(r"\s*\S+", text):
                await self.client.session_update(session_id, update_agent_message(text_block(word)))
            return PromptResponse(stop_reason="end_turn")
        except asyncio.CancelledError:  # session/cancel
            return PromptResponse(stop_reason="cancelled")
        finally:
            self.turns.pop(session_id, None)


def main() -> None:
    deaf = "--deaf" in sys.argv
    if deaf:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print(os.getpid(), file=sys.stderr, flush=True)
    asyncio.run(run_agent(EchoAgent()))
    if deaf:
        time.sleep(60)


if __name__ == "__main__":
    main()
