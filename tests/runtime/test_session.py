"""generator/runtime/_session.py on its own: folding over hand-written rules (no schema):
the timeline (entities where first seen, events and `other` where they came), values,
removals, chunks joined into messages, requests, subscribers and snapshots. The generated `SessionState` is tested in tests/package/test_session.py."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import pytest

from generator.runtime import _session as s


@dataclass
class Item:  # an entity update: text appended
    id: str
    text: str = ""


@dataclass
class Gone:
    id: str


@dataclass
class Status:
    value: str


@dataclass
class Note:
    text: str


@dataclass
class Unknown:
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class Said:  # a chunk of a message that may not name it
    content: str
    message_id: str | None = None


@dataclass
class Thought:
    content: str


@dataclass
class Ask:
    about: Item | None = None
    item_id: str | None = None


def append(stored: Item | None, update: Item) -> Item:
    return update if stored is None else replace(stored, text=stored.text + update.text)


CODEC: dict[str, type] = {
    "Item": Item,
    "Gone": Gone,
    "Status": Status,
    "Note": Note,
    "Unknown": Unknown,
    "Said": Said,
    "Thought": Thought,
}


class Fold(s.SessionFold):
    RULES: ClassVar[dict[type, s.Rule]] = {
        Item: s.Rule(s.ENTITY, "items", s.key_at(("id",), "id"), append),
        Gone: s.Rule(s.REMOVE, "items", s.key_at(("id",), "id")),
        Status: s.Rule(s.VALUE, "status"),
        Note: s.Rule(s.EVENT, "notes"),
        Said: s.Rule(s.JOIN, "said", s.key_at(("message_id",), "messageId"), s.join),
        Thought: s.Rule(s.JOIN, "thoughts", None, s.join),
    }
    LINKS: ClassVar[dict[str, tuple[s.LinkPath, ...]]] = {
        "ask": (
            s.LinkPath(("about",), "items", carries=True),
            s.LinkPath(("item_id",), "items"),
        )
    }
    ENTITY_SLOTS = ("items", "said", "thoughts")
    VALUE_SLOTS = ("status",)
    EVENT_SLOTS = ("notes",)

    @staticmethod
    def encode_update(update: Any) -> Any:
        return {"type": type(update).__name__, **vars(update)}

    @staticmethod
    def decode_update(data: Any) -> Any:
        data = dict(data)
        return CODEC[data.pop("type")](**data)

    @staticmethod
    def encode_request(kind: str, request: Any) -> Any:
        return {"item_id": request.item_id, "about": None if request.about is None else vars(request.about)}

    @staticmethod
    def decode_request(kind: str, data: Any) -> Any:
        return Ask(None if data["about"] is None else Item(**data["about"]), data["item_id"])

    @staticmethod
    def unwrap(update: Any) -> tuple[str | None, Any]:
        return (update[0], update[1]) if isinstance(update, tuple) else (None, update)


def test_entities_fold_in_first_seen_order_and_values_replace():
    fold = Fold()
    for update in [Item("a", "1"), Item("b", "x"), Status("running"), Item("a", "2"), Status("idle")]:
        fold.apply(update)
    assert list(fold) == [Item("a", "12"), Item("b", "x")]
    assert fold.timeline() == [("items", "a", Item("a", "12")), ("items", "b", Item("b", "x"))]
    assert fold.entity("items", "a") == Item("a", "12") and fold.entity("items", "z") is None
    assert fold._values == {"status": Status("idle")} and len(fold) == 2


def test_removal_drops_the_entity_and_a_new_one_goes_to_the_end():
    fold = Fold()
    for update in [Item("a"), Item("b"), Gone("a"), Gone("never"), Item("a", "again")]:
        fold.apply(update)
    assert list(fold) == [Item("b"), Item("a", "again")]


def test_events_and_updates_without_a_rule_are_kept_in_order():
    fold = Fold()
    changes = [fold.apply(update) for update in [Note("1"), Unknown({"x": 1}), Note("2"), Unknown({"y": 2})]]
    assert fold._events["notes"] == [Note("1"), Note("2")]
    assert fold.other == [Unknown({"x": 1}), Unknown({"y": 2})]
    assert [change.slot for change in changes] == ["notes", s.OTHER, "notes", s.OTHER]
    assert all(change.created for change in changes)


def test_the_timeline_keeps_entities_events_and_other_in_the_order_they_came_and_values_out():
    fold = Fold()
    for update in [Note("1"), Item("a", "1"), Status("running"), Unknown({"x": 1}), Item("b"), Item("a", "2")]:
        fold.apply(update)
    assert list(fold) == [Note("1"), Item("a", "12"), Unknown({"x": 1}), Item("b")]
    assert [(slot, key) for slot, key, _ in fold.timeline()] == [
        ("notes", None),
        ("items", "a"),
        (s.OTHER, None),
        ("items", "b"),
    ]
    assert len(fold) == 4


def test_chunks_join_the_message_they_name_or_the_last_entity_of_their_slot():
    fold = Fold()
    updates = [Said("Hel"), Said("lo"), Note("n"), Said("!"), Thought("hm"), Said("Two"), Item("a"), Said("Three")]
    changes = [fold.apply(update) for update in updates]
    said = fold._entities.by_slot["said"]
    assert list(said) == [1, 3, 4]  # a thought and an item in between start new messages; a note does not
    assert [message.content for message in said.values()] == [["Hel", "lo", "!"], ["Two"], ["Three"]]
    assert [change.key for change in changes if change.slot == "said"] == [1, 1, 1, 3, 4]
    assert fold.entity("thoughts", 2) == s.ChunkedMessage((Thought("hm"),))
    fold.apply(Said("by id", "m"))
    fold.apply(Said(" too"))  # no id: joins the last message, the one named m
    fold.apply(Thought("x"))
    fold.apply(Said("again", "m"))  # its id names m, wherever it is
    assert said["m"].content == ["by id", " too", "again"] and said["m"].chunks[1] == Said(" too")
    restored = Fold.from_json(fold.to_json())
    assert restored == fold and restored._entities.by_slot["said"] == said


def test_each_change_says_what_it_changed_and_subscribers_get_each_one():
    fold = Fold()
    seen: list[s.SessionChange] = []
    unsubscribe = fold.subscribe(seen.append)
    first = fold.apply(Item("a", "1"))
    second = fold.apply(Item("a", "2"))
    removed = fold.apply(Gone("a"))
    unsubscribe()
    fold.apply(Status("idle"))
    assert seen == [first, second, removed]
    assert (first.slot, first.key, first.before, first.after, first.created) == (
        "items",
        "a",
        None,
        Item("a", "1"),
        True,
    )
    assert (second.before, second.after, second.created) == (Item("a", "1"), Item("a", "12"), False)
    assert removed.removed and removed.before == Item("a", "12") and removed.update == Gone("a")
    unsubscribe()  # twice is harmless


def test_a_notification_of_another_session_is_refused():
    fold = Fold()
    fold.apply(("s1", Item("a")))
    assert fold.session_id == "s1"
    with pytest.raises(ValueError, match="session 's2' applied to session 's1'"):
        fold.apply(("s2", Item("b")))
    assert list(fold) == [Item("a")]


def test_a_request_carrying_an_update_applies_it_and_is_tied_to_its_entity():
    fold = Fold()
    fold.apply(Item("a", "1"))
    ask = Ask(about=Item("a", "2"))
    change = fold._apply_request("ask", ask)
    assert (change.slot, change.key, change.after, change.update) == ("items", "a", Item("a", "12"), ask)
    by_key = Ask(item_id="b")
    fold._apply_request("ask", by_key)
    unrelated = Ask()
    assert fold._apply_request("ask", unrelated).slot == "ask"
    assert fold.requests_for("items", "a") == [ask] and fold.requests_for("items", "b") == [by_key]
    assert [(entry.slot, entry.key) for entry in fold.requests] == [("items", "a"), ("items", "b"), (None, None)]
    assert fold.resolve_request(ask) and not fold.resolve_request(ask)
    assert fold.requests_for("items", "a") == []


def test_a_snapshot_restores_the_same_state_without_applying_requests_again():
    fold = Fold("s1")
    for update in [Item("a", "1"), Note("n"), Status("idle"), Unknown({"x": 1}), Item("b")]:
        fold.apply(update)
    fold._apply_request("ask", Ask(about=Item("a", "2")))
    text = fold.to_json()
    restored = Fold.from_json(text)
    assert restored == fold and restored.to_json() == text
    assert list(restored) == [
        Item("a", "12"),
        Note("n"),
        Unknown({"x": 1}),
        Item("b"),
    ]  # not "122": the request was not applied again
    assert restored.requests[0].slot == "items" and restored.requests[0].key == "a"
    assert restored.session_id == "s1" and restored != Fold("s1")
    assert "items=2" in repr(restored)


def test_key_at_follows_a_path_and_falls_back_to_undeclared_properties():
    @dataclass
    class Inner:
        unknown_properties: dict[str, Any]

    @dataclass
    class Outer:
        plan: Any

    assert s.key_at(("plan", "id"), "planId")(Outer(Item("p"))) == "p"
    assert s.key_at(("plan", "id"), "planId")(Outer(Inner({"planId": "q"}))) == "q"


def test_link_paths_test_classes_on_the_way():
    path = s.LinkPath(("about", Item, "id"), "items")
    assert path.find(Ask(about=Item("a"))) == "a"
    assert path.find(Ask()) is None
    assert path.find(Ask(about=Gone("a"))) is None  # type: ignore[arg-type]


def test_base64_chunks_append_their_bytes():
    first, second = base64.b64encode(b"hello ").decode(), base64.b64encode(b"world").decode()
    joined = s.append_base64(s.append_base64(None, first), second)
    assert base64.b64decode(joined) == b"hello world"
    assert s.append_base64("", second) == second


@dataclass
class Carried:  # a notification carrying one update of a session
    session: str
    update: Any


def _decode_by_name(name: Any, data: Any) -> Any:
    data = dict(data)
    kind = data.pop("type")
    assert name == "Update" or name is Ask, name
    return Ask(**data) if name is Ask else CODEC[kind](**data)


class CodecFold(s.SessionFold):
    """A fold that gives only its `CODEC`: the base class reads, writes and unwraps with it."""

    RULES = Fold.RULES
    LINKS = Fold.LINKS
    CODEC = s.SessionCodec(
        _decode_by_name,
        lambda value: {"type": type(value).__name__, **vars(value)},
        "Update",
        {"ask": Ask},
        Carried,
        "session",
        "update",
    )
    ENTITY_SLOTS = Fold.ENTITY_SLOTS
    VALUE_SLOTS = Fold.VALUE_SLOTS
    EVENT_SLOTS = Fold.EVENT_SLOTS


def test_a_fold_given_its_codec_unwraps_notifications_and_snapshots_with_it():
    fold = CodecFold("s1")
    fold.apply(Carried("s1", Item("a", "1")))
    fold.apply(Status("idle"))
    with pytest.raises(ValueError):
        fold.apply(Carried("s2", Item("a", "2")))
    assert list(fold) == [Item("a", "1")]
    assert CodecFold.unwrap(Carried("s1", Note("n"))) == ("s1", Note("n"))
    assert CodecFold.unwrap(Note("n")) == (None, Note("n"))
    assert CodecFold.decode_update(CodecFold.encode_update(Item("b", "x"))) == Item("b", "x")
    restored = CodecFold.from_json(fold.to_json())
    assert restored == fold and restored.to_json() == fold.to_json()
