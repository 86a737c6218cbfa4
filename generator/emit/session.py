"""What session.py folds, read off the IR: which `session/update` variants are entities,
chunks, values, events, removals, and what the agent's requests ask about.

Derived from the IR (so a schema update keeps `SessionState` current):
- an **upsert** variant (the IR carries its `merge` rule) with an identity is an entity of
  the timeline, keyed by its identity; one without is a value, merged into the previous one;
- a **chunk** is a variant without a rule whose required properties are an entity's identity
  and one payload: it appends the payload to that entity's list of the payload's type (several
  entities with that identity: the one whose tag the chunk's tag extends with `_chunk`);
- a **message chunk** is a variant tagged `..._chunk` whose one required property is its
  payload (v1's message chunks): its chunks join into messages (a `JOIN` rule), named by an
  optional `messageId` when the schema has one, else by their place in the timeline;
- a **report** is a variant without a rule whose required properties name an entity (its
  identity) and whose properties all are properties of that entity's upsert type (v1's
  `tool_call` beside `tool_call_update`): it replaces the entity, as an update of it that
  sets every property the report has (several such entities: the one tagged the report's tag
  plus `_update`);
- any other variant tagged `..._update` is a **value**: the latest replaces the one before;
- a request of the agent is tied to the entity whose identity it names (a property of that
  name anywhere in its params, through unions), and an entity's upsert type in its params is
  applied as that entity's update (a permission request's tool call).
What cannot be derived is `EXPLICIT`, below; a variant neither derives nor names lands in the
state's `other` list at run time, as unknown tags do."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from generator.emit.contexts import import_sort_key
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir.model import Field, ListOf, Module, NamedType, ObjectType, Ref, TypeExpr, UnionType
from generator.ir.naming import fold_function_name

SESSION_UPDATE_METHOD = "session/update"
"""The notification whose params carry one update of a session."""

CHUNK_SUFFIX = "_chunk"
UPDATE_SUFFIX = "_update"
MESSAGE_ID = "messageId"
"""The optional property that names a message chunk's message ("All chunks belonging to the same
message share the same `messageId`. A change in `messageId` indicates a new message has started.")."""


@dataclass(frozen=True)
class Keyed:
    """A variant that names an entity by a property of a property (`path`, attribute names)."""

    slot: str
    path: tuple[str, ...]
    wire_name: str  # the last property's wire name, read from undeclared properties when absent


@dataclass(frozen=True)
class Removes(Keyed):
    """A variant that removes the entity it names."""


@dataclass(frozen=True)
class Value:
    """A variant that is the session's current value of `slot`: the latest replaces the one before."""

    slot: str


@dataclass(frozen=True)
class Event:
    """A variant kept in order in `slot`'s list: not state, so not folded."""

    slot: str


@dataclass(frozen=True)
class AppendsBase64:
    """A chunk whose payload (base64 text) is appended to `attribute` of the entity's
    `target` object (made of `target_type` when there is none yet)."""

    payload: str
    target: str
    target_type: str
    attribute: str


@dataclass(frozen=True)
class Explicit:
    """What the schema does not say in a form the generator can read."""

    variants: dict[str, Keyed | Value | Event | AppendsBase64]  # by the variant's tag
    chunk_starts: dict[str, dict[str, str]]  # tag → required property → start value (JSON)
    requests: dict[str, str]  # the request kinds the state ties to entities, by method


EXPLICIT = Explicit(
    variants={
        # "A content update for a plan identified by ID": the ID is inside the content.
        "plan_update": Keyed("plans", ("plan", "plan_id"), "planId"),
        "plan_removed": Removes("plans", ("plan_id",), "planId"),
        # v1, untagged `_update`: "The client replaces the entire plan with each update."
        "plan": Value("plan"),
        # "Notices are live events rather than session history."
        "notice": Event("notices"),
        # "A chunk of bytes appended to an agent-owned terminal's output" (base64 each).
        "terminal_output_chunk": AppendsBase64("data", "output", "TerminalOutput", "data"),
    },
    # "A first-seen ID creates an in-progress compaction."
    chunk_starts={"compaction_summary_chunk": {"status": "in_progress"}},
    requests={"permission": "session/request_permission", "elicitation": "elicitation/create"},
)


