"""An ACP v2 client: starts an agent, runs a prompt turn, then cancels a second one.

Each streamed update and permission request is folded into the session's `acp.SessionState`
(chunks joined per message, tool call updates merged); when the agent reports `idle`, what
the turn changed is printed, folded. `main` plays the user: it
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
from collections.abc import AsyncIterator, Hashable
from pathlib import Path

import acp_v2 as acp

ECHO_AGENT = [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]
Question = tuple[acp.RequestPermissionRequest, asyncio.Future[acp.RequestPermissionOutcome]]


class ConsoleClient(acp.Client):
    """Folds the session into a `SessionState`, noting what each turn changed; queues permission requests for the user."""

    def __init__(self) -> None:
        self.state = acp.SessionState()
        self.state.subscribe(self.changed)
        self.turn: list[tuple[str, Hashable]] = []  # (slot, key) of what this turn changed, in order
        self.questions: asyncio.Queue[Question] = asyncio.Queue()  # permission requests for the user
        self.turn_ended: asyncio.Queue[str] = asyncio.Queue()  # stop reasons

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        self.state.apply(params)  # chunks join their message, tool call updates merge, ...

    async def session_request_permission(self, params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
        self.state.apply_permission_request(params)  # tied to its tool call, applied as a tool_call_update
        answer: asyncio.Future[acp.RequestPermissionOutcome] = asyncio.get_running_loop().create_future()
        self.questions.put_nowait((params, answer))
        try:
            return acp.RequestPermissionResponse(outcome=await answer)
        except asyncio.CancelledError:  # the agent withdrew the request ($/cancel_request)
            return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeCancelled())
        finally:
            self.state.resolve_request(params)

    def changed(self, change: acp.SessionChange) -> None:
        if change.key is not None and (change.slot, change.key) not in self.turn:
            self.turn.append((change.slot, change.key))
        state = change.after.state if isinstance(change.after, acp.SessionUpdateStateUpdate) else None
        if isinstance(state, acp.StateUpdateIdle):
            self.end_turn(str(state.stop_reason.stop_reason))

    def end_turn(self, stop_reason: str) -> None:
        for slot, key in self.turn:
            match self.state.entity(slot, key):
                case acp.SessionUpdateUserMessage(content=content) | acp.SessionUpdateAgentMessage(content=content):
                    blocks = content if isinstance(content, list) else []
                    text = "".join(block.text for block in blocks if isinstance(block, acp.ContentBlockText))
                    print(f"{slot.removesuffix('s').replace('_', ' ')}: {text}")
                case acp.SessionUpdateToolCallUpdate(title=title, status=status):
                    print(f"tool call {title!r}: {status.value if isinstance(status, acp.ToolCallStatus) else status}")
        print(f"turn ended: {stop_reason}")
        self.turn.clear()
        self.turn_ended.put_nowait(stop_reason)


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
            if allow:
                option = next(o for o in question.options if o.kind == acp.PermissionOptionKind.ALLOW_ONCE)
                print(f"permission asked: {question.title} -> {option.name}")
                answer.set_result(acp.RequestPermissionOutcomeSelected(option_id=option.option_id))
            else:  # the user stops the turn instead of answering
                print(f"permission asked: {question.title} -> cancel the turn")
                await conn.session_cancel(acp.CancelSessionNotification(session_id=session.session_id))
                if not answer.done():  # the agent may have withdrawn the request already ($/cancel_request)
                    answer.set_result(acp.RequestPermissionOutcomeCancelled())
            await prompt  # answered once the agent has inserted the prompt (a user_message update)
            await client.turn_ended.get()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ECHO_AGENT))
