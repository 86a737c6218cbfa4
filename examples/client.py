"""An ACP v2 client: starts an agent, runs a prompt turn, then cancels a second one.

Each streamed update is folded into the state of its message or tool call with `acp.merge`;
when the agent reports `idle`, the turn's folded state is printed. `main` plays the user: it
allows the first permission request, and at the second it cancels the turn with `session/cancel`
and answers the request `cancelled`.

    PYTHONPATH=generated python examples/client.py [agent command ...]
    PYTHONPATH=generated python examples/client.py --url http://127.0.0.1:8765/acp

The agent command defaults to examples/echo_agent.py; `--url` connects to a running agent over
Streamable HTTP (`http://`, `https://`: the `http` extra, httpx) or WebSocket (`ws://`, `wss://`:
the `websocket` extra, websockets) instead."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import acp_v2 as acp

ECHO_AGENT = [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]
Question = tuple[acp.RequestPermissionRequest, asyncio.Future[acp.RequestPermissionOutcome]]


class ConsoleClient(acp.Client):
    """Keeps the folded messages and tool calls of the turn; queues permission requests for the user."""

    def __init__(self) -> None:
        self.messages: dict[acp.MessageId, acp.AgentMessage] = {}
        self.tool_calls: dict[acp.ToolCallId, acp.ToolCallUpdate] = {}
        self.questions: asyncio.Queue[Question] = asyncio.Queue()  # permission requests for the user
        self.turn_ended: asyncio.Queue[str] = asyncio.Queue()  # stop reasons

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        update = params.update
        if isinstance(update, acp.SessionUpdateAgentMessageChunk):  # a chunk appends to its message
            content = [*blocks(self.messages.get(update.message_id)), update.content]
            update = acp.SessionUpdateAgentMessage(message_id=update.message_id, content=content)
        if isinstance(update, acp.SessionUpdateAgentMessage):
            self.messages[update.message_id] = acp.merge(self.messages.get(update.message_id), update)
        elif isinstance(update, acp.SessionUpdateToolCallUpdate):
            self.tool_calls[update.tool_call_id] = acp.merge(self.tool_calls.get(update.tool_call_id), update)
        elif isinstance(update, acp.SessionUpdateStateUpdate) and isinstance(update.state, acp.StateUpdateIdle):
            self.end_turn(str(update.state.stop_reason.stop_reason))

    async def session_request_permission(self, params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
        if isinstance(params.subject, acp.RequestPermissionSubjectToolCall):  # applied like a tool_call_update
            call = params.subject.tool_call
            self.tool_calls[call.tool_call_id] = acp.merge(self.tool_calls.get(call.tool_call_id), call)
        answer: asyncio.Future[acp.RequestPermissionOutcome] = asyncio.get_running_loop().create_future()
        self.questions.put_nowait((params, answer))
        try:
            return acp.RequestPermissionResponse(outcome=await answer)
        except asyncio.CancelledError:  # the agent withdrew the request ($/cancel_request)
            return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeCancelled())

    def end_turn(self, stop_reason: str) -> None:
        for message in self.messages.values():
            text = "".join(block.text for block in blocks(message) if isinstance(block, acp.ContentBlockText))
            print(f"message {message.message_id}: {text}")
        for call in self.tool_calls.values():
            status = call.status.value if isinstance(call.status, acp.ToolCallStatus) else call.status
            print(f"tool call {call.tool_call_id} {call.title!r}: {status}")
        print(f"turn ended: {stop_reason}")
        self.messages.clear()
        self.tool_calls.clear()
        self.turn_ended.put_nowait(stop_reason)


def blocks(message: acp.AgentMessage | None) -> list[acp.ContentBlock]:
    """The content of a folded message (none yet when it is None)."""
    return message.content if message is not None and isinstance(message.content, list) else []


@contextlib.asynccontextmanager
async def connected(client: acp.Client, agent: list[str]) -> AsyncIterator[acp.ClientSideConnection]:
    """A connection to the agent at `--url URL`, or to the agent command started here."""
    if agent[:1] == ["--url"] and agent[1].startswith(("ws://", "wss://")):
        async with acp.connect_websocket(client, agent[1]) as conn:
            yield conn
    elif agent[:1] == ["--url"]:
        async with acp.connect_http(client, agent[1]) as conn:
            yield conn
    else:
        async with acp.spawn_agent_process(client, *agent) as (conn, _process):
            yield conn


async def main(agent: list[str]) -> None:
    client = ConsoleClient()
    async with connected(client, agent) as conn:
        info = acp.Implementation(name="console-client", version="1.0")
        init = await conn.initialize(acp.InitializeRequest(protocol_version=2, info=info))
        print(f"connected to {init.info.name} {init.info.version}")
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(Path.cwd().resolve())))
        for text, allow in (("hello world, echo me", True), ("and this too", False)):
            request = acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text=text)])
            prompt = asyncio.create_task(conn.session_prompt(request))
            question, answer = await client.questions.get()
            inserted = await prompt  # answered once the agent has inserted the prompt, before the turn ends
            option = next(o for o in question.options if o.kind == acp.PermissionOptionKind.ALLOW_ONCE)
            print(f"permission asked: {question.title} -> {option.name if allow else 'cancel the turn'}")
            print(f"prompt inserted as {inserted.message_id}")
            if allow:
                answer.set_result(acp.RequestPermissionOutcomeSelected(option_id=option.option_id))
            else:  # the user stops the turn instead of answering
                await conn.session_cancel(acp.CancelSessionNotification(session_id=session.session_id))
                if not answer.done():  # the agent may have withdrawn the request already ($/cancel_request)
                    answer.set_result(acp.RequestPermissionOutcomeCancelled())
            await client.turn_ended.get()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ECHO_AGENT))
