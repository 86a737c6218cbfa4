"""The wire rules of the generated codec, one hand-written case each (on acp_v2)."""

from __future__ import annotations

import copy
import importlib
import json
import logging
import pickle

import pytest

from tests.support.helpers import (
    FIXTURES,
    ROOT,
    assert_json_identical,
    generate_package,
    import_package,
    runtime_module,
)
from tests.support.strategies import Text

acp = import_package(ROOT / "generated", "acp_v2")
UNDEFINED, DecodeError = acp.UNDEFINED, acp.DecodeError


def note(update: dict) -> dict:
    return {"sessionId": "s1", "update": update}


def round_trip(name: str, value: object, **options: object) -> object:
    decoded = acp.decode(name, value, **options)
    encoded = acp.encode(decoded)
    assert_json_identical(encoded, value, ordered=True)  # same types, same keys, same order
    assert json.dumps(encoded) == json.dumps(value)
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


def test_undeclared_properties_in_place_of_optional_ones_are_kept():
    # A decoder counts the keys it proved present instead of looking each key up: as
    # many undeclared keys as there are optional ones must not pass for known.
    extra = {"zeta": 1, "eta": 2}
    assert acp.decode("TextContent", {"text": "x", **extra}).unknown_properties == extra
    assert acp.decode("ContentBlock", {"type": "text", "text": "x", "zeta": 1}).unknown_properties == {"zeta": 1}
    assert acp.decode("ContentBlock", {"type": "text", "text": "x", **extra}).unknown_properties == extra
    assert acp.ContentBlockText.from_dict({"type": "text", "text": "x", **extra}).unknown_properties == extra
    assert acp.decode("ContentBlock", {"type": "text", "text": "x", "_meta": {}}).unknown_properties == {}


def test_an_object_of_its_required_keys_alone_decodes_as_the_general_path_does():
    # Its decoder takes a shorter path when the object has as many keys as it has required
    # ones, all present and valid; anything else, such as a missing required key beside an
    # optional or undeclared one, takes the general path and gives its error.
    decoded = acp.decode("ToolCallUpdate", {"toolCallId": "t"})
    assert (decoded.tool_call_id, decoded.title, decoded.meta, decoded.unknown_properties) == (
        "t",
        UNDEFINED,
        UNDEFINED,
        {},
    )
    assert acp.encode(decoded) == {"toolCallId": "t"}
    error = rejection("ToolCallUpdate", {"title": "x"})
    assert (error.path, error.found) == ("$.toolCallId", runtime_module("_runtime").MISSING)
    error = rejection("ToolCallUpdate", {"toolCallId": 3})
    assert (error.path, error.expected) == ("$.toolCallId", "string")
    assert acp.decode("ToolCallUpdate", {"zeta": 1, "toolCallId": "t"}).unknown_properties == {"zeta": 1}
    error = rejection("UpdateSessionNotification", {"sessionId": "s", "zeta": {}})
    assert (error.path, error.found) == ("$.update", runtime_module("_runtime").MISSING)
    error = rejection("UpdateSessionNotification", {"sessionId": "s", "update": {"sessionUpdate": "plan_update"}})
    assert error.path == "$.update.plan"


def test_an_undeclared_property_in_place_of_a_required_one_that_was_defaulted_is_kept():
    decoded = acp.decode("ListSessionsResponse", {"zeta": 1})  # lenient: missing `sessions` becomes []
    assert (decoded.sessions, decoded.unknown_properties) == ([], {"zeta": 1})


def test_tagged_variants_subclass_the_type_they_wrap_and_carry_the_tag():
    decoded = round_trip("UpdateSessionNotification", note({"sessionUpdate": "tool_call_update", "toolCallId": "t"}))
    assert isinstance(decoded.update, acp.ToolCallUpdate)
    assert type(decoded.update) is acp.SessionUpdateToolCallUpdate
    assert decoded.update.session_update == "tool_call_update"


def test_a_top_level_union_value_encodes_with_its_tag():
    value = {"type": "text", "text": "hi"}
    assert_json_identical(acp.encode(acp.decode("ContentBlock", value)), value, ordered=True)
    assert_json_identical(acp.encode(acp.decode(acp.ContentBlock, value)), value, ordered=True)


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
    assert_json_identical(acp.encode(decoded), value)


# --- values built in Python --------------------------------------------------


