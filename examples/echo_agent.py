"""An ACP agent over stdin/stdout that echoes each prompt, word by word, once the client allows it:
v2 clients get `EchoAgent`, v1 clients (every editor today) `EchoAgentV1`, on the same stdio, as
the `protocolVersion` of the client's `initialize` selects (`acp.run_agent(EchoAgent(), EchoAgentV1())`).

A turn: the agent inserts the prompt (echoes it as a `user_message` and answers `session/prompt`
with its id), reports `running`, opens an "echo" tool call, asks the client's permission, streams
the words as chunks of one message, completes the tool call and reports `idle` with `end_turn`.
"Don't" fails the tool call and ends the turn; a `cancelled` answer ends it `cancelled`.
A prompt sent while a turn runs is held until the turn ends. `session/cancel` cancels the turn:
a pending permission request is withdrawn (`$/cancel_request`), the tool call ends `cancelled`,
the idle update says `cancelled`, and held prompts are answered -32800.

A v1 turn is the same echo in v1 terms: `session/prompt` opens an "echo" tool call, asks
permission with an "allow" option, streams the words as `agent_message_chunk`s and is answered
`stopReason: end_turn` (`cancelled` after `session/cancel`).

Run it with `generated/` on PYTHONPATH (or `acp_v2` and `acp_v1` copied next to it)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from collections import Counter
from typing import Any

import acp_v1
import acp_v2 as acp


class EchoAgent(acp.Agent):
    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.turns: dict[acp.SessionId, asyncio.Task[None] | None] = {}  # the latest turn of each session
        self.cancels: Counter[acp.SessionId] = Counter()  # session/cancel notifications per session

    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        info = acp.Implementation(name="echo-agent", version="1.0")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"session-{next(self.ids)}"
        self.turns[session_id] = None
        return acp.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session_id = params.session_id
        if session_id not in self.turns:
            raise acp.RequestError.session_not_found(session_id)
        cancels = self.cancels[session_id]
        while (turn := self.turns[session_id]) and not turn.done():  # a turn runs: hold the prompt
            await asyncio.wait([turn])
            if self.cancels[session_id] != cancels:  # session/cancel came meanwhile
                raise acp.RequestError.request_cancelled()
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp.ContentBlockText))
        session = self.client.session(session_id)
        self.turns[session_id] = asyncio.create_task(self.turn(session, text))  # runs once this handler waits
        return acp.PromptResponse(message_id=await session.user_message(params.prompt))

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        self.cancels[params.session_id] += 1
        if turn := self.turns.get(params.session_id):
            turn.cancel()

    async def turn(self, session: acp.AgentSession, text: str) -> None:
        await session.running()
        call = await session.tool_call("Echo", name="echo", raw_input={"text": text})
        outcome = "cancelled"  # unless the client answers with an option
        try:  # session/cancel cancels this task: a pending permission request is withdrawn ($/cancel_request)
            answer = await session.ask_permission(call, title="Echo?", allow="Echo", reject="Don't")
            if answer.allowed:
                await call.update(status=acp.ToolCallStatus.IN_PROGRESS)
                for word in re.findall(r"\s*\S+", text):  # one chunk per word, all of one message
                    await session.say(word)
            outcome = "completed" if answer.allowed else "cancelled" if answer.cancelled else "failed"
        finally:
            await call.update(status=outcome)
            await session.idle("cancelled" if outcome == "cancelled" else "end_turn")


class EchoAgentV1(acp_v1.Agent):
    """The echo turn for v1 clients: `session/prompt` is answered when the turn ends."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.turns: dict[str, asyncio.Task[Any]] = {}  # the prompt handler running in each session

    def on_connect(self, conn: acp_v1.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        info = acp_v1.Implementation(name="echo-agent", version="1.0")
        return acp_v1.InitializeResponse(protocol_version=1, agent_info=info)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id=f"session-{next(self.ids)}")

    async def session_cancel(self, params: acp_v1.CancelNotification) -> None:
        if turn := self.turns.get(params.session_id):
            turn.cancel()

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        session = self.client.session(params.session_id)
        turn = asyncio.current_task()
        assert turn is not None
        self.turns[params.session_id] = turn
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp_v1.ContentBlockText))
        try:
            call = await session.tool_call("Echo", kind=acp_v1.ToolKind.OTHER)
            answer = await session.ask_permission(call, allow="Echo", reject="Don't")
            for word in re.findall(r"\s*\S+", text) if answer.allowed else []:
                await session.say(word)
            done = acp_v1.ToolCallStatus.COMPLETED if answer.allowed else acp_v1.ToolCallStatus.FAILED
            await call.update(status=done)
            return acp_v1.PromptResponse(stop_reason="end_turn")
        except asyncio.CancelledError:  # session/cancel: the turn ends `cancelled`
            return acp_v1.PromptResponse(stop_reason="cancelled")
        finally:
            self.turns.pop(params.session_id, None)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)  # stderr: stdout carries only protocol lines
    asyncio.run(acp.run_agent(EchoAgent(), EchoAgentV1()))
