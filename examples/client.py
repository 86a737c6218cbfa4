"""An ACP client: starts an agent, runs a prompt turn, then cancels a second one, in v2 or, when
the agent speaks only v1 (most agents today), in v1: it asks for v2 with `connect_negotiated`
and falls back to its v1 client, over stdio, HTTP or WebSocket alike.

Each streamed update and permission request is folded into the session's `acp.SessionState`
(chunks joined per message, tool call updates merged); when the agent reports `idle`, what
the turn changed is printed, folded (a tool call with its latest title). `run_v2` (and `run_v1`)
play the user: in the first turn they allow each permission request, in the second they cancel
the turn with `session/cancel` at the first one and answer it `cancelled`; a turn that asks
nothing just ends. A v1 agent's turn is folded into an `acp_v1.SessionState` the same way and
printed as it ends (v1 has no idle update: its `session/prompt` is answered when the turn ends).
An error the agent answers with is printed with its `data` (where agents say why), and the
client exits 1.

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
from typing import Any, TypeVar

import acp_v1
import acp_v2 as acp

ECHO_AGENT = [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]
Question = tuple[acp.RequestPermissionRequest, asyncio.Future[acp.RequestPermissionOutcome]]
QuestionV1 = tuple[acp_v1.RequestPermissionRequest, asyncio.Future[acp_v1.RequestPermissionOutcome]]
_Q = TypeVar("_Q")


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


class ConsoleClientV1(acp_v1.Client):
    """The same user at a v1 agent: folds the session into an `acp_v1.SessionState`, noting what
    each turn changed; queues permission requests."""

    def __init__(self) -> None:
        self.state = acp_v1.SessionState()
        self.state.subscribe(self.changed)
        self.turn: list[tuple[str, Hashable]] = []  # (slot, key) of what this turn changed, in order
        self.questions: asyncio.Queue[QuestionV1] = asyncio.Queue()

    async def session_update(self, params: acp_v1.SessionNotification) -> None:
        self.state.apply(params)  # chunks join their message, tool call updates merge, ...

    async def session_request_permission(
        self, params: acp_v1.RequestPermissionRequest
    ) -> acp_v1.RequestPermissionResponse:
        self.state.apply_permission_request(params)  # its tool call applied as a tool_call_update
        answer: asyncio.Future[acp_v1.RequestPermissionOutcome] = asyncio.get_running_loop().create_future()
        self.questions.put_nowait((params, answer))
        try:
            return acp_v1.RequestPermissionResponse(outcome=await answer)
        except asyncio.CancelledError:
            return acp_v1.RequestPermissionResponse(outcome=acp_v1.RequestPermissionOutcomeCancelled())
        finally:
            self.state.resolve_request(params)

    def changed(self, change: acp_v1.SessionChange) -> None:
        if change.key is not None and (change.slot, change.key) not in self.turn:
            self.turn.append((change.slot, change.key))

    def title(self, question: acp_v1.RequestPermissionRequest) -> str:
        """The title of the tool call a permission request is about, as folded so far."""
        call = self.state.tool_calls.get(question.tool_call.tool_call_id)
        return call.title if call is not None and isinstance(call.title, str) else "a tool call"

    def end_turn(self, stop_reason: str) -> None:
        for slot, key in self.turn:
            match self.state.entity(slot, key):
                case acp_v1.ChunkedMessage(content=content):
                    text = "".join(block.text for block in content if isinstance(block, acp_v1.ContentBlockText))
                    print(f"{slot.removesuffix('s').replace('_', ' ')}: {text}")
                case acp_v1.SessionUpdateToolCallUpdate(title=title, status=status):
                    print(
                        f"tool call {title!r}: {status.value if isinstance(status, acp_v1.ToolCallStatus) else status}"
                    )
        print(f"turn ended: {stop_reason}")
        self.turn.clear()


@contextlib.asynccontextmanager
async def opened(agent: list[str]) -> AsyncIterator[acp.Transport]:
    """A transport to the agent at `--url URL`, or to the agent command started here."""
    if agent[:1] == ["--url"] and agent[1].startswith(("ws://", "wss://")):
        async with acp.open_websocket(agent[1]) as transport:
            yield transport
    elif agent[:1] == ["--url"]:
        async with acp.open_http(agent[1]) as transport:
            yield transport
    else:
        async with acp.open_agent_process(*agent) as (transport, _process):
            yield transport


TURNS = (("hello world, echo me", True), ("and this too", False))  # (prompt, allow the permission request)


async def main(agent: list[str]) -> None:
    client, client_v1 = ConsoleClient(), ConsoleClientV1()
    info = acp.Implementation(name="console-client", version="1.0")
    async with opened(agent) as transport:
        conn, init = await acp.connect_negotiated(
            client, transport, acp.InitializeRequest(protocol_version=2, info=info), client_v1
        )
        async with conn:
            if isinstance(conn, acp_v1.ClientSideConnection):
                name = init.agent_info.name if init.agent_info else "a v1 agent"
                print(f"connected to {name} over v1")
                await run_v1(conn, client_v1)
            else:
                print(f"connected to {init.info.name} {init.info.version}")
                await run_v2(conn, client)


async def next_question(questions: asyncio.Queue[_Q], turn: asyncio.Task[Any]) -> _Q | None:
    """The turn's next permission request, or None once the turn is over (its error raised)."""
    asked = asyncio.ensure_future(questions.get())
    await asyncio.wait([asked, turn], return_when=asyncio.FIRST_COMPLETED)
    if asked.done():
        return asked.result()
    asked.cancel()
    turn.result()  # raises what ended the turn, if anything did
    return None