def test_enum_members_and_str_subclasses_encode_as_plain_strings():
    update = acp.ToolCallUpdate(tool_call_id=Text("t"), kind=acp.ToolKind.EXECUTE, status="completed")
    encoded = update.to_dict()
    assert encoded == {"toolCallId": "t", "kind": "execute", "status": "completed"}
    assert [type(value) for value in encoded.values()] == [str, str, str]
    assert update.to_json() == '{"toolCallId":"t","kind":"execute","status":"completed"}'
    assert acp.decode("ToolCallUpdate", encoded, strict=True) == update


def test_free_form_values_encode_as_plain_json_copies():
    meta = {Text("k"): [acp.ToolKind.READ, (1, 2.5)], "n": {"deep": Text("v")}}
    encoded = acp.ToolCallUpdate(tool_call_id="t", raw_input=meta).to_dict()
    assert encoded["rawInput"] == {"k": ["read", [1, 2.5]], "n": {"deep": "v"}}
    assert [type(key) for key in encoded["rawInput"]] == [str, str]
    assert type(encoded["rawInput"]["k"][0]) is str and type(encoded["rawInput"]["n"]["deep"]) is str
    with pytest.raises(TypeError):
        acp.ToolCallUpdate(tool_call_id="t", raw_input={"when": object()}).to_dict()


def test_encoding_copies_lists_and_objects_so_changing_the_output_leaves_the_value():
    update = acp.decode("ToolCallUpdate", {"toolCallId": "t", "_meta": {"a": [1]}, "zeta": {"b": 2}})
    encoded = update.to_dict()
    encoded["_meta"]["a"].append(2)
    encoded["zeta"]["b"] = 3
    assert update.meta == {"a": [1]} and update.unknown_properties == {"zeta": {"b": 2}}


def test_json_numbers_keep_their_python_type():
    assert round_trip("UsageUpdate", {"used": 2.0, "size": 6.2e16}, strict=True).size == 6.2e16
    assert type(acp.UsageUpdate.from_json('{"used": 2.0, "size": 3}').used) is float
    assert acp.UsageUpdate.from_json('{"used": 2.0, "size": 6.2e16}').to_json() == '{"used":2.0,"size":6.2e+16}'
    assert round_trip("Cost", {"amount": 2, "currency": "USD"}).amount == 2


def test_integral_floats_of_integer_enums_are_members_or_stay_floats():
    """JSON Schema's -32700.0 is the integer -32700: the member, whose value is an int (the one
    number a member cannot keep); an unknown code stays the float it came as, like plain integers."""
    assert acp.decode("ErrorCode", -32700.0, strict=True) is acp.ErrorCode.PARSE_ERROR
    assert round_trip("Error", {"code": 7.0, "message": "m"}, strict=True).code == 7
    assert type(acp.decode("ErrorCode", 7.0, strict=True)) is float
    assert rejection("ErrorCode", 7.5).path == "$"
    assert rejection("ErrorCode", 2.0**31).expected == f"integer <= {2**31 - 1}"


def test_from_dict_and_decode_build_a_subclass_they_are_given():
    class MyUpdate(acp.ToolCallUpdate):
        pass

    value = {"toolCallId": "t", "kind": "read"}
    assert type(MyUpdate.from_dict(value)) is MyUpdate
    assert type(MyUpdate.from_json(json.dumps(value), strict=True)) is MyUpdate
    assert type(acp.decode(MyUpdate, value)) is MyUpdate
    assert_json_identical(MyUpdate.from_dict(value).to_dict(), value, ordered=True)


def test_decoding_makes_instances_as_pickle_does_without_init():
    class Counted(acp.ToolCallUpdate):
        def __init__(self, **values):
            raise AssertionError("decoding called __init__")

    value = {"toolCallId": "t", "kind": "read", "x-extra": 1}
    decoded = Counted.from_dict(value)
    assert (decoded.tool_call_id, decoded.kind, decoded.title, decoded.unknown_properties) == (
        "t",
        acp.ToolKind.READ,
        UNDEFINED,
        {"x-extra": 1},
    )
    assert_json_identical(decoded.to_dict(), value, ordered=True)


