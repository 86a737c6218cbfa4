"""An ACP v2 agent over stdin/stdout written with the agent helpers (`conn.session(session_id)`):
it counts the words of each prompt.

A turn: the prompt is inserted as a user message (`session/prompt` is answered with its id),
the agent reports `running`, sends a three-step plan, thinks aloud, opens a "Count words" tool
call and asks permission to run it (allow once, allow always, reject). Allowed: the tool call
is patched `in_progress`, then `completed` with its result as content and raw output, the
plan's steps are marked as they finish, the answer is streamed as one message and the session
gets a title; rejected: the tool call fails and the agent says so. The turn ends `idle` with
`end_turn`; `session/cancel` cancels it (`cancelled`), withdrawing a pending permission request.
"Allow always" is remembered for the session. The agent keeps what it sent in each session
(`acp.SessionHistory`): `session/resume` takes a session of the connection up again and replays
it (`replayFrom: start`).

    PYTHONPATH=generated python examples/helpers_agent.py"""

from __future__ import annotations

import asyncio
import itertools
import logging

import acp_v2 as acp

STEPS = ["Read the prompt", "Count the words", "Answer"]


def plan(done: int) -> list[acp.PlanEntry]:
    """The plan with its first `done` steps completed and the next one in progress."""
    return [
        acp.PlanEntry(
            content=step,
            priority="medium",
            status="completed" if i < done else "in_progress" if i == done else "pending",
        )
        for i, step in enumerate(STEPS)
    ]


class WordCountAgent(acp.Agent):
    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.turns: dict[acp.SessionId, asyncio.Task[None]] = {}  # the running turn of each session
        self.always: set[acp.SessionId] = set()  # sessions where the user chose "allow always"
        self.history = acp.SessionHistory()  # what was sent in each session, for session/resume

    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        info = acp.Implementation(name="word-count-agent", version="1.0")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"session-{next(self.ids)}"
        self.history.start(session_id)
        return acp.NewSessionResponse(session_id=session_id)

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        await self.client.session(params.session_id, self.history).resume(params.replay_from)
        return acp.ResumeSessionResponse()

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        if (running := self.turns.get(params.session_id)) and not running.done():
            raise acp.RequestError.invalid_request(message="a turn is running in this session")
        session = self.client.session(params.session_id, self.history)
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp.ContentBlockText))
        self.turns[params.session_id] = self.client.start_task(self.turn(session, text))  # the connection owns it
        return acp.PromptResponse(message_id=await session.user_message(params.prompt))

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        if turn := self.turns.get(params.session_id):
            turn.cancel()

    async def turn(self, session: acp.AgentSession, text: str) -> None:
        try:
            await session.running()
            await session.plan(plan(0))
            await session.think("The user wants their words counted.")
            call = await session.tool_call("Count words", kind=acp.ToolKind.THINK, raw_input={"text": text})
            await session.plan(plan(1))
            if await self.allowed(session, call):
                await call.update(status=acp.ToolCallStatus.IN_PROGRESS)
                count = len(text.split())
                await call.update(status=acp.ToolCallStatus.COMPLETED, content=f"{count} words", raw_output=count)
                await session.plan(plan(2))
                for chunk in ("Your prompt has ", f"{count} ", "words."):
                    await session.say(chunk)
                await session.plan(plan(3))
                await session.title(f"{count} words")
            else:
                await call.update(status=acp.ToolCallStatus.FAILED)
                await session.say("I did not count them.")
            await session.idle("end_turn")
        except asyncio.CancelledError:  # session/cancel
            await session.idle("cancelled")

    async def allowed(self, session: acp.AgentSession, call: acp.ToolCallHandle) -> bool:
        if session.session_id in self.always:
            return True
        answer = await session.ask_permission(call, allow="Count", allow_always="Always count", reject="Don't")
        if answer.option is not None and answer.option.kind == acp.PermissionOptionKind.ALLOW_ALWAYS:
            self.always.add(session.session_id)
        return answer.allowed


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)  # stderr: stdout carries only protocol lines
    asyncio.run(acp.run_agent(WordCountAgent()))