@dataclass(frozen=True)
class RuleView:
    """One `Rule` of `SessionState.RULES`: the update class, its kind, slot, key and fold."""

    cls: str
    kind: str  # ENTITY | VALUE | EVENT | REMOVE | JOIN
    slot: str
    key: tuple[tuple[str, ...], str] | None  # the attribute path of the key, and its wire name
    fold: str  # "merge", "replace", "_session.join" or a generated function
    append: tuple[str, str] | None = None  # a chunk's: (the entity's list attribute, the chunk's payload)


@dataclass(frozen=True)
class ChunkView:
    """A generated fold function: a chunk appended to its entity's list (or base64 text)."""

    function: str
    chunk: str
    target: str  # the entity's variant class
    identity: str  # attribute
    payload: str  # the chunk's attribute
    list_attribute: str | None  # the entity's list the payload is appended to
    base64: AppendsBase64 | None
    required: tuple[tuple[Field, str], ...]  # the entity's other required attributes, each with its start value


@dataclass(frozen=True)
class ReportView:
    """A generated fold function: a full report of an entity replaces it."""

    function: str
    report: str  # the report's variant class
    target: str  # the entity's variant class
    attributes: tuple[tuple[str, str], ...]  # (the update's attribute, the report's) of each property it has


@dataclass(frozen=True)
class BaseView:
    """An entity's upsert base type (`ToolCallUpdate`) applied as its variant would be."""

    function: str
    base: str
    variant: str
    required: tuple[str, ...]  # the variant's required attributes, taken from the patch


@dataclass(frozen=True)
class SlotView:
    name: str
    kind: str
    annotation: str  # of the property
    doc: str


@dataclass(frozen=True)
class LinkView:
    """Where a request names an entity: a path of attribute names and classes to test."""

    steps: tuple[tuple[str, str], ...]  # ("attr", name) | ("type", class)
    slot: str
    carried: str | None  # the entity's upsert type found there (its update), else the path ends at its key


@dataclass(frozen=True)
class RequestView:
    kind: str
    params: str
    python_name: str  # of the apply method
    links: tuple[LinkView, ...]


@dataclass(frozen=True)
class SessionContext:
    """What session.py.jinja needs."""

    notification: str
    notification_session: str
    notification_update: str
    union: str
    rules: list[RuleView]
    chunks: list[ChunkView]
    reports: list[ReportView]
    base_folds: list[BaseView]
    slots: list[SlotView]
    requests: list[RequestView]
    other: list[str]  # variants of the union that get no rule (kept in `other`)
    messages: list[tuple[str, str]]  # (alias, `ChunkedMessage[...]`) of each JOIN rule's messages
    timeline: str  # the annotation of what iterating the state gives
    session_imports: list[str]


def _plural(word: str) -> str:
    return word if word.endswith("s") else f"{word}s"


def _slot_name(tag: str) -> str:
    return tag.removesuffix(UPDATE_SUFFIX)


def _payload_item(expr: TypeExpr) -> TypeExpr | None:
    return expr.item if isinstance(expr, ListOf) else None


