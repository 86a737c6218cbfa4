"""What an agent says in a session, in its own words (ACP v1): send text, start a tool call and
patch it through its handle, send the plan, ask permission with typed options.

`conn.session(session_id)` (or `AgentSession(conn, session_id)`) is one session as the agent
speaks in it; use one for a turn (a `session/prompt` handler), so that its text chunks join
one message, and as `async with`, so that a turn that raises or is cancelled ends the tool
calls it left open (`failed`: v1 has no `cancelled` status). A v1 turn ends when the handler
answers `session/prompt` with its stop reason:

    async with conn.session(params.session_id) as session:
        call = await session.tool_call("Read notes.txt", kind=ToolKind.READ)
        answer = await session.ask_permission(call, allow="Read it", reject="Don't")
        if answer.allowed:
            await call.update(status=ToolCallStatus.IN_PROGRESS)
            await session.say("Here it is.")
        await call.update(status=ToolCallStatus.COMPLETED if answer.allowed else ToolCallStatus.FAILED)
    return PromptResponse(stop_reason=StopReason.END_TURN)

Ids the agent does not give (message, tool call) are made unique here. The module is written
against this package's ACP v1 names: generation checks that the schema has each name it
imports, and `mypy --strict` on the package checks how they are used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._agent import (
    Ending,
    PermissionAnswer,
    SessionBase,
    SessionHistory,
    ToolCallBase,
    boolean_option,
    config_request,
    model_option,
    model_request,
    new_id,
    offered_values,
    permission_options,
    plan_entry,
    requested_value,
    select_option,
)
from ._agent import tool_content as _tool_content
from ._runtime import UNDEFINED, MaybeUndefined, Undefined
from .models import (
    AvailableCommand,
    PlanEntry,
    RequestPermissionRequest,
    SessionId,
    SessionModeId,
    SessionNotification,
    SessionUpdate,
    SessionUpdateCurrentModeUpdate,
    SessionUpdatePlan,
    SessionUpdateToolCall,
    SessionUpdateToolCallUpdate,
    ToolCallContent,
    ToolCallId,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)

if TYPE_CHECKING:
    from .connection import AgentSideConnection

__all__ = [
    "AgentSession",
    "PermissionAnswer",
    "SessionHistory",
    "ToolCallHandle",
    "boolean_option",
    "config_request",
    "model_option",
    "model_request",
    "offered_values",
    "requested_value",
    "select_option",
]


class ToolCallHandle(ToolCallBase):
    """A tool call the agent started (`AgentSession.tool_call`): `update` patches it, each
    property left out staying as it was; the client folds the patches into the call. It keeps
    the latest title, kind and raw input sent, which a permission request about it carries."""

    def __init__(self, session: AgentSession, tool_call_id: ToolCallId) -> None:
        super().__init__(tool_call_id)
        self.session = session
        self.title: MaybeUndefined[str] = UNDEFINED
        self.kind: MaybeUndefined[ToolKind] = UNDEFINED
        self.raw_input: Any | Undefined = UNDEFINED

    def sent(self, title: MaybeUndefined[str], kind: MaybeUndefined[ToolKind], raw_input: Any | Undefined) -> None:
        """Remember what an update sent of what a permission request carries."""
        self.title = self.title if title is UNDEFINED else title
        self.kind = self.kind if kind is UNDEFINED else kind
        self.raw_input = self.raw_input if raw_input is UNDEFINED else raw_input

    async def update(
        self,
        *,
        title: MaybeUndefined[str] = UNDEFINED,
        status: MaybeUndefined[ToolCallStatus] = UNDEFINED,
        kind: MaybeUndefined[ToolKind] = UNDEFINED,
        content: MaybeUndefined[str | list[ToolCallContent]] = UNDEFINED,
        locations: MaybeUndefined[list[ToolCallLocation]] = UNDEFINED,
        raw_input: Any | Undefined = UNDEFINED,
        raw_output: Any | Undefined = UNDEFINED,
    ) -> None:
        """Send a `tool_call_update` with the properties given (None clears one); `content`
        replaces the call's content, a string being one text block."""
        self.sent(title, kind, raw_input)
        self.sent_status(status)
        update = SessionUpdateToolCallUpdate(
            tool_call_id=self.tool_call_id,
            title=title,
            kind=kind,
            status=status,
            content=_tool_content(content),
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
        )
        await self.session.update(update)

    async def end(self, ending: Ending) -> None:
        await self.update(status=ToolCallStatus.FAILED)  # v1 has no `cancelled` status

    def subject(self, title: str | None = None) -> ToolCallUpdate:
        """This call as a permission request names it: its id, title (or `title`), kind and raw input."""
        return ToolCallUpdate(
            tool_call_id=self.tool_call_id,
            title=self.title if title is None else title,
            kind=self.kind,
            raw_input=self.raw_input,
        )


