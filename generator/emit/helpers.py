"""What helpers.py needs: the agent-side helpers of the protocol version a package speaks
(`templates/helpers_v2.py.jinja`, `helpers_v1.py.jinja`). Their text is written against the
schema's names; the names each uses are listed here and checked against the schema, so that
a schema update that drops or renames one fails generation, naming it (how they are used is
checked by `mypy --strict` on the generated package). What varies with the schema inside
them (the stop reasons an idle state takes) is read off the IR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from generator.emit.contexts import import_sort_key
from generator.emit.peers import connection_names
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir.model import Module, ObjectType, Ref, UnionType
from generator.ir.naming import HELPER_NAMES

STOP_REASON_UNION: Final = "IdleStateUpdateStopReason"
DEFAULT_STOP_REASON: Final = "end_turn"  # what `idle()` reports without one


@dataclass(frozen=True)
class HelpersTemplate:
    """The helpers of one protocol version: the template and the schema names it uses."""

    template: str
    names: tuple[str, ...]
    stop_reasons: bool  # whether it reports idle states (v2), taking the schema's stop reasons

    @property
    def exported(self) -> tuple[str, ...]:
        """The public names of the helpers.py it renders."""
        return tuple(name for name in HELPER_NAMES if self.stop_reasons or name != "StopReasonTag")


_SHARED = (
    "ContentBlock",
    "ContentBlockText",
    "MessageId",
    "PermissionOption",
    "PermissionOptionKind",
    "PlanEntry",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "RequestPermissionOutcome",
    "RequestPermissionOutcomeCancelled",
    "RequestPermissionOutcomeSelected",
    "RequestPermissionRequest",
    "SessionId",
    "SessionUpdate",
    "SessionUpdateAgentMessageChunk",
    "SessionUpdateAgentThoughtChunk",
    "SessionUpdateToolCallUpdate",
    "ToolCallContent",
    "ToolCallContentVariant",
    "ToolCallId",
    "ToolCallLocation",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolKind",
)
TEMPLATES: Final[dict[int, HelpersTemplate]] = {
    1: HelpersTemplate(
        "helpers_v1.py.jinja", (*_SHARED, "SessionNotification", "SessionUpdatePlan", "SessionUpdateToolCall"), False
    ),
    2: HelpersTemplate(
        "helpers_v2.py.jinja",
        (
            *_SHARED,
            STOP_REASON_UNION,
            "PlanId",
            "PlanUpdateContentItems",
            "RequestPermissionSubject",
            "RequestPermissionSubjectToolCall",
            "SessionUpdatePlanUpdate",
            "SessionUpdateStateUpdate",
            "SessionUpdateUserMessage",
            "StateUpdateIdle",
            "StateUpdateRequiresAction",
            "StateUpdateRunning",
            "UpdateSessionNotification",
            "Usage",
        ),
        True,
    ),
}


@dataclass(frozen=True)
class HelpersContext:
    """What a helpers template needs beyond the package context."""

    helpers_template: str
    helpers_imports: list[str]
    stop_reasons: list[tuple[str, str]]  # (tag, class) of each stop reason that takes no property


def helper_names(module: Module) -> tuple[str, ...]:
    """The public names of helpers.py, or () when the package has none (no connection, or
    no helpers for its protocol version)."""
    helpers = TEMPLATES.get(module.protocol_version or 0)
    return helpers.exported if helpers is not None and connection_names(module) else ()


def helpers_context(module: Module, queries: Queries) -> HelpersContext | None:
    """What the helpers template of the package's protocol version needs; None without one.
    A name it uses that the schema does not define is an error."""
    if not helper_names(module):
        return None
    assert module.protocol_version is not None
    helpers = TEMPLATES[module.protocol_version]
    missing = [name for name in helpers.names if name not in queries.types]
    if missing:
        raise GenerationError(
            module.schema_path,
            f"the agent helpers of protocol version {module.protocol_version} ({helpers.template}) use {missing},"
            " which the schema does not define: update the template and its names in generator/emit/helpers.py",
        )
    stop_reasons = _stop_reasons(queries) if helpers.stop_reasons else []
    imports = {*helpers.names, *(cls for _, cls in stop_reasons)}
    return HelpersContext(helpers.template, sorted(imports, key=import_sort_key), stop_reasons)


def _stop_reasons(queries: Queries) -> list[tuple[str, str]]:
    """(tag, class) of the stop reasons `idle` takes by their tag: the tagged variants of the
    stop-reason union whose class has no required property."""
    union = queries.types.get(STOP_REASON_UNION)
    reasons = []
    if isinstance(union, UnionType):
        for variant in union.variants:
            named = queries.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
            if variant.tag and isinstance(named, ObjectType) and not any(f.required for f in named.fields):
                reasons.append((variant.tag, named.name))
    if DEFAULT_STOP_REASON not in dict(reasons):
        raise GenerationError(
            getattr(union, "pointer", STOP_REASON_UNION),
            f"{STOP_REASON_UNION}: expected a variant tagged {DEFAULT_STOP_REASON!r} without properties,"
            f" found {[tag for tag, _ in reasons]}",
        )
    return reasons