def session_context(module: Module, objects: list[ObjectType]) -> SessionContext | None:
    """The context of session.py, or None when the schema has no `session/update` with a tagged union."""
    types = module.by_name()
    method = next((m for m in module.methods if m.name == SESSION_UPDATE_METHOD), None)
    params = types.get(method.params) if method else None
    if not isinstance(params, ObjectType):
        return None
    update_field = next(
        (f for f in params.fields if isinstance(f.type, Ref) and isinstance(types.get(f.type.name), UnionType)), None
    )
    session_field = next((f for f in params.fields if f.wire_name == "sessionId"), None)
    if update_field is None or session_field is None:
        return None
    assert isinstance(update_field.type, Ref)
    union = types[update_field.type.name]
    assert isinstance(union, UnionType)
    if union.tag_key is None:
        return None
    variants: list[tuple[str, ObjectType]] = []
    for variant in union.variants:
        obj = types.get(variant.type.name) if isinstance(variant.type, Ref) else None
        if isinstance(obj, ObjectType) and variant.tag is not None and obj.name != union.fallback:
            variants.append((variant.tag, obj))

    def base_of(obj: ObjectType) -> ObjectType:
        base = types.get(obj.base or "")
        return base if isinstance(base, ObjectType) else obj

    # Entities: upsert variants with an identity, keyed by it.
    entities: dict[str, tuple[str, ObjectType, Field]] = {}  # variant → (slot, base, identity field)
    rules: list[RuleView] = []
    chunks: list[ChunkView] = []
    reports: list[ReportView] = []
    messages: list[tuple[str, str]] = []
    slots: list[SlotView] = []
    base_folds: list[BaseView] = []
    other: list[str] = []
    key_types: set[str] = set()
    for tag, obj in variants:
        base = base_of(obj)
        if tag in EXPLICIT.variants or base.upsert is None or len(base.upsert.identity) != 1:
            continue
        identity = next(f for f in base.fields if f.name == base.upsert.identity[0])
        slot = _plural(_slot_name(tag))
        entities[obj.name] = (slot, base, identity)
    identities = {identity.wire_name for _, _, identity in entities.values()}

    def typed(expr: TypeExpr) -> str:
        return expr.name if isinstance(expr, Ref) else "object"

    for tag, obj in variants:
        base = base_of(obj)
        explicit = EXPLICIT.variants.get(tag)
        if obj.name in entities:
            slot, _, identity = entities[obj.name]
            rules.append(RuleView(obj.name, "ENTITY", slot, ((identity.name,), identity.wire_name), "merge"))
            key_type = typed(identity.type)
            slots.append(SlotView(slot, "entity", f"dict[{key_type}, {obj.name}]", f"The {tag} entities by id."))
            key_types.add(key_type)
            continue
        if isinstance(explicit, Event):
            rules.append(RuleView(obj.name, "EVENT", explicit.slot, None, "replace"))
            slots.append(SlotView(explicit.slot, "event", f"list[{obj.name}]", f"The {tag} updates, in order."))
            continue
        if isinstance(explicit, Keyed):
            kind = "REMOVE" if isinstance(explicit, Removes) else "ENTITY"
            rules.append(RuleView(obj.name, kind, explicit.slot, (explicit.path, explicit.wire_name), "replace"))
            if kind == "ENTITY":
                slots.append(SlotView(explicit.slot, "entity", f"dict[str, {obj.name}]", f"The {tag} entities by id."))
            continue
        if isinstance(explicit, Value):
            rules.append(RuleView(obj.name, "VALUE", explicit.slot, None, "replace"))
            slots.append(SlotView(explicit.slot, "value", f"{obj.name} | None", f"The latest {tag}."))
            continue
        required = [f for f in base.fields if f.required]
        chunk_target = _chunk_target(tag, required, entities, variants)
        if chunk_target is not None:
            target, identity_wire = chunk_target
            slot, target_base, identity = entities[target]
            payload = next(f for f in required if f.wire_name != identity_wire)
            own_identity = next(f for f in required if f.wire_name == identity_wire)
            appends = explicit if isinstance(explicit, AppendsBase64) else None
            list_attribute = next(
                (f.name for f in target_base.fields if _payload_item(f.type) == payload.type and appends is None),
                None,
            )
            if list_attribute is None and appends is None:
                other.append(obj.name)
                continue
            starts = EXPLICIT.chunk_starts.get(tag, {})
            extra: list[tuple[Field, str]] = []
            for f in target_base.fields:
                if f.required and f.name != identity.name:
                    if f.wire_name not in starts:
                        raise GenerationError(obj.pointer, f"no start value of {f.wire_name} for a first {tag}")
                    extra.append((f, starts[f.wire_name]))
            function = fold_function_name(tag)
            chunks.append(
                ChunkView(
                    function, obj.name, target, own_identity.name, payload.name, list_attribute, appends, tuple(extra)
                )
            )
            append = None if list_attribute is None else (list_attribute, payload.name)
            chunk_key = ((own_identity.name,), identity_wire)
            rules.append(RuleView(obj.name, "ENTITY", slot, chunk_key, function, append))
            continue
        if tag.endswith(CHUNK_SUFFIX) and len(required) == 1 and required[0].wire_name not in identities:
            slot = _plural(tag.removesuffix(CHUNK_SUFFIX))
            named = next((f for f in base.fields if f.wire_name == MESSAGE_ID and not f.required), None)
            key = ((named.name,), named.wire_name) if named else None
            alias = "_" + "".join(word.title() for word in tag.removesuffix(CHUNK_SUFFIX).split("_"))
            key_type = f"{typed(named.type)} | int" if named else "int"
            rules.append(RuleView(obj.name, "JOIN", slot, key, "_session.join"))
            slots.append(SlotView(slot, "entity", f"dict[{key_type}, {alias}]", f"The {tag}s joined into messages."))
            messages.append((alias, f"ChunkedMessage[{obj.name}, {typed(required[0].type)}]"))
            key_types |= {f.type.name for f in (named, required[0]) if f is not None and isinstance(f.type, Ref)}
            continue
        reported = _reported_entity(tag, base, entities, variants)
        if reported is not None:
            slot, target_base, identity = entities[reported]
            function = fold_function_name(tag)
            names_of = {f.wire_name: f.name for f in target_base.fields}
            attributes = tuple((names_of[f.wire_name], f.name) for f in base.fields)
            reports.append(ReportView(function, obj.name, reported, attributes))
            rules.append(RuleView(obj.name, "ENTITY", slot, ((identity.name,), identity.wire_name), function))
            continue
        if base.upsert is not None and not base.upsert.identity:
            slot = _slot_name(tag)
            rules.append(RuleView(obj.name, "VALUE", slot, None, "merge"))
            slots.append(SlotView(slot, "value", f"{obj.name} | None", f"The current {tag}, merged."))
            continue
        if tag.endswith(UPDATE_SUFFIX) and not any(f.wire_name in identities for f in required):
            slot = _slot_name(tag)
            rules.append(RuleView(obj.name, "VALUE", slot, None, "replace"))
            slots.append(SlotView(slot, "value", f"{obj.name} | None", f"The latest {tag}."))
            continue
        other.append(obj.name)

    requests = _requests(module, types, entities, session_field.wire_name)
    # An entity's upsert base type that a request carries is applied as its variant would be.
    carried = {link.carried for request in requests for link in request.links if link.carried}
    for variant_name, (_, base, _) in entities.items():
        if base.name in carried and base.name != variant_name:
            arguments = tuple(f.name for f in base.fields if f.required)
            base_folds.append(BaseView(fold_function_name(base.name), base.name, variant_name, arguments))
    names = {params.name, union.name, "TerminalOutput"} if any(c.base64 for c in chunks) else {params.name, union.name}
    names |= {rule.cls for rule in rules} | {c.target for c in chunks} | {b.base for b in base_folds}
    names |= {r.target for r in reports}
    names |= {b.variant for b in base_folds} | {r.params for r in requests}
    names |= {step for r in requests for link in r.links for kind, step in link.steps if kind == "type"}
    queries = Queries(module)
    start_members = (queries.enum_member(item.type, value) for c in chunks for item, value in c.required)
    names |= {member.enum for member in start_members if member} | key_types
    return SessionContext(
        notification=params.name,
        notification_session=session_field.name,
        notification_update=update_field.name,
        union=union.name,
        rules=rules,
        chunks=chunks,
        reports=reports,
        base_folds=base_folds,
        slots=slots,
        requests=requests,
        other=other,
        messages=messages,
        timeline=" | ".join([union.name, *(alias for alias, _ in messages)]),
        session_imports=sorted(names, key=import_sort_key),
    )


