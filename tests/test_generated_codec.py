"""The wire rules of the generated codec, one hand-written case each (on acp_v2)."""

from __future__ import annotations

import copy
import json
import logging
import pickle

import pytest

from tests.helpers import ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
UNDEFINED, DecodeError = acp.UNDEFINED, acp.DecodeError


def note(update: dict) -> dict:
    return {"sessionId": "s1", "update": update}


def round_trip(name: str, value: object, **options: object) -> object:
    decoded = acp.decode(name, value, **options)
    encoded = acp.encode(decoded)
    assert encoded == value
    assert json.dumps(encoded) == json.dumps(value)  # same keys, same order
    return decoded


def rejection(name: str, value: object) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        acp.decode(name, value, strict=True)
    return caught.value


# --- tri-state ---------------------------------------------------------------


def test_absent_null_and_value_stay_apart():
    absent = round_trip("ToolCallUpdate", {"toolCallId": "t"})
    cleared = round_trip("ToolCallUpdate", {"toolCallId": "t", "title": None})
    titled = round_trip("ToolCallUpdate", {"toolCallId": "t", "title": "Run tests"})
    assert (absent.title, cleared.title, titled.title) == (UNDEFINED, None, "Run tests")


def test_undefined_is_a_falsy_singleton_that_survives_copy_and_pickle():
    assert not UNDEFINED and repr(UNDEFINED) == "UNDEFINED"
    assert copy.copy(UNDEFINED) is UNDEFINED and copy.deepcopy(UNDEFINED) is UNDEFINED
    assert pickle.loads(pickle.dumps(UNDEFINED)) is UNDEFINED
    assert acp.Undefined() is UNDEFINED


def test_encoding_omits_undefined_and_writes_none_as_null():
    update = acp.ToolCallUpdate(tool_call_id="t", title=None, status=acp.ToolCallStatus.COMPLETED)
    assert update.to_dict() == {"toolCallId": "t", "title": None, "status": "completed"}
    assert update.to_json() == '{"toolCallId":"t","title":null,"status":"completed"}'


# --- lossless ----------------------------------------------------------------


def test_meta_comes_back_as_it_came():
    meta = {"vendor": {"nested": [1, 2.5, None, True]}, "z": "last"}
    assert round_trip("ToolCallUpdate", {"toolCallId": "t", "_meta": meta}).meta == meta


def test_unknown_tags_of_open_unions_are_kept_whole():
    value = note({"sessionUpdate": "_vendor_progress", "pct": 40, "detail": {"a": [1]}})
    decoded = round_trip("UpdateSessionNotification", value)
    assert isinstance(decoded.update, acp.SessionUpdateOther)
    assert decoded.update.session_update == "_vendor_progress"


def test_unknown_strings_of_open_enums_are_kept():
    known = round_trip("ToolCallUpdate", {"toolCallId": "t", "kind": "read"})
    custom = round_trip("ToolCallUpdate", {"toolCallId": "t", "kind": "_telepathy"})
    assert known.kind is acp.ToolKind.READ
    assert custom.kind == "_telepathy" and type(custom.kind) is str


def test_undeclared_properties_are_kept_and_written_after_the_known_ones():
    value = {"toolCallId": "t", "zeta": 1, "title": "x", "alpha": {"b": 2}}
    decoded = acp.decode("ToolCallUpdate", value)
    assert decoded.unknown_properties == {"zeta": 1, "alpha": {"b": 2}}
    assert list(acp.encode(decoded)) == ["toolCallId", "title", "zeta", "alpha"]


def test_tagged_variants_subclass_the_type_they_wrap_and_carry_the_tag():
    decoded = round_trip("UpdateSessionNotification", note({"sessionUpdate": "tool_call_update", "toolCallId": "t"}))
    assert isinstance(decoded.update, acp.ToolCallUpdate)
    assert type(decoded.update) is acp.SessionUpdateToolCallUpdate
    assert decoded.update.session_update == "tool_call_update"


def test_a_top_level_union_value_encodes_with_its_tag():
    value = {"type": "text", "text": "hi"}
    assert acp.encode(acp.decode("ContentBlock", value)) == value
    assert acp.encode(acp.decode(acp.ContentBlock, value)) == value


def test_untagged_unions_keep_the_json_type():
    assert round_trip("RequestId", 7) == 7
    assert round_trip("RequestId", "7") == "7"
    assert rejection("RequestId", True).path == "$"


def test_flattened_unions_decode_from_the_same_object():
    value = {"path": "/a", "operation": "move", "oldPath": "/b"}
    schema = json.loads((ROOT / "schema" / "v2" / "schema.unstable.json").read_text())["$defs"]
    if "oldPath" not in json.dumps(schema["DiffPathPairChange"]):
        pytest.skip("schema changed")
    decoded = acp.decode("DiffChange", value)
    assert isinstance(decoded.operation, acp.DiffChangeOperationMove)
    assert acp.encode(decoded) == value


# --- strict rejections, with the exact path ----------------------------------


def test_a_bool_is_not_an_integer():
    error = rejection("UsageUpdate", {"used": True, "size": 1})
    assert (error.path, error.expected, error.found) == ("$.used", "integer", True)


def test_integral_floats_are_integers_and_fractions_are_not():
    assert acp.decode("UsageUpdate", {"used": 2.0, "size": 1}, strict=True).used == 2
    assert rejection("UsageUpdate", {"used": 1.5, "size": 1}).path == "$.used"


def test_missing_required_properties_name_the_property():
    error = rejection("UpdateSessionNotification", note({"sessionUpdate": "tool_call_update"}))
    assert error.path == "$.update.toolCallId"
    assert "required" in error.expected


