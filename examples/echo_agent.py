"""An ACP v2 agent that echoes each prompt back as a streamed message, over stdin/stdout.

Run it with `generated/` on PYTHONPATH (or `acp_v2` copied next to it)."""

from __future__ import annotations

import asyncio
import logging

import acp_v2 as acp


class EchoAgent(acp.Agent):
    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        info = acp.Implementation(name="echo-agent", version="1.0")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=acp.SessionId("session-1"))

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        for block in params.prompt:
            chunk = acp.SessionUpdateAgentMessageChunk(message_id=acp.MessageId("reply-1"), content=block)
            await self.client.session_update(acp.UpdateSessionNotification(session_id=params.session_id, update=chunk))
        return acp.PromptResponse(message_id=acp.MessageId("reply-1"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)  # stderr: stdout carries only protocol lines
    asyncio.run(acp.run_agent(EchoAgent()))