def _chunk_target(
    tag: str,
    required: list[Field],
    entities: dict[str, tuple[str, ObjectType, Field]],
    variants: list[tuple[str, ObjectType]],
) -> tuple[str, str] | None:
    """(the entity variant a chunk appends to, the identity's wire name), or None."""
    if len(required) != 2 or not tag.endswith(CHUNK_SUFFIX):
        return None
    tags = {obj.name: variant_tag for variant_tag, obj in variants}
    for item in required:
        candidates = [name for name, (_, _, identity) in entities.items() if identity.wire_name == item.wire_name]
        if len(candidates) > 1:
            candidates = [name for name in candidates if tags[name] + CHUNK_SUFFIX == tag]
        if len(candidates) == 1:
            return candidates[0], item.wire_name
    return None


def _reported_entity(
    tag: str,
    base: ObjectType,
    entities: dict[str, tuple[str, ObjectType, Field]],
    variants: list[tuple[str, ObjectType]],
) -> str | None:
    """The entity variant a report replaces (see the module docstring), or None."""
    required = {f.wire_name for f in base.fields if f.required}
    properties = {f.wire_name for f in base.fields}
    tags = {obj.name: variant_tag for variant_tag, obj in variants}
    candidates = [
        name
        for name, (_, target_base, identity) in entities.items()
        if identity.wire_name in required
        and properties <= {f.wire_name for f in target_base.fields}
        and base.keep_unknown == target_base.keep_unknown == "keep"
    ]
    if len(candidates) > 1:
        candidates = [name for name in candidates if tags[name] == tag + UPDATE_SUFFIX]
    return candidates[0] if len(candidates) == 1 else None