def test_a_known_tag_with_a_bad_payload_is_an_error_about_that_variant():
    error = rejection("UpdateSessionNotification", note({"sessionUpdate": "tool_call_update", "toolCallId": 5}))
    assert (error.path, error.expected) == ("$.update.toolCallId", "string")


def test_integer_format_bounds_are_enforced():
    assert rejection("TerminalSize", {"cols": 65536, "rows": 1}).path == "$.cols"
    assert rejection("UsageUpdate", {"used": -1, "size": 1}).expected == "integer >= 0"
    assert rejection("UsageUpdate", {"used": 2**64, "size": 1}).expected == f"integer <= {2**64 - 1}"


def test_min_items_is_enforced():
    error = rejection("PromptRequest", {"sessionId": "s", "prompt": []})
    assert (error.path, error.expected) == ("$.prompt", "array of at least 1 items")


def test_non_string_keys_and_non_finite_numbers_are_rejected():
    assert rejection("ToolCallUpdate", {"toolCallId": "t", 1: "x"}).expected == "an object with string keys"
    assert rejection("Cost", {"amount": float("nan"), "currency": "USD"}).path == "$.amount"
    assert rejection("ToolCallUpdate", {"toolCallId": "t", "rawInput": {"x": float("inf")}}).path == "$.rawInput.x"
    with pytest.raises(DecodeError):
        acp.Cost.from_json('{"amount": NaN, "currency": "USD"}')


def test_string_patterns_are_enforced(rules_pkg):
    assert rules_pkg.decode("Currency", "EUR", strict=True) == "EUR"
    with pytest.raises(rules_pkg.DecodeError) as caught:
        rules_pkg.decode("Currency", "euro")
    assert caught.value.expected == "string matching '^[A-Z]{3}$'"


def test_unknown_tags_of_closed_unions_list_the_known_ones(rules_pkg):
    with pytest.raises(rules_pkg.DecodeError) as caught:
        rules_pkg.decode("Pet", {"species": "fish"})
    assert (caught.value.path, caught.value.expected) == ("$.species", "one of 'cat', 'dog'")
    assert rules_pkg.encode(rules_pkg.decode("Pet", {"species": "cat", "lives": 9})) == {"species": "cat", "lives": 9}


def test_paths_index_into_arrays():
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [
        {"type": "content", "content": {"type": "text", "text": "ok"}},
        {"type": "content", "content": {"type": "text", "text": 3}},
    ]}
    assert rejection("UpdateSessionNotification", note(update)).path == "$.update.content[1].content.text"


# --- lenient decoding and its reports ----------------------------------------


def test_default_on_error_salvages_and_reports(caplog):
    reports = []
    with caplog.at_level(logging.WARNING, logger="acp_v2"):
        decoded = acp.decode("ToolCallUpdate", {"toolCallId": "t", "kind": 5}, on_salvage=reports.append)
    assert decoded.kind is UNDEFINED
    assert [report.path for report in reports] == ["$.kind"]
    assert "$.kind" in caplog.text
    assert rejection("ToolCallUpdate", {"toolCallId": "t", "kind": 5}).path == "$.kind"


def test_skip_invalid_items_drops_only_the_bad_items_and_reports_each():
    good = {"type": "content", "content": {"type": "text", "text": "ok"}}
    bad = {"type": "content", "content": {"type": "text"}}
    reports = []
    decoded = acp.decode("ToolCallUpdate", {"toolCallId": "t", "content": [good, bad, good]}, on_salvage=reports.append)
    assert len(decoded.content) == 2
    assert [report.path for report in reports] == ["$.content[1].content.text"]
    assert "skipped" in reports[0].reason
    assert rejection("ToolCallUpdate", {"toolCallId": "t", "content": [good, bad]}).path == "$.content[1].content.text"


def test_default_on_null_turns_null_into_the_default_and_reports():
    reports = []
    decoded = acp.decode("NewSessionRequest", {"cwd": "/w", "mcpServers": None}, on_salvage=reports.append)
    assert decoded.mcp_servers is UNDEFINED
    assert [report.path for report in reports] == ["$.mcpServers"]
    assert rejection("NewSessionRequest", {"cwd": "/w", "mcpServers": None}).path == "$.mcpServers"


# --- API ---------------------------------------------------------------------


def test_decode_takes_a_type_or_its_defs_name():
    value = {"used": 1, "size": 2}
    assert acp.decode(acp.UsageUpdate, value) == acp.decode("UsageUpdate", value) == acp.UsageUpdate.from_dict(value)
    assert acp.decode("ToolKind", "edit") is acp.ToolKind.EDIT
    assert acp.decode("SessionId", "abc") == "abc"
    with pytest.raises(TypeError):
        acp.decode("NoSuchType", {})


def test_from_json_accepts_str_and_bytes_and_reports_bad_json_at_the_root():
    assert acp.UsageUpdate.from_json(b'{"used": 1, "size": 2}').size == 2
    with pytest.raises(DecodeError) as caught:
        acp.UsageUpdate.from_json("{")
    assert caught.value.path == "$"


def test_decode_error_is_a_value_error_with_a_readable_message():
    error = rejection("UsageUpdate", {"used": "many", "size": 1})
    assert isinstance(error, ValueError)
    assert str(error) == "$.used: expected integer, found string 'many'"


def test_too_deep_nesting_is_a_decode_error():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(DecodeError):
        acp.decode("ToolCallUpdate", {"toolCallId": "t", "rawInput": deep}, strict=True)
