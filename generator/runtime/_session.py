"""Folding a session's stream of updates into its current state, without the schema.

`SessionFold` keeps what a client shows of one session: a timeline of what happened in it,
in order: entities (messages, tool calls, plans, ...) at the place they were first seen, each
folded from the updates that name it, events (notices) and the updates it has no rule for
(`other`) where they came; the current value of each value slot (state, usage, ...), which
has no place in the timeline; and the requests that ask about its entities (a permission
request and the tool call it names). What each update type does is a
`Rule`: the generated `session.py` subclasses `SessionFold` with one rule per update type of
the schema, typed accessors per slot, and the functions that fold chunks and find what a
request is about. Standard library only."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, Literal, TypeVar, cast

from ._runtime import UNDEFINED

__all__ = ["ChunkedMessage", "LinkPath", "Rule", "SessionChange", "SessionFold", "SessionRequest"]

ENTITY: Final = "entity"
"""An update that names an entity by its key: folded into the stored one (or replaces it)."""
VALUE: Final = "value"
"""An update that is the session's current value of its slot (folded into the previous one)."""
EVENT: Final = "event"
"""An update kept in order in its slot's list, folding nothing."""
REMOVE: Final = "remove"
"""An update that removes the entity its key names from the slot."""
JOIN: Final = "join"
"""A chunk of a message that may not name it (v1's message chunks): it joins the message its key
names, or, without a key, the timeline's last entity when that is a message of its slot; else it
starts a new message."""
OTHER: Final = "other"
"""The slot of updates without a rule: kept in order, as they came."""

RuleKind = Literal["entity", "value", "event", "remove", "join"]
Fold = Callable[[Any, Any], Any]
"""(stored or None, update) → the new stored value."""

_S = TypeVar("_S", bound="SessionFold")
_C = TypeVar("_C")
_B = TypeVar("_B")


def replace(stored: Any, update: Any) -> Any:
    """The fold of a snapshot: the update is the new value."""
    return update


@dataclass(frozen=True, slots=True)
class Rule:
    """What one update type does to the session: its `kind`, the `slot` it lands in, the
    `key` of the entity it names (ENTITY, REMOVE), and how it `fold`s into the stored
    value (ENTITY, VALUE)."""

    kind: RuleKind
    slot: str
    key: Callable[[Any], Hashable] | None = None  # JOIN: None when its chunks never name their message
    fold: Fold = replace
    append: tuple[str, str] | None = None
    """A chunk's ENTITY rule: (the entity's list attribute, the chunk's attribute appended to it).
    Once `fold` has given the entity a list of the state's own, later chunks append to it in
    place: a message of n chunks folds in O(n), not O(n²)."""


class ChunkedMessage(Generic[_C, _B]):
    """A message streamed as chunks of type `_C` that carry one `content` of type `_B` each (a
    JOIN rule's entity): the chunks, in order, as they came, so that a snapshot writes them back.

    An immutable value, compared by its chunks. `appended(chunk)` gives the message with one
    more chunk in O(1) (amortized): the newest message of a line of appends shares its storage
    with the ones before it, each of which still sees only its own chunks."""

    __slots__ = ("_items", "_length")
    __match_args__ = ("chunks",)

    def __init__(self, chunks: Iterable[_C]) -> None:
        self._items: list[_C] = list(chunks)
        self._length = len(self._items)

    @property
    def chunks(self) -> tuple[_C, ...]:
        """The chunks, in order."""
        return tuple(self._items[: self._length])

    @property
    def content(self) -> list[_B]:
        """Each chunk's content, in order: the message."""
        return [cast(_B, getattr(chunk, "content")) for chunk in self._items[: self._length]]  # noqa: B009

    @property
    def session_update(self) -> str:
        """The `session_update` tag of its chunks (`agent_message_chunk`, ...), as each update
        of the timeline has its own."""
        return cast(str, getattr(self._items[0], "session_update"))  # noqa: B009

    def appended(self, chunk: _C) -> ChunkedMessage[_C, _B]:
        """This message with `chunk` after its chunks (this one is unchanged)."""
        if self._length == len(self._items):  # the newest of its storage: share it
            self._items.append(chunk)
            longer: ChunkedMessage[_C, _B] = ChunkedMessage.__new__(ChunkedMessage)
            longer._items, longer._length = self._items, self._length + 1
            return longer
        return ChunkedMessage((*self._items[: self._length], chunk))

    def __len__(self) -> int:
        return self._length

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkedMessage):
            return NotImplemented
        return self._length == other._length and self._items[: self._length] == other._items[: other._length]

    def __hash__(self) -> int:
        return hash(self.chunks)

    def __repr__(self) -> str:
        return f"ChunkedMessage(chunks={self.chunks!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ChunkedMessage, (self.chunks,))


