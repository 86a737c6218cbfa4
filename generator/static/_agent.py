"""What the agent helpers of both protocol versions share (`helpers.py` builds on it): ids,
content shorthands, permission options and answers, a session's message streams and open tool
calls, and config options. What differs between versions (the notification, how a tool call
starts, how a permission request names it) is each version's `helpers.py`, which implements the
abstract methods here with its schema's names; how a config option names its id, each version's
`_config_options.py`."""

from __future__ import annotations

import asyncio
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Literal, TypeVar

from . import _config_options
from ._runtime import UNDEFINED, MaybeUndefined
from .models import (
    AvailableCommand,
    ContentBlock,
    ContentBlockText,
    Cost,
    MessageId,
    PermissionOption,
    PermissionOptionKind,
    PlanEntry,
    PlanEntryPriority,
    PlanEntryStatus,
    RequestPermissionOutcome,
    RequestPermissionOutcomeCancelled,
    RequestPermissionOutcomeSelected,
    SessionConfigId,
    SessionConfigOption,
    SessionConfigOptionCategory,
    SessionConfigOptionTypeBoolean,
    SessionConfigOptionTypeSelect,
    SessionConfigSelect,
    SessionConfigSelectGroup,
    SessionConfigSelectOption,
    SessionConfigValueId,
    SessionId,
    SessionUpdate,
    SessionUpdateAgentMessageChunk,
    SessionUpdateAgentThoughtChunk,
    SessionUpdateAvailableCommandsUpdate,
    SessionUpdateConfigOptionUpdate,
    SessionUpdateSessionInfoUpdate,
    SessionUpdateUsageUpdate,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionRequestTypeBoolean,
    ToolCallContent,
    ToolCallContentVariant,
    ToolCallId,
)

_ALLOWING: Final = frozenset({PermissionOptionKind.ALLOW_ONCE, PermissionOptionKind.ALLOW_ALWAYS})
_REJECTING: Final = frozenset({PermissionOptionKind.REJECT_ONCE, PermissionOptionKind.REJECT_ALWAYS})
_FINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})

_Session = TypeVar("_Session", bound="SessionBase")
Ending = Literal["failed", "cancelled"]
"""How a tool call left unfinished ends when its turn raises (`failed`) or is cancelled."""
Choice = str | tuple[str, str] | SessionConfigSelectOption
"""A value a select config option offers: its id (also its name), (id, name), or in full."""
Command = str | tuple[str, str] | AvailableCommand
"""A command the agent offers: its name, (name, description), or in full."""
MODEL: Final = "model"
"""The category of the config option that selects the session's model."""


def new_id(kind: str) -> str:
    """A fresh id for a message, tool call or plan (`message-1f0c…`), unique in any session."""
    return f"{kind}-{uuid.uuid4().hex[:16]}"


def block(content: str | ContentBlock) -> ContentBlock:
    """A content block, a plain string being a text block."""
    return ContentBlockText(text=content) if isinstance(content, str) else content


def tool_content(content: MaybeUndefined[str | list[ToolCallContent]]) -> MaybeUndefined[list[ToolCallContent]]:
    """Tool call content, a plain string being one text block."""
    if isinstance(content, str):
        return [ToolCallContentVariant(content=ContentBlockText(text=content))]
    return content


def plan_entry(entry: PlanEntry | str) -> PlanEntry:
    """A plan entry, a plain string being a medium-priority pending one."""
    if isinstance(entry, str):
        return PlanEntry(content=entry, priority=PlanEntryPriority.MEDIUM, status=PlanEntryStatus.PENDING)
    return entry


def choice(value: Choice) -> SessionConfigSelectOption:
    """A value of a select config option (see `Choice`)."""
    if isinstance(value, str):
        return SessionConfigSelectOption(value=value, name=value)
    if isinstance(value, tuple):
        return SessionConfigSelectOption(value=value[0], name=value[1])
    return value


def offered_values(option: SessionConfigOption) -> list[SessionConfigSelectOption]:
    """The values a select config option offers, its groups flattened, in order (none for
    another kind of option)."""
    if not isinstance(option.type, SessionConfigSelect):
        return []
    values: list[SessionConfigSelectOption] = []
    for item in option.type.options:
        values.extend(item.options if isinstance(item, SessionConfigSelectGroup) else [item])
    return values


def model_option(options: Sequence[SessionConfigOption]) -> SessionConfigOption:
    """The config option of category `model` among `options` (an agent's `configOptions`): the
    one that selects the session's model. ValueError when the agent offers none."""
    for option in options:
        if option.category == MODEL:
            return option
    raise ValueError("the agent offers no model selection (no config option of category 'model')")


def offered_model(options: Sequence[SessionConfigOption], model: str) -> SessionConfigOption:
    """The model option, checked to offer `model` (a value id); ValueError naming the ones offered."""
    option = model_option(options)
    offered = [value.value for value in offered_values(option)]
    if model not in offered:
        raise ValueError(f"model {model!r} is not offered; the agent offers {offered!r}")
    return option


