"""JSON-RPC routing: method tables from x-method/x-side, typed messages both ways."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings

from generator.config import load_config
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA, assert_json_identical, import_package
from tests.support.strategies import Strategies

acp = import_package(ROOT / "generated", "acp_v2")
DEFS = json.loads(V2_SCHEMA.read_text())["$defs"]
MODULE = build_ir(V2_SCHEMA, "acp_v2", ROOT, load_config(ROOT).options)
STRATEGIES = Strategies(MODULE)
SETTINGS = settings(max_examples=10, deadline=None, database=None)


def test_every_type_with_x_method_has_a_route_and_every_route_has_one():
    with_method = {name for name, schema in DEFS.items() if "x-method" in schema}
    tables = {
        (side, method)
        for table in (acp.REQUESTS, acp.NOTIFICATIONS)
        for side, routes in table.items()
        for method in routes
    }
    declared = {(schema["x-side"], schema["x-method"]) for schema in DEFS.values() if "x-method" in schema}
    assert tables == declared
    routed = {m.params for m in MODULE.methods} | {m.result for m in MODULE.methods if m.result}
    assert routed == with_method


def test_routes_carry_the_side_and_types():
    route = acp.REQUESTS["agent"][acp.Methods.SESSION_PROMPT]
    assert (route.method, route.side, route.params, route.result) == (
        "session/prompt",
        "agent",
        acp.PromptRequest,
        acp.PromptResponse,
    )
    assert acp.NOTIFICATIONS["client"]["session/update"].params is acp.UpdateSessionNotification
    with pytest.raises(TypeError):
        acp.REQUESTS["agent"]["x"] = route  # read-only


METHODS = sorted((m.side, m.kind, m.name, m.params, m.result) for m in MODULE.methods)


@pytest.mark.parametrize(("side", "kind", "method", "params", "result"), METHODS)
def test_every_routed_method_round_trips(side, kind, method, params, result):
    @SETTINGS
    @given(STRATEGIES.named(params), STRATEGIES.named(result) if result else STRATEGIES.named(params))
    def round_trip(params_json, result_json):
        if kind == "request":
            wire = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params_json}
        else:
            wire = {"jsonrpc": "2.0", "method": method, "params": params_json}
        message = acp.decode_message(wire, side=side, strict=True)
        assert_json_identical(acp.encode_message(message), wire)
        if kind == "request":
            pending = acp.PendingRequests()
            pending.track(message)
            response = pending.resolve({"jsonrpc": "2.0", "id": 7, "result": result_json}, strict=True)
            assert_json_identical(acp.encode(response.result), result_json)
            assert len(pending) == 0

    round_trip()


def test_a_request_built_with_a_builder_round_trips():
    params = acp.PromptRequest.builder(session_id="s", prompt=[acp.ContentBlockText(text="hi")]).build()
    message = acp.Request(id="r-1", method=acp.Methods.SESSION_PROMPT, params=params)
    wire = acp.encode_message(message)
    assert wire == {
        "jsonrpc": "2.0",
        "id": "r-1",
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
    }
    assert acp.decode_message(wire) == message
    assert_json_identical(acp.encode_message(acp.decode_message(wire, strict=True)), wire, ordered=True)


def test_ids_keep_their_json_type():
    pending = acp.PendingRequests()
    pending.track(acp.Request(id=1, method="session/close", params=acp.CloseSessionRequest(session_id="s")))
    with pytest.raises(acp.DecodeError, match=r"\$\.id"):
        pending.resolve({"jsonrpc": "2.0", "id": "1", "result": {}})
    assert pending.resolve({"jsonrpc": "2.0", "id": 1, "result": {}}).id == 1


def test_result_errors_name_the_result_path():
    pending = acp.PendingRequests()
    pending.track(acp.Request(id=1, method="session/prompt"))
    with pytest.raises(acp.DecodeError) as caught:
        pending.resolve({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}, strict=True)
    assert caught.value.path.startswith("$.result.")


def test_error_responses_are_typed_and_may_have_a_null_id():
    response = acp.decode_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    assert response.id is None and response.error.code is acp.ErrorCode.PARSE_ERROR
    assert acp.encode_message(response) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


def test_extension_methods_keep_raw_params():
    wire = {"jsonrpc": "2.0", "id": 3, "method": "_zed/ping", "params": {"any": ["thing"]}}
    message = acp.decode_message(wire)
    assert message.params == {"any": ["thing"]}
    assert_json_identical(acp.encode_message(message), wire)
    note = {"jsonrpc": "2.0", "method": "_zed/event"}
    assert_json_identical(acp.encode_message(acp.decode_message(note)), note)
    assert acp.decode_result("_zed/ping", [1, 2]) == [1, 2]


def test_ids_methods_and_undeclared_properties_encode_as_plain_json_types():
    class Label(str):
        pass

    message = acp.Request(id=Label("r1"), method=Label("_zed/ping"), params={}, unknown_properties={"x": Label("y")})
    wire = acp.encode_message(message)
    assert wire == {"jsonrpc": "2.0", "id": "r1", "method": "_zed/ping", "params": {}, "x": "y"}
    assert {type(wire[key]) for key in ("id", "method", "x")} == {str}


def test_an_unknown_method_names_it_and_turns_into_method_not_found():
    with pytest.raises(acp.MethodNotFound) as caught:
        acp.decode_message({"jsonrpc": "2.0", "id": 9, "method": "session/teleport", "params": {}})
    error = caught.value
    assert isinstance(error, acp.DecodeError) and error.method == "session/teleport" and error.path == "$.method"
    assert "session/teleport" in str(error)
    assert error.code == -32601
    assert acp.encode_message(acp.RequestError.from_decode_error(error).response(9)) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {
            "code": -32601,
            "message": '"Method not found": session/teleport',
            "data": {"method": "session/teleport"},
        },
    }


def test_cancel_request_is_a_method_of_either_side():
    wire = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}}
    for side in ("agent", "client"):
        assert acp.decode_message(wire, side=side).params == acp.CancelRequestNotification(request_id=3)


@pytest.mark.parametrize("params", [{}, {"params": None}], ids=["missing", "null"])
def test_missing_or_null_params_are_checked_as_an_empty_object(params):
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode_message({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", **params})
    assert caught.value.code == -32602 and caught.value.path.startswith("$.params")
    response = acp.encode_message(acp.RequestError.from_decode_error(caught.value).response(1))
    assert response["error"]["code"] == -32602 and response["error"]["data"]["path"] == caught.value.path
    assert acp.decode_message({"jsonrpc": "2.0", "id": 1, "method": "session/list", **params}).params == params.get(
        "params", acp.UNDEFINED
    )


def test_decode_errors_carry_the_json_rpc_code_to_answer_with():
    with pytest.raises(acp.DecodeError) as envelope:
        acp.decode_message({"jsonrpc": "1.0", "id": 4, "method": "session/list"})
    assert envelope.value.code == -32600
    assert acp.encode_message(acp.RequestError.from_decode_error(envelope.value).response(None))["id"] is None
    with pytest.raises(acp.DecodeError) as params:
        acp.decode_message({"jsonrpc": "2.0", "id": 4, "method": "session/close", "params": {"sessionId": 7}})
    assert params.value.code == -32602
    assert params.value.data == {
        "path": "$.params.sessionId",
        "expected": params.value.expected,
        "found": "integer 7",
    }


def test_pending_requests_allocate_ids_refuse_duplicates_and_forget_answers():
    pending = acp.PendingRequests(side="agent")
    first, second = pending.request("session/list"), pending.request("session/list")
    assert (first.id, second.id, len(pending)) == (0, 1, 2)
    with pytest.raises(ValueError, match="still pending"):
        pending.track(acp.Request(id=1, method="session/close"))
    pending.track(acp.Request(id="1", method="session/close"))  # "1" is not 1
    response = pending.resolve({"jsonrpc": "2.0", "id": 0, "result": {"sessions": []}})
    assert isinstance(response.result, acp.ListSessionsResponse) and 0 not in pending
    pending.discard(1)
    pending.discard(1)
    assert len(pending) == 1 and "1" in pending
    assert pending.request("session/list").id == 2


def test_method_not_found_survives_pickle():
    with pytest.raises(acp.MethodNotFound) as caught:
        acp.decode_message({"jsonrpc": "2.0", "id": 9, "method": "session/teleport", "params": {}})
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is acp.MethodNotFound and again.code == -32601
    assert (again.path, again.method, again.expected, str(again)) == (
        "$.method",
        "session/teleport",
        caught.value.expected,
        str(caught.value),
    )
    assert (again.message, again.data) == (caught.value.message, caught.value.data)


def test_the_side_restricts_the_lookup():
    wire = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]},
    }
    assert isinstance(acp.decode_message(wire, side="agent").params, acp.PromptRequest)
    with pytest.raises(acp.MethodNotFound):
        acp.decode_message(wire, side="client")


@pytest.mark.parametrize(
    ("wire", "path"),
    [
        ({"id": 1, "method": "session/close", "params": {"sessionId": "s"}}, "$.jsonrpc"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "$.jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, "$"),
        ({"jsonrpc": "2.0", "id": None, "method": "session/close", "params": {"sessionId": "s"}}, "$.id"),
        ({"jsonrpc": "2.0", "id": True, "method": "session/close", "params": {"sessionId": "s"}}, "$.id"),
        ({"jsonrpc": "2.0", "method": 5}, "$.method"),
        ({"jsonrpc": "2.0", "id": 1}, "$"),
        ({"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": {"sessionId": 5}}, "$.params.sessionId"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "$.error.code"),
        ([{"jsonrpc": "2.0", "method": "session/cancel"}], "$"),
        ("not an object", "$"),
    ],
)
def test_malformed_envelopes_are_decode_errors_with_a_path(wire, path):
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode_message(wire, strict=True)
    assert caught.value.path == path


@pytest.mark.parametrize(
    ("lookup", "table"),
    [(acp.rpc._ENVELOPES.request_lookup, acp.REQUESTS), (acp.rpc._ENVELOPES.notification_lookup, acp.NOTIFICATIONS)],
    ids=["requests", "notifications"],
)
def test_routing_is_one_lookup_that_searches_the_side_then_the_shared_sides(lookup, table):
    """The lookup tables give what searching the side's table, then the shared sides'
    (without a side: every side in order), gives."""
    methods = {method for routes in table.values() for method in routes} | {"no/such"}
    for side in [None, *table]:
        sides = list(table) if side is None else [side, *acp.rpc.SHARED_SIDES]
        for method in methods:
            expected = next((table[name][method] for name in sides if method in table[name]), None)
            assert lookup[side].get(method) is expected
    assert set(lookup) == {None, *table}
    with pytest.raises(ValueError, match="unknown side 'nobody'"):
        acp.decode_message({"jsonrpc": "2.0", "method": "session/cancel"}, side="nobody")
