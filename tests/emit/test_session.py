"""What session.py folds, derived from a small hand-written schema (tests/fixtures/session.json,
one `session/update` variant per rule of generator/emit/session.py) rather than the official
ones: the derivation, not the table, decides each rule."""

from __future__ import annotations

import dataclasses

from generator.config import SchemaOptions, UpsertRule
from generator.emit.session import SessionContext, session_context
from generator.ir.model import Module, ObjectType
from generator.pipeline import build_ir
from tests.support.helpers import FIXTURES, ROOT


def upsert(*identity: str) -> UpsertRule:
    return UpsertRule(identity=identity, start={}, null_resets=(), empty_clears=(), snapshot=())


def context_of(module: Module) -> SessionContext:
    context = session_context(module, [t for t in module.types if isinstance(t, ObjectType)])
    assert context is not None
    return context


MODULE = build_ir(
    FIXTURES / "session.json", "pkg", ROOT, SchemaOptions(upserts={"Item": upsert("itemId"), "Counter": upsert()})
)
CONTEXT = context_of(MODULE)
RULES = {rule.cls: rule for rule in CONTEXT.rules}


def test_an_upsert_with_an_identity_is_an_entity_keyed_by_it():
    rule = RULES["SessionUpdateItemUpdate"]
    assert (rule.kind, rule.slot, rule.key, rule.fold) == ("ENTITY", "items", (("item_id",), "itemId"), "merge")


def test_a_chunk_appends_its_payload_to_the_entity_list_of_its_type():
    rule = RULES["SessionUpdateItemChunk"]
    assert (rule.kind, rule.slot, rule.fold) == ("ENTITY", "items", "_fold_item_chunk")
    (chunk,) = CONTEXT.chunks
    assert (chunk.target, chunk.identity, chunk.payload, chunk.list_attribute) == (
        "SessionUpdateItemUpdate",
        "item_id",
        "part",
        "parts",
    )


def test_a_report_with_the_identity_and_only_the_entity_s_properties_replaces_it():
    rule = RULES["SessionUpdateItem"]
    assert (rule.kind, rule.slot, rule.fold) == ("ENTITY", "items", "_fold_item")
    (report,) = CONTEXT.reports
    assert (report.target, report.attributes) == (
        "SessionUpdateItemUpdate",
        (("item_id", "item_id"), ("title", "title")),
    )


def test_a_chunk_of_nothing_the_state_knows_joins_into_messages_named_by_an_optional_message_id():
    rule = RULES["SessionUpdateLineChunk"]
    assert (rule.kind, rule.slot, rule.key, rule.fold) == (
        "JOIN",
        "lines",
        (("message_id",), "messageId"),
        "_session.join",
    )
    assert CONTEXT.messages == [("_Line", "ChunkedMessage[SessionUpdateLineChunk, Text]")]
    assert CONTEXT.timeline == "SessionUpdate | _Line"


def test_update_variants_without_identity_are_values_replaced_or_merged():
    mood, counter = RULES["SessionUpdateMoodUpdate"], RULES["SessionUpdateCounterUpdate"]
    assert (mood.kind, mood.slot, mood.fold) == ("VALUE", "mood", "replace")
    assert (counter.kind, counter.slot, counter.fold) == ("VALUE", "counter", "merge")  # an upsert: merged


def test_a_variant_no_rule_derives_is_left_to_other():
    assert CONTEXT.other == ["SessionUpdateStrange"] and "SessionUpdateStrange" not in RULES
    assert {slot.name: slot.kind for slot in CONTEXT.slots} == {
        "items": "entity",
        "lines": "entity",
        "mood": "value",
        "counter": "value",
    }


def test_without_upsert_rules_chunks_and_reports_have_no_entity_and_fall_to_other():
    context = context_of(dataclasses.replace(MODULE, types=tuple(_without_upserts(MODULE))))
    kinds = {rule.cls: (rule.kind, rule.fold) for rule in context.rules}
    assert kinds == {
        "SessionUpdateItemUpdate": ("VALUE", "replace"),  # now only a `_update` naming nothing
        "SessionUpdateLineChunk": ("JOIN", "_session.join"),
        "SessionUpdateMoodUpdate": ("VALUE", "replace"),
        "SessionUpdateCounterUpdate": ("VALUE", "replace"),
    }
    assert context.other == ["SessionUpdateItem", "SessionUpdateItemChunk", "SessionUpdateStrange"]


def _without_upserts(module: Module) -> list[object]:
    return [dataclasses.replace(t, upsert=None) if isinstance(t, ObjectType) else t for t in module.types]
