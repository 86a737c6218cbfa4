"""A test agent for examples/client.py: each turn runs one tool call without asking permission,
retitles it ("Run" → "Run ls"), says one message and ends. `--v1` serves v1 alone (as agents on
the official Python SDK do); `--fail` answers `session/new` with an error whose `data` says
why, as real agents do.

    PYTHONPATH=generated python tests/support/quiet_agent.py [--v1] [--fail]"""

from __future__ import annotations

import asyncio
import itertools
import sys

import acp_v1
import acp_v2 as acp

FAIL = "--fail" in sys.argv
CAUSE = "OPENAI_API_KEY is not set"


class QuietAgent(acp.Agent):
    def __init__(self) -> None:
        self.ids = itertools.count(1)

    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        info = acp.Implementation(name="quiet-agent", version="1.0")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        if FAIL:
            raise acp.RequestError.internal_error(data=CAUSE)
        return acp.NewSessionResponse(session_id=f"session-{next(self.ids)}")

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.client.session(params.session_id)
        self.client.start_task(self.turn(session))
        return acp.PromptResponse(message_id=await session.user_message(params.prompt))

    async def turn(self, session: acp.AgentSession) -> None:
        await session.running()
        call = await session.tool_call("Run", kind=acp.ToolKind.EXECUTE)
        await call.update(title="Run ls", status=acp.ToolCallStatus.COMPLETED)
        await session.say("done")
        await session.idle("end_turn")


class QuietAgentV1(acp_v1.Agent):
    def __init__(self) -> None:
        self.ids = itertools.count(1)

    def on_connect(self, conn: acp_v1.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        info = acp_v1.Implementation(name="quiet-agent", version="1.0")
        return acp_v1.InitializeResponse(protocol_version=1, agent_info=info)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        if FAIL:
            raise acp_v1.RequestError.internal_error(data=CAUSE)
        return acp_v1.NewSessionResponse(session_id=f"session-{next(self.ids)}")

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        async with self.client.session(params.session_id) as session:
            call = await session.tool_call("Run", kind=acp_v1.ToolKind.EXECUTE)
            await call.update(title="Run ls", status=acp_v1.ToolCallStatus.COMPLETED)
            await session.say("done")
        return acp_v1.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    if "--v1" in sys.argv:
        asyncio.run(acp_v1.run_agent(QuietAgentV1()))
    else:
        asyncio.run(acp.run_agent(QuietAgent(), QuietAgentV1()))
