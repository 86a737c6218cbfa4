"""What an agent says in a session, in its own words: send text, start a tool call and patch
it through its handle, report the session's state, ask permission with typed options.

`conn.session(session_id)` (or `AgentSession(conn, session_id)`) is one session as the agent
speaks in it; use one for a turn, so that its text chunks join one message, and as
`async with`, so that a turn that raises or is cancelled ends the tool calls it left open:

    async with conn.session(params.session_id) as session:
        await session.running()
        call = await session.tool_call("Read notes.txt", kind=ToolKind.READ)
        answer = await session.ask_permission(call, allow="Read it", reject="Don't")
        if answer.allowed:
            await call.update(status=ToolCallStatus.IN_PROGRESS)
            await session.say("Here it is.")
        await call.update(status=ToolCallStatus.COMPLETED if answer.allowed else ToolCallStatus.FAILED)
        await session.idle("end_turn")

Ids the agent does not give (message, tool call, plan) are made unique here. The module is
written against this package's ACP v2 names: generation checks that the schema has each name
it imports, and `mypy --strict` on the package checks how they are used."""

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
from ._agent import block as _block
from ._agent import tool_content as _tool_content
from ._runtime import UNDEFINED, MaybeUndefined, Undefined
from ._stop_reasons import STOP_REASONS, StopReasonTag
from .connection import RequestError
from .models import (
    AvailableCommandVariant,
    ContentBlock,
    IdleStateUpdateStopReason,
    MessageId,
    PlanEntry,
    PlanId,
    PlanUpdateContentItems,
    ReplayFrom,
    ReplayFromStartVariant,
    RequestPermissionRequest,
    RequestPermissionSubject,
    RequestPermissionSubjectToolCall,
    SessionId,
    SessionUpdate,
    SessionUpdatePlanUpdate,
    SessionUpdateStateUpdate,
    SessionUpdateToolCallUpdate,
    SessionUpdateUserMessage,
    StateUpdateIdle,
    StateUpdateRequiresAction,
    StateUpdateRunning,
    ToolCallContent,
    ToolCallId,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    UpdateSessionNotification,
    Usage,
)

if TYPE_CHECKING:
    from .connection import AgentSideConnection