def _requests(
    module: Module,
    types: Mapping[str, NamedType],
    entities: dict[str, tuple[str, ObjectType, Field]],
    session_wire: str,
) -> list[RequestView]:
    """The requests the state ties to entities, each with the paths to what it names. A
    session id names the session (or a subagent's): never a link."""
    by_identity = {i.wire_name: slot for slot, _, i in entities.values() if i.wire_name != session_wire}
    by_base = {base.name: slot for slot, base, _ in entities.values()}
    views: list[RequestView] = []
    for kind, method_name in EXPLICIT.requests.items():
        method = next((m for m in module.methods if m.name == method_name), None)
        params = types.get(method.params) if method else None
        if not isinstance(params, ObjectType):
            continue
        links = _links(types, params, by_identity, by_base)
        if links:
            views.append(RequestView(kind, params.name, f"apply_{kind}_request", tuple(links)))
    return views


def _links(
    types: Mapping[str, NamedType], params: ObjectType, by_identity: dict[str, str], by_base: dict[str, str]
) -> list[LinkView]:
    """Where in `params` (through objects and union variants, four levels deep) an entity's
    upsert type or identity property is: the paths a request names entities by."""
    links: list[LinkView] = []

    def walk(obj: ObjectType, steps: tuple[tuple[str, str], ...], depth: int) -> None:
        for item in obj.fields:
            here = (*steps, ("attr", item.name))
            target = types.get(item.type.name) if isinstance(item.type, Ref) else None
            if isinstance(target, ObjectType) and target.name in by_base:
                links.append(LinkView(here, by_base[target.name], target.name))
            elif item.wire_name in by_identity:
                links.append(LinkView(here, by_identity[item.wire_name], None))
            elif depth < 4 and isinstance(target, ObjectType):
                walk(target, here, depth + 1)
            elif depth < 4 and isinstance(target, UnionType):
                for variant in target.variants:
                    inner = types.get(variant.type.name) if isinstance(variant.type, Ref) else None
                    if isinstance(inner, ObjectType) and inner.name != target.fallback:
                        walk(inner, (*here, ("type", inner.name)), depth + 1)

    walk(params, (), 0)
    return links