def test_decode_by_type_runs_that_types_own_decoder():
    assert acp.decode(acp.ToolKind, "edit") is acp.ToolKind.EDIT
    assert (
        type(acp.decode(acp.SessionUpdateToolCallUpdate, {"sessionUpdate": "tool_call_update", "toolCallId": "t"}))
        is acp.SessionUpdateToolCallUpdate
    )
    assert acp.decode("SessionId", "abc") == "abc"
    assert rejection("RequestId", True).expected.startswith("RequestId:")


def test_decode_by_an_alias_object_several_types_share_asks_for_the_name():
    """Aliases are plain type aliases (`SessionId` is `str`), so their object says not which."""
    with pytest.raises(TypeError) as caught:
        acp.decode(acp.RequestId, 7)
    message = str(caught.value)
    assert "RequestId" in message and "AgentResponseErrorId" in message and "decode('RequestId', data)" in message
    with pytest.raises(TypeError) as caught:
        acp.decode(acp.SessionId, "abc")
    assert "SessionId" in str(caught.value) and "ToolCallId" in str(caught.value)


# --- limits ------------------------------------------------------------------


def test_integers_past_pythons_digit_limit_are_a_decode_error_or_a_value():
    digits = "9" * 5000
    with pytest.raises(DecodeError) as caught:
        acp.UsageUpdate.from_json(f'{{"used": {digits}, "size": 1}}')
    assert caught.value.path == "$"
    huge = 10**5000
    error = rejection("UsageUpdate", {"used": huge, "size": 1})
    assert (error.path, str(error)) == (
        "$.used",
        f"$.used: expected integer <= {2**64 - 1}, found integer too large to print",
    )
    assert "too large to print" in str(rejection("UsageUpdate", {"used": [huge], "size": 1}))
    assert acp.decode("ToolCallUpdate", {"toolCallId": "t", "rawInput": huge}).raw_input == huge


def test_numbers_too_large_for_a_float_are_a_decode_error():
    with pytest.raises(DecodeError) as caught:
        acp.Cost.from_json('{"amount": 1e400, "currency": "USD"}')
    assert caught.value.path == "$"
    with pytest.raises(DecodeError):
        acp.ToolCallUpdate.from_json('{"toolCallId": "t", "rawInput": [-1e400]}')
    assert rejection("Cost", {"amount": float("inf"), "currency": "USD"}).path == "$.amount"


def test_decode_errors_and_salvage_reports_survive_pickle():
    error = rejection("UpdateSessionNotification", note({"sessionUpdate": "tool_call_update"}))
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.path, again.expected, again.found, str(again)) == (
        DecodeError,
        error.path,
        error.expected,
        error.found,
        str(error),
    )
    envelope = DecodeError("$.jsonrpc", '"2.0"', "1.0", code=-32600)
    assert pickle.loads(pickle.dumps(envelope)).code == -32600
    reports = []
    acp.decode("ToolCallUpdate", {"toolCallId": "t", "kind": 5}, on_salvage=reports.append)
    report = pickle.loads(pickle.dumps(reports[0]))
    assert (report.path, report.reason, str(report.error)) == (
        reports[0].path,
        reports[0].reason,
        str(reports[0].error),
    )


def test_values_are_not_shared_between_instances_or_with_the_input():
    first, second = acp.ToolCallUpdate(tool_call_id="a"), acp.ToolCallUpdate(tool_call_id="b")
    first.unknown_properties["x"] = 1
    assert second.unknown_properties == {}
    decoded = [acp.decode("ToolCallUpdate", {"toolCallId": "t"}) for _ in range(2)]
    assert decoded[0].unknown_properties is not decoded[1].unknown_properties
    started = [acp.merge(None, acp.ToolCallUpdate(tool_call_id="t")) for _ in range(2)]
    assert started[0].content == [] and started[0].content is not started[1].content
    meta = {"a": [1]}
    builder = acp.ToolCallUpdate.builder(tool_call_id="t").meta(meta)
    built = [builder.build(), builder.build()]
    meta["a"].append(2)
    assert built[0].meta == built[1].meta == {"a": [1]} and built[0].meta is not built[1].meta


@pytest.fixture(scope="module")
def recursive_pkg(tmp_path_factory: pytest.TempPathFactory):
    """Generated from tests/fixtures/recursive.json: Node = Pair | Box | integer, both objects holding a Node."""
    out = tmp_path_factory.mktemp("recursive")
    generate_package(FIXTURES / "recursive.json", out, "recursive_pkg")
    return import_package(out, "recursive_pkg")