class AgentSession(SessionBase):
    """One session as the agent speaks in it: every method sends one `session/update` (or
    asks the client) for `session_id` over `conn`. `say` and `think` stream chunks of the
    current message (and thought), one message until `new_message`."""

    def __init__(self, conn: AgentSideConnection, session_id: SessionId, history: SessionHistory | None = None) -> None:
        super().__init__(session_id, history)
        self.conn = conn

    def command(self, name: str, description: str) -> AvailableCommand:
        return AvailableCommand(name=name, description=description)

    async def send(self, update: SessionUpdate) -> None:
        """Send `update` in this session, not recording it."""
        await self.conn.session_update(SessionNotification(session_id=self.session_id, update=update))

    async def tool_call(
        self,
        title: str,
        *,
        kind: ToolKind | Undefined = UNDEFINED,
        status: ToolCallStatus | Undefined = UNDEFINED,
        content: str | list[ToolCallContent] | Undefined = UNDEFINED,
        locations: list[ToolCallLocation] | Undefined = UNDEFINED,
        raw_input: Any | Undefined = UNDEFINED,
        tool_call_id: ToolCallId | None = None,
    ) -> ToolCallHandle:
        """Start a tool call (its `tool_call` update) and return its handle."""
        call = ToolCallHandle(self, tool_call_id or new_id("tool"))
        self.tool_calls.append(call)
        call.sent(title, kind, raw_input)
        call.sent_status(status)
        items = _tool_content(content)
        start = SessionUpdateToolCall(
            tool_call_id=call.tool_call_id,
            title=title,
            kind=kind,
            status=status,
            content=UNDEFINED if items is None else items,
            locations=locations,
            raw_input=raw_input,
        )
        await self.update(start)
        return call

    async def mode(self, mode_id: SessionModeId) -> None:
        """Report the session's current mode (one of the `modes` the session was answered with)."""
        await self.update(SessionUpdateCurrentModeUpdate(current_mode_id=mode_id))

    async def plan(self, entries: Sequence[PlanEntry | str]) -> None:
        """Send the agent's plan, each entry in full or as its text (medium priority, pending);
        it replaces the plan sent before."""
        await self.update(SessionUpdatePlan(entries=[plan_entry(entry) for entry in entries]))

    async def ask_permission(
        self,
        call: ToolCallHandle | ToolCallUpdate,
        *,
        title: str | None = None,
        allow: str | None = "Allow",
        allow_always: str | None = None,
        reject: str | None = "Reject",
        reject_always: str | None = None,
    ) -> PermissionAnswer:
        """Ask the client's permission to run the tool call (its handle, which the request
        describes by its title, kind and raw input, or the update that describes it), offering
        an option of each kind given a name (option ids `allow`, `allow_always`, `reject`,
        `reject_always`); `title` replaces the tool call's. Cancelling the task that awaits it
        withdraws the request (`$/cancel_request`)."""
        options = permission_options(allow, allow_always, reject, reject_always)
        subject = call.subject(title) if isinstance(call, ToolCallHandle) else call
        request = RequestPermissionRequest(session_id=self.session_id, tool_call=subject, options=options)
        outcome = (await self.conn.session_request_permission(request)).outcome
        return PermissionAnswer.read(outcome, options)