__all__ = [
    "AgentSession",
    "PermissionAnswer",
    "SessionHistory",
    "StopReasonTag",
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
        self.kind: MaybeUndefined[ToolKind | str] = UNDEFINED
        self.raw_input: Any | Undefined = UNDEFINED

    async def update(
        self,
        *,
        title: MaybeUndefined[str] = UNDEFINED,
        status: MaybeUndefined[ToolCallStatus | str] = UNDEFINED,
        kind: MaybeUndefined[ToolKind | str] = UNDEFINED,
        content: MaybeUndefined[str | list[ToolCallContent]] = UNDEFINED,
        locations: MaybeUndefined[list[ToolCallLocation]] = UNDEFINED,
        raw_input: Any | Undefined = UNDEFINED,
        raw_output: Any | Undefined = UNDEFINED,
        name: MaybeUndefined[str] = UNDEFINED,
    ) -> None:
        """Send a `tool_call_update` with the properties given (None clears one); `content`
        replaces the call's content, a string being one text block."""
        self.title = self.title if title is UNDEFINED else title
        self.kind = self.kind if kind is UNDEFINED else kind
        self.raw_input = self.raw_input if raw_input is UNDEFINED else raw_input
        self.sent_status(status)
        update = SessionUpdateToolCallUpdate(
            tool_call_id=self.tool_call_id,
            name=name,
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
        await self.update(status=ToolCallStatus.CANCELLED if ending == "cancelled" else ToolCallStatus.FAILED)

    def subject(self) -> RequestPermissionSubjectToolCall:
        """This call as the subject of a permission request: its id, title, kind and raw input."""
        described = ToolCallUpdate(
            tool_call_id=self.tool_call_id, title=self.title, kind=self.kind, raw_input=self.raw_input
        )
        return RequestPermissionSubjectToolCall(tool_call=described)


class AgentSession(SessionBase):
    """One session as the agent speaks in it: every method sends one `session/update` (or
    asks the client) for `session_id` over `conn`. `say` and `think` stream chunks of the
    current message (and thought), one message until `idle` or `new_message`."""

    def __init__(self, conn: AgentSideConnection, session_id: SessionId, history: SessionHistory | None = None) -> None:
        super().__init__(session_id, history)
        self.conn = conn
        self.plan_id: PlanId | None = None  # the plan `plan` replaces

    def command(self, name: str, description: str) -> AvailableCommandVariant:
        return AvailableCommandVariant(name=name, description=description)

    async def send(self, update: SessionUpdate) -> None:
        """Send `update` in this session, not recording it."""
        await self.conn.session_update(UpdateSessionNotification(session_id=self.session_id, update=update))

    async def resume(self, replay_from: MaybeUndefined[ReplayFrom | None] = UNDEFINED) -> None:
        """What a `session/resume` handler does before it answers, given the request's
        `replayFrom`: replay the session's history from its start (`{"type": "start"}`), or
        nothing (absent or null). `RequestError.session_not_found` for a session the history
        does not know, invalid params for another kind of replay."""
        if self.history is None or self.session_id not in self.history:
            raise RequestError.session_not_found(self.session_id)
        if isinstance(replay_from, ReplayFromStartVariant):
            await self.replay()
        elif replay_from is not UNDEFINED and replay_from is not None:
            raise RequestError.invalid_params({"replayFrom": 'only {"type": "start"} is supported'})

    async def user_message(
        self, content: str | ContentBlock | list[ContentBlock], *, message_id: MessageId | None = None
    ) -> MessageId:
        """Insert a user message into the session (a prompt, as the agent took it); returns its id."""
        blocks = content if isinstance(content, list) else [_block(content)]
        message_id = message_id or new_id("user")
        await self.update(SessionUpdateUserMessage(message_id=message_id, content=blocks))
        return message_id

    async def running(self) -> None:
        """Report that foreground work is in progress."""
        await self.update(SessionUpdateStateUpdate(state=StateUpdateRunning()))

    async def requires_action(self) -> None:
        """Report that the session waits for the user."""
        await self.update(SessionUpdateStateUpdate(state=StateUpdateRequiresAction()))

    async def idle(
        self,
        stop_reason: StopReasonTag | IdleStateUpdateStopReason = "end_turn",
        *,
        usage: MaybeUndefined[Usage] = UNDEFINED,
    ) -> None:
        """Report that no foreground work is active, and why the turn stopped (a stop reason's
        tag, or the stop reason itself); the next `say` starts a new message."""
        reason = STOP_REASONS[stop_reason]() if isinstance(stop_reason, str) else stop_reason
        self.new_message()
        await self.update(SessionUpdateStateUpdate(state=StateUpdateIdle(stop_reason=reason, usage=usage)))

    async def tool_call(
        self,
        title: str,
        *,
        kind: ToolKind | str | Undefined = UNDEFINED,
        status: ToolCallStatus | str | Undefined = UNDEFINED,
        content: str | list[ToolCallContent] | Undefined = UNDEFINED,
        locations: list[ToolCallLocation] | Undefined = UNDEFINED,
        raw_input: Any | Undefined = UNDEFINED,
        name: str | Undefined = UNDEFINED,
        tool_call_id: ToolCallId | None = None,
    ) -> ToolCallHandle:
        """Start a tool call (its first `tool_call_update`) and return its handle."""
        call = ToolCallHandle(self, tool_call_id or new_id("tool"))
        self.tool_calls.append(call)
        await call.update(
            title=title, kind=kind, status=status, content=content, locations=locations, raw_input=raw_input, name=name
        )
        return call

    async def plan(
        self,
        entries: Sequence[PlanEntry | str],
        *,
        plan_id: PlanId | None = None,
    ) -> PlanId:
        """Send the agent's plan, each entry in full or as its text (medium priority, pending);
        it replaces the plan sent before with the same id (the session's plan by default)."""
        items = [plan_entry(entry) for entry in entries]
        if plan_id is None:
            plan_id = self.plan_id = self.plan_id or new_id("plan")
        await self.update(SessionUpdatePlanUpdate(plan=PlanUpdateContentItems(plan_id=plan_id, entries=items)))
        return plan_id

    async def ask_permission(
        self,
        subject: ToolCallHandle | RequestPermissionSubject | None = None,
        *,
        title: str | None = None,
        allow: str | None = "Allow",
        allow_always: str | None = None,
        reject: str | None = "Reject",
        reject_always: str | None = None,
        description: str | Undefined = UNDEFINED,
    ) -> PermissionAnswer:
        """Ask the client's permission about `subject` (a tool call's handle, which the request
        describes by its title, kind and raw input, or any subject), offering an option of each
        kind given a name (option ids `allow`, `allow_always`, `reject`, `reject_always`);
        `title` defaults to the tool call's. Cancelling the task that awaits it withdraws the
        request (`$/cancel_request`)."""
        if isinstance(subject, ToolCallHandle):
            title = title or (subject.title if isinstance(subject.title, str) else None)
            subject = subject.subject()
        if title is None:
            raise ValueError("ask_permission needs a title (or a tool call with one)")
        options = permission_options(allow, allow_always, reject, reject_always)
        request = RequestPermissionRequest(
            session_id=self.session_id,
            title=title,
            description=description,
            subject=UNDEFINED if subject is None else subject,
            options=options,
        )
        outcome = (await self.conn.session_request_permission(request)).outcome
        return PermissionAnswer.read(outcome, options)