def permission_options(
    allow: str | None, allow_always: str | None, reject: str | None, reject_always: str | None
) -> list[PermissionOption]:
    """An option of each kind given a name (option ids `allow`, `allow_always`, `reject`, `reject_always`)."""
    named = [
        (allow, PermissionOptionKind.ALLOW_ONCE),
        (allow_always, PermissionOptionKind.ALLOW_ALWAYS),
        (reject, PermissionOptionKind.REJECT_ONCE),
        (reject_always, PermissionOptionKind.REJECT_ALWAYS),
    ]
    options = [
        PermissionOption(option_id=kind.value.removesuffix("_once"), name=name, kind=kind)
        for name, kind in named
        if name
    ]
    if not options:
        raise ValueError("ask_permission needs at least one option")
    return options


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """The client's answer to `AgentSession.ask_permission`: the outcome as sent, and the
    option it selected (None when the request was cancelled or named an option not offered)."""

    outcome: RequestPermissionOutcome
    option: PermissionOption | None

    @classmethod
    def read(cls, outcome: RequestPermissionOutcome, options: list[PermissionOption]) -> PermissionAnswer:
        """The answer `outcome` gives to a request that offered `options`."""
        chosen = outcome.option_id if isinstance(outcome, RequestPermissionOutcomeSelected) else None
        return cls(outcome, next((o for o in options if o.option_id == chosen), None))

    @property
    def allowed(self) -> bool:
        """An `allow_once` or `allow_always` option was selected."""
        return self.option is not None and self.option.kind in _ALLOWING

    @property
    def rejected(self) -> bool:
        """A `reject_once` or `reject_always` option was selected."""
        return self.option is not None and self.option.kind in _REJECTING

    @property
    def cancelled(self) -> bool:
        """The client cancelled the request (the user dismissed it, or the turn was cancelled)."""
        return isinstance(self.outcome, RequestPermissionOutcomeCancelled)


class ToolCallBase(ABC):
    """What a tool call's handle keeps of what it sent: its id and latest status."""

    def __init__(self, tool_call_id: ToolCallId) -> None:
        self.tool_call_id = tool_call_id
        self.status: str | None = None  # the latest status sent, as its wire value

    def sent_status(self, status: object) -> None:
        """Remember `status` (an enum member or its value) when one was sent."""
        if isinstance(status, str):
            self.status = getattr(status, "value", status)

    @property
    def finished(self) -> bool:
        """The latest status sent is a final one (`completed`, `failed`, `cancelled`)."""
        return self.status in _FINAL_STATUSES

    @abstractmethod
    async def end(self, ending: Ending) -> None:
        """Send the final status `ending` stands for in this protocol version."""


class SessionHistory:
    """What an agent sent in each of its sessions, in order: the session updates of every
    `AgentSession` made with it (`conn.session(session_id, history=history)`), kept to be
    replayed to a client that loads or resumes the session (`await session.replay()`)."""

    def __init__(self) -> None:
        self.sessions: dict[SessionId, list[SessionUpdate]] = {}

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.sessions

    def start(self, session_id: SessionId) -> None:
        """Know `session_id` (a session created, with nothing sent in it yet)."""
        self.sessions.setdefault(session_id, [])

    def record(self, session_id: SessionId, update: SessionUpdate) -> None:
        """Keep `update` as sent in `session_id`, after those sent before."""
        self.sessions.setdefault(session_id, []).append(update)

    def updates(self, session_id: SessionId) -> list[SessionUpdate]:
        """The updates sent in `session_id`, in order ([] for a session never known)."""
        return list(self.sessions.get(session_id, []))

    def forget(self, session_id: SessionId) -> None:
        """Drop `session_id` and what was sent in it (a closed session)."""
        self.sessions.pop(session_id, None)