async def turn_v2(conn: acp.ClientSideConnection, client: ConsoleClient, request: acp.PromptRequest) -> str:
    """A v2 turn: its prompt sent (answered once the agent inserts it), then its stop reason (idle)."""
    await conn.session_prompt(request)
    return await client.turn_ended.get()


async def run_v2(conn: acp.ClientSideConnection, client: ConsoleClient) -> None:
    session = await conn.session_new(acp.NewSessionRequest(cwd=str(Path.cwd().resolve())))
    for text, allow in TURNS:
        request = acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text=text)])
        turn = asyncio.create_task(turn_v2(conn, client, request))
        while (asked := await next_question(client.questions, turn)) is not None:
            question, answer = asked
            if allow:
                option = next(o for o in question.options if o.kind == acp.PermissionOptionKind.ALLOW_ONCE)
                print(f"permission asked: {question.title} -> {option.name}")
                answer.set_result(acp.RequestPermissionOutcomeSelected(option_id=option.option_id))
            else:  # the user stops the turn instead of answering
                print(f"permission asked: {question.title} -> cancel the turn")
                await conn.session_cancel(acp.CancelSessionNotification(session_id=session.session_id))
                if not answer.done():  # the agent may have withdrawn the request already ($/cancel_request)
                    answer.set_result(acp.RequestPermissionOutcomeCancelled())
        await turn


async def run_v1(conn: acp_v1.ClientSideConnection, client: ConsoleClientV1) -> None:
    session = await conn.session_new(acp_v1.NewSessionRequest(cwd=str(Path.cwd().resolve()), mcp_servers=[]))
    for text, allow in TURNS:
        request = acp_v1.PromptRequest(session_id=session.session_id, prompt=[acp_v1.ContentBlockText(text=text)])
        turn = asyncio.create_task(conn.session_prompt(request))  # answered when the turn ends
        while (asked := await next_question(client.questions, turn)) is not None:
            question, answer = asked
            if allow:
                option = next(o for o in question.options if o.kind == acp_v1.PermissionOptionKind.ALLOW_ONCE)
                print(f"permission asked: {client.title(question)} -> {option.name}")
                answer.set_result(acp_v1.RequestPermissionOutcomeSelected(option_id=option.option_id))
            else:
                print(f"permission asked: {client.title(question)} -> cancel the turn")
                await conn.session_cancel(acp_v1.CancelNotification(session_id=session.session_id))
                if not answer.done():
                    answer.set_result(acp_v1.RequestPermissionOutcomeCancelled())
        client.end_turn((await turn).stop_reason.value)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1:] or ECHO_AGENT))
    except (acp.RequestError, acp_v1.RequestError) as error:  # the agent's error answer; its data says why
        sys.exit(f"the agent answered: {error}")