def join(stored: ChunkedMessage[Any, Any] | None, chunk: Any) -> ChunkedMessage[Any, Any]:
    """The fold of a JOIN rule: the chunk appended to its message."""
    return ChunkedMessage((chunk,)) if stored is None else stored.appended(chunk)


@dataclass(frozen=True, slots=True)
class SessionChange:
    """What one applied update or request changed: the `slot`, the entity's `key` (None for
    values, events and `other`), the stored value `before` and `after` (None: there was none
    / it was removed). A subscriber gets one per call of `apply` or `apply_*_request`.

    A chunk that appends to an entity's list (a v2 message's `content`, a tool call's) is
    appended in place, in linear time: then `before` is `after`, the entity as it now is,
    and `update` is the chunk. (A `ChunkedMessage` is a value: its `before` keeps its chunks.)"""

    update: Any
    slot: str
    key: Hashable | None
    before: Any
    after: Any

    @property
    def created(self) -> bool:
        """Whether the update added an entity, a value, an event or an `other` entry."""
        return self.before is None and self.after is not None

    @property
    def removed(self) -> bool:
        return self.before is not None and self.after is None


@dataclass(slots=True)
class SessionRequest:
    """A request of the agent (`kind`: "permission", "elicitation") and the entity it asks
    about (`slot` and `key`, None when it names none)."""

    kind: str
    request: Any
    slot: str | None = None
    key: Hashable | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """What a request is about, as the generated `session.py` finds it: the entity (`slot`,
    `key`) and the update of that entity it carries, if any (a permission request's tool call,
    applied as that slot's update would be)."""

    slot: str
    key: Hashable
    update: Any = None


def key_at(path: tuple[str, ...], wire_name: str) -> Callable[[Any], Hashable]:
    """The key of an update at the attribute `path`; where the last object lacks the attribute
    (an open union's fallback variant), its undeclared property `wire_name`."""

    def key(update: Any) -> Hashable:
        value = update
        for name in path[:-1]:
            value = getattr(value, name, None)
        unknown = getattr(value, "unknown_properties", None)
        fallback = unknown.get(wire_name) if isinstance(unknown, dict) else None
        found: Hashable = getattr(value, path[-1], fallback)
        return found

    return key


@dataclass(frozen=True, slots=True)
class LinkPath:
    """Where a request names an entity of `slot`: attribute names to follow and classes the
    value must be an instance of, in order. `carries`: the value found is an update of the
    entity (applied, its key read by the entity's rule), else the entity's key."""

    steps: tuple[str | type, ...]
    slot: str
    carries: bool = False

    def find(self, request: Any) -> Any:
        """The value at the end of the path in `request`, or None."""
        value = request
        for step in self.steps:
            if isinstance(step, str):
                value = getattr(value, step, None)
                if value is None or value is UNDEFINED:
                    return None
            elif not isinstance(value, step):
                return None
        return value


def append_base64(stored: str | None, chunk: str) -> str:
    """Two independently base64-encoded byte strings as one: the bytes of `stored` then `chunk`."""
    if not stored:
        return chunk
    return base64.b64encode(base64.b64decode(stored) + base64.b64decode(chunk)).decode("ascii")