class SessionBase(ABC):
    """One session as the agent speaks in it: streams the current message and thought, and
    keeps the tool calls it started. Used as `async with`, a turn that raises or is
    cancelled ends each tool call it left unfinished (`failed`, or `cancelled`). With a
    `SessionHistory`, each update sent is recorded in it, and `replay` sends them again."""

    def __init__(self, session_id: SessionId, history: SessionHistory | None = None) -> None:
        self.session_id = session_id
        self.history = history
        self.message_id: MessageId | None = None  # the message `say` appends to
        self.thought_id: MessageId | None = None  # the thought `think` appends to
        self.tool_calls: list[ToolCallBase] = []  # the calls started, in order

    @abstractmethod
    def command(self, name: str, description: str) -> AvailableCommand:
        """A command of this protocol version's kind, `name` described by `description`."""

    @abstractmethod
    async def send(self, update: SessionUpdate) -> None:
        """Send `update` in this session, not recording it."""

    async def update(self, update: SessionUpdate) -> None:
        """Send any session update of this session (recorded in the session's history)."""
        await self.send(update)
        if self.history is not None:
            self.history.record(self.session_id, update)

    async def replay(self) -> None:
        """Send again, in order, every update the session's history holds for it: what a
        `session/load` (or resume) handler does before it answers, so the client rebuilds
        the conversation. ValueError without a history, or when it does not know the session."""
        if self.history is None or self.session_id not in self.history:
            raise ValueError(f"no history of session {self.session_id!r} to replay")
        for update in self.history.updates(self.session_id):
            await self.send(update)

    async def say(self, content: str | ContentBlock, *, message_id: MessageId | None = None) -> MessageId:
        """Stream `content` (text, or any content block) as a chunk of the agent's current
        message, or of the message `message_id` names; returns the message's id."""
        if message_id is None:
            message_id = self.message_id = self.message_id or new_id("message")
        await self.update(SessionUpdateAgentMessageChunk(message_id=message_id, content=block(content)))
        return message_id

    async def think(self, content: str | ContentBlock, *, message_id: MessageId | None = None) -> MessageId:
        """Stream `content` as a chunk of the agent's current thought (as `say` does for messages)."""
        if message_id is None:
            message_id = self.thought_id = self.thought_id or new_id("thought")
        await self.update(SessionUpdateAgentThoughtChunk(message_id=message_id, content=block(content)))
        return message_id

    async def title(self, title: str | None) -> None:
        """Set (None: clear) the session's title (a `session_info_update`)."""
        await self.update(SessionUpdateSessionInfoUpdate(title=title))

    async def usage(self, used: int, size: int, *, cost: MaybeUndefined[Cost] = UNDEFINED) -> None:
        """Report the context window: `used` of `size` tokens, and the session's cost so far."""
        await self.update(SessionUpdateUsageUpdate(used=used, size=size, cost=cost))

    async def commands(self, commands: Sequence[Command]) -> None:
        """Send the commands the agent offers now (see `Command`); they replace those sent before."""
        offered = [
            self.command(c, c) if isinstance(c, str) else self.command(*c) if isinstance(c, tuple) else c
            for c in commands
        ]
        await self.update(SessionUpdateAvailableCommandsUpdate(available_commands=offered))

    async def config_options(self, options: Sequence[SessionConfigOption]) -> None:
        """Send the session's config options as they are now (`select_option`, `boolean_option`)."""
        await self.update(SessionUpdateConfigOptionUpdate(config_options=list(options)))

    def new_message(self) -> None:
        """Make the next `say` and `think` start a new message and thought."""
        self.message_id = self.thought_id = None

    async def end_tool_calls(self, ending: Ending) -> None:
        """End every tool call started here that has no final status yet."""
        for call in self.tool_calls:
            if not call.finished:
                await call.end(ending)

    async def __aenter__(self: _Session) -> _Session:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            return
        await self.end_tool_calls("cancelled" if issubclass(kind, asyncio.CancelledError) else "failed")


# --- config options (the agent's `configOptions`; a model is chosen by its option of category `model`) ---


def select_option(
    config_id: SessionConfigId,
    name: str,
    current: SessionConfigValueId,
    values: Sequence[Choice],
    *,
    category: MaybeUndefined[SessionConfigOptionCategory | str] = UNDEFINED,
    description: MaybeUndefined[str] = UNDEFINED,
) -> SessionConfigOption:
    """A config option choosing one of `values` (each its id, (id, name), or in full), now
    `current`; `category="model"` makes it the session's model selection."""
    select = SessionConfigOptionTypeSelect(current_value=current, options=[choice(value) for value in values])
    return _config_options.option(config_id, name, select, category, description)


def boolean_option(
    config_id: SessionConfigId,
    name: str,
    current: bool,
    *,
    category: MaybeUndefined[SessionConfigOptionCategory | str] = UNDEFINED,
    description: MaybeUndefined[str] = UNDEFINED,
) -> SessionConfigOption:
    """A config option that is on or off, now `current`."""
    boolean = SessionConfigOptionTypeBoolean(current_value=current)
    return _config_options.option(config_id, name, boolean, category, description)


def config_request(
    session_id: SessionId, config_id: SessionConfigId, value: SessionConfigValueId | bool
) -> SetSessionConfigOptionRequest:
    """The `session/set_config_option` request setting `config_id` to `value`: the id of one of
    a select option's values, or a boolean option's new value."""
    kind = (
        SetSessionConfigOptionRequestTypeBoolean(value=value)
        if isinstance(value, bool)
        else _config_options.value_id(value)
    )
    return SetSessionConfigOptionRequest(session_id=session_id, config_id=config_id, type=kind)


def model_request(
    session_id: SessionId, options: Sequence[SessionConfigOption], model: SessionConfigValueId
) -> SetSessionConfigOptionRequest:
    """The `session/set_config_option` request choosing `model` with the agent's model option
    (of category `model`) among `options`; ValueError when there is none or it does not offer
    `model` (naming the ones it does)."""
    return config_request(session_id, _config_options.option_id(offered_model(options, model)), model)


def requested_value(request: SetSessionConfigOptionRequest) -> SessionConfigValueId | bool | Any:
    """The value a `session/set_config_option` request sets: a value id, a boolean, or the
    raw value of a type this package does not know."""
    return request.type.value
