"""Patch-merge, case by case from each upsert type's schema description, then as properties."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.config import load_config
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA, import_package
from tests.support.strategies import Strategies

acp = import_package(ROOT / "generated", "acp_v2")
UNDEFINED = acp.UNDEFINED
CONFIG = load_config(ROOT)
MODULE = build_ir(V2_SCHEMA, "acp_v2", ROOT, CONFIG.options)
DEFS = json.loads(V2_SCHEMA.read_text())["$defs"]


def merged(name: str, stored: dict | None, patch: dict) -> dict:
    """merge() on decoded values, compared as JSON."""
    kind = getattr(acp, name)
    result = acp.merge(
        None if stored is None else kind.from_dict(stored, strict=True), kind.from_dict(patch, strict=True)
    )
    return result.to_dict()


# (type, stored, patch, expected), read off the descriptions
CASES = {
    "keep omitted": (
        "ToolCallUpdate",
        {"toolCallId": "t", "title": "a"},
        {"toolCallId": "t"},
        {"toolCallId": "t", "title": "a"},
    ),
    "null clears": (
        "ToolCallUpdate",
        {"toolCallId": "t", "title": "a"},
        {"toolCallId": "t", "title": None},
        {"toolCallId": "t", "title": None},
    ),
    "value replaces": (
        "ToolCallUpdate",
        {"toolCallId": "t", "title": "a"},
        {"toolCallId": "t", "title": "b"},
        {"toolCallId": "t", "title": "b"},
    ),
    "null resets kind to other": (
        "ToolCallUpdate",
        {"toolCallId": "t", "kind": "edit"},
        {"toolCallId": "t", "kind": None},
        {"toolCallId": "t", "kind": "other"},
    ),
    "null resets status to pending": (
        "ToolCallUpdate",
        {"toolCallId": "t", "status": "failed"},
        {"toolCallId": "t", "status": None},
        {"toolCallId": "t", "status": "pending"},
    ),
    "null clears a collection": (
        "ToolCallUpdate",
        {"toolCallId": "t", "locations": [{"path": "/a"}]},
        {"toolCallId": "t", "locations": None},
        {"toolCallId": "t", "locations": []},
    ),
    "[] clears a collection": (
        "ToolCallUpdate",
        {"toolCallId": "t", "locations": [{"path": "/a"}]},
        {"toolCallId": "t", "locations": []},
        {"toolCallId": "t", "locations": []},
    ),
    "an array replaces the collection": (
        "ToolCallUpdate",
        {"toolCallId": "t", "locations": [{"path": "/a"}]},
        {"toolCallId": "t", "locations": [{"path": "/b"}]},
        {"toolCallId": "t", "locations": [{"path": "/b"}]},
    ),
    "_meta merges by top-level key": (
        "ToolCallUpdate",
        {"toolCallId": "t", "_meta": {"a": 1, "b": {"x": 1}}},
        {"toolCallId": "t", "_meta": {"b": {"y": 2}, "c": 3}},
        {"toolCallId": "t", "_meta": {"a": 1, "b": {"y": 2}, "c": 3}},
    ),
    "_meta key set to null is removed": (
        "ToolCallUpdate",
        {"toolCallId": "t", "_meta": {"a": 1, "b": 2}},
        {"toolCallId": "t", "_meta": {"b": None}},
        {"toolCallId": "t", "_meta": {"a": 1}},
    ),
    "_meta null clears it all": (
        "ToolCallUpdate",
        {"toolCallId": "t", "_meta": {"a": 1}},
        {"toolCallId": "t", "_meta": None},
        {"toolCallId": "t", "_meta": None},
    ),
    "unknown properties merge like _meta keys": (
        "ToolCallUpdate",
        {"toolCallId": "t", "_x": 1, "_y": 2},
        {"toolCallId": "t", "_y": None, "_z": 3},
        {"toolCallId": "t", "_x": 1, "_z": 3},
    ),
    "a first tool call starts at the protocol defaults": (
        "ToolCallUpdate",
        None,
        {"toolCallId": "t", "title": "Run"},
        {"toolCallId": "t", "title": "Run", "kind": "other", "status": "pending", "content": [], "locations": []},
    ),
    "capabilities are replaced whole": (
        "ToolCallUpdate",
        {"toolCallId": "t", "capabilities": {"cancel": {}, "_meta": {"a": 1}}},
        {"toolCallId": "t", "capabilities": {"cancel": {}}},
        {"toolCallId": "t", "capabilities": {"cancel": {}}},
    ),
    "a first terminal starts unknown": ("TerminalUpdate", None, {"terminalId": "x"}, {"terminalId": "x"}),
    "terminal output is a replacement snapshot": (
        "TerminalUpdate",
        {"terminalId": "x", "output": {"data": "YQ==", "_meta": {"a": 1}}},
        {"terminalId": "x", "output": {"data": "Yg=="}},
        {"terminalId": "x", "output": {"data": "Yg=="}},
    ),
    "subagent state is replaced, never deep-merged": (
        "SubagentUpdate",
        {"sessionId": "c", "state": {"state": "idle", "stopReason": "end_turn", "usage": None}},
        {"sessionId": "c", "state": {"state": "running"}},
        {"sessionId": "c", "state": {"state": "running"}},
    ),
    "subagent state null removes the report": (
        "SubagentUpdate",
        {"sessionId": "c", "state": {"state": "running"}},
        {"sessionId": "c", "state": None},
        {"sessionId": "c", "state": None},
    ),
    "compaction status (required) replaces": (
        "CompactionUpdate",
        {"compactionId": "k", "status": "in_progress"},
        {"compactionId": "k", "status": "completed"},
        {"compactionId": "k", "status": "completed"},
    ),
    "compaction summary [] clears": (
        "CompactionUpdate",
        {"compactionId": "k", "status": "completed", "summary": [{"type": "text", "text": "s"}]},
        {"compactionId": "k", "status": "completed", "summary": []},
        {"compactionId": "k", "status": "completed", "summary": []},
    ),
    "a first user message starts with empty content": (
        "UserMessage",
        None,
        {"messageId": "m"},
        {"messageId": "m", "content": []},
    ),
    "agent message content null clears": (
        "AgentMessage",
        {"messageId": "m", "content": [{"type": "text", "text": "hi"}]},
        {"messageId": "m", "content": None},
        {"messageId": "m", "content": []},
    ),
    "agent thought content is replaced as a whole array": (
        "AgentThought",
        {"messageId": "m", "content": [{"type": "text", "text": "a"}]},
        {"messageId": "m", "content": [{"type": "text", "text": "b"}]},
        {"messageId": "m", "content": [{"type": "text", "text": "b"}]},
    ),
    "session message null clears": (
        "SessionMessage",
        {"messageId": "m", "senderSessionId": "s"},
        {"messageId": "m", "senderSessionId": None},
        {"messageId": "m", "senderSessionId": None},
    ),
    "session info title null clears": ("SessionInfoUpdate", {"title": "a"}, {"title": None}, {"title": None}),
    "session info omitted fields stay": (
        "SessionInfoUpdate",
        {"title": "a", "updatedAt": "x"},
        {"updatedAt": "y"},
        {"title": "a", "updatedAt": "y"},
    ),
    "usage numbers replace, cost null clears": (
        "UsageUpdate",
        {"used": 1, "size": 9, "cost": {"amount": 1.5, "currency": "USD"}},
        {"used": 2, "size": 9, "cost": None},
        {"used": 2, "size": 9, "cost": None},
    ),
    "usage _meta is a snapshot": (
        "UsageUpdate",
        {"used": 1, "size": 9, "_meta": {"a": 1}},
        {"used": 1, "size": 9},
        {"used": 1, "size": 9},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_merge_follows_the_description(case):
    name, stored, patch, expected = CASES[case]
    assert merged(name, stored, patch) == expected


def test_a_different_identity_is_an_error_naming_both():
    with pytest.raises(ValueError, match=r"tool_call_id='b'.*tool_call_id='a'"):
        acp.merge(acp.ToolCallUpdate(tool_call_id="a"), acp.ToolCallUpdate(tool_call_id="b"))


def test_a_session_update_variant_merges_into_the_stored_value():
    stored = acp.ToolCallUpdate(tool_call_id="t", title="a")
    patch = acp.SessionUpdateToolCallUpdate(tool_call_id="t", status=acp.ToolCallStatus.COMPLETED)
    result = acp.merge(stored, patch)
    assert type(result) is acp.ToolCallUpdate
    assert result.to_dict() == {"toolCallId": "t", "title": "a", "status": "completed"}


def test_merge_never_mutates_its_arguments():
    stored = acp.ToolCallUpdate.from_dict(
        {"toolCallId": "t", "_meta": {"a": 1}, "locations": [{"path": "/a"}], "_x": 1}
    )
    patch = acp.ToolCallUpdate.from_dict(
        {"toolCallId": "t", "_meta": {"a": None}, "locations": [{"path": "/b"}], "_x": None}
    )
    before = copy.deepcopy((stored, patch))
    result = acp.merge(stored, patch)
    assert (stored, patch) == before
    assert result.locations is not patch.locations


def test_only_upsert_types_merge():
    with pytest.raises(TypeError, match="not an upsert type"):
        acp.merge(None, acp.TerminalSize(cols=1, rows=1))


# --- properties ----------------------------------------------------------------

UPSERTS = sorted(named.name for named in MODULE.types if getattr(named, "upsert", None))
STRATEGIES = Strategies(MODULE)
SETTINGS = settings(max_examples=40, deadline=None, database=None)


def pair(name: str):
    """A stored value and a patch for the same entity, as JSON."""
    upsert = MODULE.by_name()[name].upsert
    identity = [f.wire_name for f in MODULE.by_name()[name].fields if f.name in upsert.identity]
    value = STRATEGIES.named(name)
    return st.tuples(value, value).map(lambda both: (both[0], {**both[1], **{key: both[0][key] for key in identity}}))


def kept(name: str, stored: dict) -> dict:
    """The patch that says nothing new: identity, required and snapshot fields only."""
    obj = MODULE.by_name()[name]
    keep = {f.wire_name for f in obj.fields if f.required or f.name in obj.upsert.snapshot}
    return {key: value for key, value in stored.items() if key in keep}


@pytest.mark.parametrize("name", UPSERTS)
def test_merge_properties(name):
    kind = getattr(acp, name)
    check = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DEFS})

    @SETTINGS
    @given(pair(name))
    def properties(values):
        stored, patch = kind.from_dict(values[0]), kind.from_dict(values[1])
        assert acp.merge(stored, kind.from_dict(kept(name, values[0]))) == stored
        once = acp.merge(stored, patch)
        assert acp.merge(once, patch) == once
        check.validate(once.to_dict())
        check.validate(acp.merge(None, patch).to_dict())

    properties()