@dataclass(slots=True)
class _Entities:
    """The entities (per slot, key → stored value) and the timeline: (slot, key) of each entity
    where it was first seen, (slot, index in its list) of each event and `other` update."""

    by_slot: dict[str, dict[Any, Any]] = field(default_factory=dict)
    order: dict[tuple[str, Hashable], None] = field(default_factory=dict)  # insertion order


@dataclass(frozen=True)
class SessionCodec:
    """What a `SessionFold` reads and writes with, from its package: `decode` and `encode`, the
    `$defs` name of the update union, the request classes by kind, and the notification that
    carries an update with the names of its session id and update attributes."""

    decode: Callable[[Any, Any], Any]
    encode: Callable[[Any], Any]
    update: str
    requests: Mapping[str, type]
    notification: type
    session_id: str
    update_attribute: str


class SessionFold:
    """The folded state of one session (see the module docstring). Subclasses set `RULES`
    (update type → `Rule`), `LINKS` (where a request names entities), the slot names by kind
    and `CODEC` (the schema's codec and notification, `SessionCodec`), or override the
    methods that use it (`encode_update`, `decode_update`, `encode_request`, `decode_request`,
    `unwrap`)."""

    RULES: ClassVar[Mapping[type, Rule]] = {}
    LINKS: ClassVar[Mapping[str, tuple[LinkPath, ...]]] = {}  # request kind → where it names entities
    ENTITY_SLOTS: ClassVar[tuple[str, ...]] = ()
    VALUE_SLOTS: ClassVar[tuple[str, ...]] = ()
    EVENT_SLOTS: ClassVar[tuple[str, ...]] = ()
    CODEC: ClassVar[SessionCodec]

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self._entities = _Entities({slot: {} for slot in self.ENTITY_SLOTS})
        self._values: dict[str, Any] = {}
        self._events: dict[str, list[Any]] = {slot: [] for slot in self.EVENT_SLOTS}
        self._other: list[Any] = []
        self._unnamed = 0  # the messages started by chunks that name none: their keys are 1, 2, ...
        self._lists: dict[tuple[str, Hashable], list[Any]] = {}  # an entity's list chunks append to in place
        self._requests: list[SessionRequest] = []
        self._subscribers: list[Callable[[SessionChange], None]] = []

    # --- what the subclass provides ----------------------------------------------------

    @classmethod
    def encode_update(cls, update: Any) -> Any:
        return cls.CODEC.encode(update)

    @classmethod
    def decode_update(cls, data: Any) -> Any:
        return cls.CODEC.decode(cls.CODEC.update, data)

    @classmethod
    def encode_request(cls, kind: str, request: Any) -> Any:
        return cls.CODEC.encode(request)

    @classmethod
    def decode_request(cls, kind: str, data: Any) -> Any:
        return cls.CODEC.decode(cls.CODEC.requests[kind], data)

    @classmethod
    def link_request(cls, kind: str, request: Any) -> Link | None:
        """The entity `request` asks about (the first of `LINKS[kind]` found), and the update
        of it that it carries."""
        for path in cls.LINKS.get(kind, ()):
            found = path.find(request)
            if found is None:
                continue
            if not path.carries:
                return Link(path.slot, found)
            rule = cls.RULES.get(type(found))
            if rule is not None and rule.key is not None:
                return Link(rule.slot, rule.key(found), found)
        return None

    @classmethod
    def unwrap(cls, update: Any) -> tuple[str | None, Any]:
        """(the session id, the update) of a notification; (None, update) of an update."""
        codec = cls.CODEC
        if isinstance(update, codec.notification):
            return getattr(update, codec.session_id), getattr(update, codec.update_attribute)
        return None, update

    # --- applying ----------------------------------------------------------------------

    def apply(self, update: Any) -> SessionChange:
        """Fold one update (or the notification carrying it) into the state and tell the
        subscribers. An update type without a rule is kept in `other`, in order."""
        session_id, update = self.unwrap(update)
        self._check_session(session_id)
        change = self._fold(update, update)
        self._notify(change)
        return change

    def _check_session(self, session_id: str | None) -> None:
        if session_id is None:
            return
        if self.session_id is None:
            self.session_id = session_id
        elif session_id != self.session_id:
            raise ValueError(f"an update of session {session_id!r} applied to session {self.session_id!r}")

    def _fold(self, update: Any, cause: Any) -> SessionChange:
        rule = self.RULES.get(type(update))
        if rule is None:
            self._entities.order[(OTHER, len(self._other))] = None
            self._other.append(update)
            return SessionChange(cause, OTHER, None, None, update)
        if rule.kind == VALUE:
            before = self._values.get(rule.slot)
            after = self._values[rule.slot] = rule.fold(before, update)
            return SessionChange(cause, rule.slot, None, before, after)
        if rule.kind == EVENT:
            self._entities.order[(rule.slot, len(self._events[rule.slot]))] = None
            self._events[rule.slot].append(update)
            return SessionChange(cause, rule.slot, None, None, update)
        key = self._joined(rule, update) if rule.kind == JOIN else cast(Callable[[Any], Hashable], rule.key)(update)
        slot = self._entities.by_slot[rule.slot]
        before = slot.get(key)
        if rule.kind == REMOVE:
            if before is not None:
                del slot[key]
                self._lists.pop((rule.slot, key), None)
                del self._entities.order[(rule.slot, key)]
            return SessionChange(cause, rule.slot, key, before, None)
        if rule.append is not None:
            return self._append(rule, slot, key, before, update, cause)
        after = slot[key] = rule.fold(before, update)
        self._entities.order.setdefault((rule.slot, key), None)
        return SessionChange(cause, rule.slot, key, before, after)

    def _append(
        self, rule: Rule, slot: dict[Any, Any], key: Hashable, before: Any, chunk: Any, cause: Any
    ) -> SessionChange:
        """Fold a chunk of an ENTITY rule with `append`: in place, into a list this state made
        for the entity (`_lists`); else through `rule.fold`, whose result's list is then ours."""
        attribute, payload = cast(tuple[str, str], rule.append)
        owned = self._lists.get((rule.slot, key))
        if owned is not None and getattr(before, attribute, None) is owned:
            cast(list[Any], owned).append(getattr(chunk, payload))  # (mypy narrows `owned` by `is`)
            return SessionChange(cause, rule.slot, key, before, before)
        after = slot[key] = rule.fold(before, chunk)
        self._entities.order.setdefault((rule.slot, key), None)
        items = getattr(after, attribute, None)
        if isinstance(items, list) and all(items is not getattr(value, attribute, None) for value in (before, chunk)):
            self._lists[(rule.slot, key)] = items  # made by the fold: no one else holds it
        return SessionChange(cause, rule.slot, key, before, after)

    def _joined(self, rule: Rule, chunk: Any) -> Hashable:
        """The key of the message a JOIN chunk joins (see `JOIN`). A snapshot writes a message's
        chunks together in its place, so the same rule joins them again on restore."""
        named = None if rule.key is None else rule.key(chunk)
        if named is not None and named is not UNDEFINED:
            return named
        for slot, key in reversed(self._entities.order):
            if slot in self._entities.by_slot:
                if slot == rule.slot:
                    return key
                break
        self._unnamed += 1
        return self._unnamed

    def _apply_request(self, kind: str, request: Any) -> SessionChange:
        """Keep `request`, tied to the entity it asks about; an update of that entity it
        carries is applied first, as the slot's own update would be."""
        link = self.link_request(kind, request)
        if link is None:
            entry = SessionRequest(kind, request)
            change = SessionChange(request, kind, None, None, entry)
        elif link.update is not None:
            change = self._fold(link.update, request)
            entry = SessionRequest(kind, request, change.slot, change.key)
        else:
            entry = SessionRequest(kind, request, link.slot, link.key)
            current = self._entities.by_slot.get(link.slot, {}).get(link.key)
            change = SessionChange(request, link.slot, link.key, current, current)
        self._requests.append(entry)
        self._notify(change)
        return change

    def resolve_request(self, request: Any) -> bool:
        """Forget `request` (answered or withdrawn); whether it was kept."""
        for index, entry in enumerate(self._requests):
            if entry.request is request:
                del self._requests[index]
                return True
        return False

    # --- reading -------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Any]:
        """The timeline, in order: each entity where it was first seen, as its folded update (a
        JOIN rule's message as a `ChunkedMessage`), each event and `other` update where it came. The
        values (state, usage, ...) are not in it: they are the session's current ones."""
        return (value for _, _, value in self.timeline())

    def __len__(self) -> int:
        return len(self._entities.order)

    def timeline(self) -> list[tuple[str, Hashable, Any]]:
        """The timeline (see `__iter__`) as (slot, key, value): the key of an entity, None for
        an event or an `other` update (as in `SessionChange`)."""
        entities = self._entities.by_slot
        return [(slot, key if slot in entities else None, self._at(slot, key)) for slot, key in self._entities.order]

    def _at(self, slot: str, key: Hashable) -> Any:
        """What is at a place of the timeline: an entity, or an event or `other` update by index."""
        if slot in self._entities.by_slot:
            return self._entities.by_slot[slot][key]
        return (self._other if slot == OTHER else self._events[slot])[cast(int, key)]

    def entity(self, slot: str, key: Hashable) -> Any:
        """The folded entity `key` of `slot`, or None."""
        return self._entities.by_slot[slot].get(key)

    @property
    def other(self) -> list[Any]:
        """The updates without a rule (unknown or new kinds), in order, as they came."""
        return self._other

    @property
    def requests(self) -> list[SessionRequest]:
        """The requests applied and not resolved, in order, each with what it asks about."""
        return self._requests

    def requests_for(self, slot: str, key: Hashable) -> list[Any]:
        """The requests kept that ask about the entity `key` of `slot`."""
        return [entry.request for entry in self._requests if entry.slot == slot and entry.key == key]

    # --- subscribers ---------------------------------------------------------------------

    def subscribe(self, callback: Callable[[SessionChange], None]) -> Callable[[], None]:
        """Call `callback(change)` after each applied update or request; returns the unsubscribe."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _notify(self, change: SessionChange) -> None:
        for callback in list(self._subscribers):
            callback(change)

    # --- snapshots -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The state as JSON data: `updates`, the timeline (each entity folded, a `ChunkedMessage` as
        its chunks) then the values, as the updates that, applied to a new state, give this one;
        `requests` with the entity each is tied to."""
        timeline = (
            update for value in self for update in (value.chunks if isinstance(value, ChunkedMessage) else (value,))
        )
        updates = [self.encode_update(update) for update in timeline]
        updates += [self.encode_update(self._values[slot]) for slot in self.VALUE_SLOTS if slot in self._values]
        requests = [
            {"kind": entry.kind, "request": self.encode_request(entry.kind, entry.request)}
            | ({} if entry.slot is None else {"slot": entry.slot, "key": entry.key})
            for entry in self._requests
        ]
        data: dict[str, Any] = {} if self.session_id is None else {"sessionId": self.session_id}
        return data | {"updates": updates, "requests": requests}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls: type[_S], data: Mapping[str, Any]) -> _S:
        """The state `to_dict` wrote: its updates applied in order, its requests kept as they
        were tied (not applied again)."""
        state = cls(data.get("sessionId"))
        for update in data["updates"]:
            state._fold(cls.decode_update(update), None)
        for entry in data.get("requests", ()):
            kind = entry["kind"]
            state._requests.append(
                SessionRequest(kind, cls.decode_request(kind, entry["request"]), entry.get("slot"), entry.get("key"))
            )
        return state

    @classmethod
    def from_json(cls: type[_S], text: str | bytes) -> _S:
        return cls.from_dict(json.loads(text))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionFold):
            return NotImplemented
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        counts = ", ".join(f"{slot}={len(values)}" for slot, values in self._entities.by_slot.items() if values)
        return f"<{type(self).__name__} {self.session_id!r} {counts or 'empty'}>"