def nested(depth: int, leaf: object) -> object:
    for _ in range(depth):
        leaf = {"inner": leaf}
    return leaf


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("leaf", [7, "not a node"])
def test_recursive_untagged_unions_decode_each_value_once_per_variant(recursive_pkg, monkeypatch, strict, leaf):
    """Pair fails only after decoding `inner`, then Box decodes it again: without
    memory that is 2**depth decodings (4**depth when lenient probes first)."""
    codec = importlib.import_module("recursive_pkg._codec")
    calls = []
    decode_pair = codec._decode_Pair
    monkeypatch.setattr(codec, "_decode_Pair", lambda *args: calls.append(1) or decode_pair(*args))
    depth = 20
    if isinstance(leaf, str):
        with pytest.raises(recursive_pkg.DecodeError):
            recursive_pkg.decode("Node", nested(depth, leaf), strict=strict)
    else:
        decoded = recursive_pkg.decode("Node", nested(depth, leaf), strict=strict)
        assert_json_identical(recursive_pkg.encode(decoded), nested(depth, leaf))
    assert len(calls) <= 2 * (depth + 1)  # each value at most once strictly and once leniently


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
    assert caught.value.expected == "string matching '^[A-Z]{3}\\\\Z'"  # ECMA-262 `$` in Python syntax


def test_unknown_tags_of_closed_unions_list_the_known_ones(rules_pkg):
    with pytest.raises(rules_pkg.DecodeError) as caught:
        rules_pkg.decode("Pet", {"species": "fish"})
    assert (caught.value.path, caught.value.expected) == ("$.species", "one of 'cat', 'dog'")
    assert_json_identical(
        rules_pkg.encode(rules_pkg.decode("Pet", {"species": "cat", "lives": 9})), {"species": "cat", "lives": 9}
    )


def test_paths_index_into_arrays():
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "ok"}},
            {"type": "content", "content": {"type": "text", "text": 3}},
        ],
    }
    assert rejection("UpdateSessionNotification", note(update)).path == "$.update.content[1].content.text"


# --- lenient decoding and its reports ----------------------------------------


def test_default_on_error_salvages_and_reports(caplog):
    reports = []
    with caplog.at_level(logging.WARNING, logger="acp_runtime"):
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


# --- unions where the tag does not decide, oneOf ---------------------------------


def test_titled_multi_select_items_are_not_taken_by_the_tagged_string_variant():
    """ACP 2.4.0: `type: "string"` picks the tagged variant, which needs `enum`; the
    untagged `titled` variant accepts the value, so the anyOf does."""
    value = {"type": "string", "anyOf": [{"const": "a", "title": "A"}]}
    for strict in (True, False):
        decoded = acp.decode("MultiSelectItems", value, strict=strict)
        assert isinstance(decoded, acp.TitledMultiSelectItems)
        assert_json_identical(json.loads(json.dumps(acp.encode(decoded))), value)


def test_a_value_no_variant_accepts_reports_the_tagged_variant_error():
    error = rejection("MultiSelectItems", {"type": "string"})
    assert error.path == "$.enum"


def test_a_value_matching_two_one_of_variants_is_rejected():
    scope = {"sessionId": "s1", "requestId": 1}
    error = rejection("ElicitationFormModeVariant", scope)
    assert "oneOf" in error.expected
    assert acp.decode("ElicitationFormModeVariant", {"sessionId": "s1"}, strict=True)


def test_a_check_beside_the_type_is_salvaged_like_the_type_in_lenient_mode(tmp_path):
    schema = tmp_path / "schema.json"
    tags = {"type": "array", "items": {"type": "string"}, "maxItems": 1, "x-deserialize-default-on-error": True}
    schema.write_text(json.dumps({"$defs": {"Item": {"type": "object", "properties": {"tags": tags}}}}))
    package = import_package(generate_package(schema, tmp_path, "checked_pkg").parent, "checked_pkg")
    reports = []
    item = package.decode("Item", {"tags": ["a", "b"]}, on_salvage=reports.append)
    assert item.tags is package.UNDEFINED and [report.path for report in reports] == ["$.tags"]
    with pytest.raises(package.DecodeError):
        package.decode("Item", {"tags": ["a", "b"]}, strict=True)
