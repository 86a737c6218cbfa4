"""Hand-written msgspec `Struct`s for the message types of bench/codec.py's stream: the speed floor.

What a careful hand-written msgspec model of these messages looks like: absent is `UNSET`,
enum values stay strings, `state_update` (a union flattened into its variant) is one Struct
with the fields of every state. It is not lossless (msgspec drops properties it does not
declare) and does not keep an unknown `sessionUpdate` (`decode` falls back to a plain
`update` dict for those, as a hand-written client would).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType, field

Meta = dict[str, Any] | None | UnsetType


class Annotations(Struct, rename="camel"):
    audience: list[str] | UnsetType | None = UNSET
    priority: float | UnsetType | None = UNSET
    last_modified: str | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class TextContent(Struct, tag_field="type", tag="text"):
    text: str
    annotations: Annotations | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class ContentItem(Struct, tag_field="type", tag="content"):
    content: TextContent
    meta: Meta = field(default=UNSET, name="_meta")


class DiffChange(Struct, tag_field="operation", tag="modify"):
    path: str
    meta: Meta = field(default=UNSET, name="_meta")


class DiffPatch(Struct):
    format: str
    text: str
    meta: Meta = field(default=UNSET, name="_meta")


class DiffItem(Struct, tag_field="type", tag="diff"):
    changes: list[DiffChange]
    patch: DiffPatch | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class TerminalItem(Struct, tag_field="type", tag="terminal", rename="camel"):
    terminal_id: str
    meta: Meta = field(default=UNSET, name="_meta")


ToolCallContent = ContentItem | DiffItem | TerminalItem


class Location(Struct):
    path: str
    line: int | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class Chunk(Struct, rename="camel", tag_field="sessionUpdate"):
    message_id: str
    content: TextContent
    meta: Meta = field(default=UNSET, name="_meta")


class AgentMessageChunk(Chunk, tag="agent_message_chunk"):
    pass


class AgentThoughtChunk(Chunk, tag="agent_thought_chunk"):
    pass


class UserMessageChunk(Chunk, tag="user_message_chunk"):
    pass


class ToolCallUpdate(Struct, rename="camel", tag_field="sessionUpdate", tag="tool_call_update"):
    tool_call_id: str
    name: str | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    kind: str | UnsetType | None = UNSET
    status: str | UnsetType | None = UNSET
    content: list[ToolCallContent] | UnsetType | None = UNSET
    locations: list[Location] | UnsetType | None = UNSET
    raw_input: Any | UnsetType = UNSET
    raw_output: Any | UnsetType = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class ToolCallContentChunk(Struct, rename="camel", tag_field="sessionUpdate", tag="tool_call_content_chunk"):
    tool_call_id: str
    content: ToolCallContent
    meta: Meta = field(default=UNSET, name="_meta")


class PlanEntry(Struct):
    content: str
    priority: str
    status: str
    meta: Meta = field(default=UNSET, name="_meta")


class PlanMarkdown(Struct, rename="camel", tag_field="type", tag="markdown"):
    plan_id: str
    content: str
    meta: Meta = field(default=UNSET, name="_meta")


class PlanItems(Struct, rename="camel", tag_field="type", tag="items"):
    plan_id: str
    entries: list[PlanEntry]
    meta: Meta = field(default=UNSET, name="_meta")


class PlanUpdate(Struct, tag_field="sessionUpdate", tag="plan_update"):
    plan: PlanMarkdown | PlanItems
    meta: Meta = field(default=UNSET, name="_meta")


class Cost(Struct):
    amount: float
    currency: str
    meta: Meta = field(default=UNSET, name="_meta")


class UsageUpdate(Struct, tag_field="sessionUpdate", tag="usage_update"):
    used: int
    size: int
    cost: Cost | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class BackgroundToolCall(Struct, rename="camel", tag_field="type", tag="tool_call"):
    tool_call_id: str
    meta: Meta = field(default=UNSET, name="_meta")


class Usage(Struct, rename="camel"):
    total_tokens: int
    input_tokens: int | UnsetType = UNSET
    output_tokens: int | UnsetType = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class Running(Struct, tag_field="state", tag="running"):
    background: list[BackgroundToolCall] | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class Idle(Struct, rename="camel", tag_field="state", tag="idle"):
    stop_reason: str | UnsetType | None = UNSET
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundToolCall] | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class RequiresAction(Struct, tag_field="state", tag="requires_action"):
    meta: Meta = field(default=UNSET, name="_meta")


class StateUpdate(Struct, rename="camel", tag_field="sessionUpdate", tag="state_update"):
    state: str
    background: list[BackgroundToolCall] | UnsetType | None = UNSET
    stop_reason: str | UnsetType | None = UNSET
    usage: Usage | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class SubagentUpdate(Struct, rename="camel", tag_field="sessionUpdate", tag="subagent_update"):
    session_id: str
    state: Running | Idle | RequiresAction
    title: str | UnsetType | None = UNSET
    cwd: str | UnsetType | None = UNSET
    additional_directories: list[str] | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class TerminalSize(Struct):
    cols: int
    rows: int


class ExitStatus(Struct, rename="camel"):
    exit_code: int | UnsetType | None = UNSET
    signal: str | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class TerminalUpdate(Struct, rename="camel", tag_field="sessionUpdate", tag="terminal_update"):
    terminal_id: str
    command: str | UnsetType | None = UNSET
    cwd: str | UnsetType | None = UNSET
    size: TerminalSize | UnsetType | None = UNSET
    exit_status: ExitStatus | UnsetType | None = UNSET
    meta: Meta = field(default=UNSET, name="_meta")


class TerminalOutputChunk(Struct, rename="camel", tag_field="sessionUpdate", tag="terminal_output_chunk"):
    terminal_id: str
    data: str
    meta: Meta = field(default=UNSET, name="_meta")


SessionUpdate = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallUpdate
    | ToolCallContentChunk
    | PlanUpdate
    | UsageUpdate
    | StateUpdate
    | SubagentUpdate
    | TerminalUpdate
    | TerminalOutputChunk
)


class Notification(Struct, rename="camel"):
    session_id: str
    update: SessionUpdate
    meta: Meta = field(default=UNSET, name="_meta")


class OtherNotification(Struct, rename="camel"):
    """A notification whose `sessionUpdate` the model does not know: the update stays a dict."""

    session_id: str
    update: dict[str, Any]
    meta: Meta = field(default=UNSET, name="_meta")


_DECODER = msgspec.json.Decoder(Notification)
_OTHER_DECODER = msgspec.json.Decoder(OtherNotification)
_ENCODER = msgspec.json.Encoder()


def decode(line: str | bytes) -> Notification | OtherNotification:
    try:
        return _DECODER.decode(line)
    except msgspec.ValidationError:
        return _OTHER_DECODER.decode(line)


def convert(data: dict[str, Any]) -> Notification | OtherNotification:
    """The same from a parsed dict (`msgspec.convert`)."""
    try:
        return msgspec.convert(data, Notification)
    except msgspec.ValidationError:
        return msgspec.convert(data, OtherNotification)


def encode(value: Notification | OtherNotification) -> str:
    return _ENCODER.encode(value).decode()
