"""JSON-RPC methods from x-method/x-side and the envelopes that carry the types."""

from __future__ import annotations

import pytest

from generator.errors import GenerationError
from generator.ir import routes
from generator.ir.model import Method, Route
from generator.schema.load import Node
from tests.support.helpers import error_for, ir_of

OBJECT = {"type": "object", "properties": {"a": {"type": "string"}}}


def rpc_schema(**extra_defs: dict) -> dict:
    """Request/response/notification types and the envelopes that carry them."""
    return {
        "anyOf": [{"$ref": "#/$defs/AgentOutgoing"}, {"type": "array"}],
        "$defs": {
            "PingRequest": {**OBJECT, "x-method": "session/ping", "x-side": "agent"},
            "PingResponse": {**OBJECT, "x-method": "session/ping", "x-side": "agent"},
            "Note": {**OBJECT, "x-method": "note", "x-side": "client"},
            "RequestId": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "Error": {"type": "object", "properties": {"code": {"type": "integer"}}},
            "AgentIncoming": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "id": {"$ref": "#/$defs/RequestId"},
                            "method": {"type": "string"},
                            "params": {"anyOf": [{"$ref": "#/$defs/PingRequest"}]},
                        },
                    },
                    {
                        "type": "object",
                        "properties": {"method": {"type": "string"}, "params": {"$ref": "#/$defs/Note"}},
                    },
                ]
            },
            "AgentOutgoing": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"id": {"$ref": "#/$defs/RequestId"}, "result": {"$ref": "#/$defs/PingResponse"}},
                    },
                    {
                        "type": "object",
                        "properties": {"id": {"$ref": "#/$defs/RequestId"}, "error": {"$ref": "#/$defs/Error"}},
                    },
                ]
            },
            **extra_defs,
        },
    }


def test_route_is_read_from_x_method_and_x_side():
    assert routes.route(Node("#", {"type": "object"})) is None
    assert routes.route(Node("#", {"x-method": "a/b", "x-side": "agent"})) == Route(method="a/b", side="agent")


@pytest.mark.parametrize("schema", [{"x-method": "a/b"}, {"x-side": "agent"}, {"x-method": 1, "x-side": "agent"}])
def test_a_route_needs_both_strings(schema):
    with pytest.raises(GenerationError, match="x-method and x-side must both be strings") as caught:
        routes.route(Node("#/$defs/A", schema))
    assert caught.value.pointer == "#/$defs/A"


def test_envelopes_make_requests_with_their_response_and_notifications(tmp_path):
    module = ir_of(rpc_schema(), tmp_path)
    assert module.methods == (
        Method("session/ping", "SESSION_PING", "session_ping", "agent", "request", "PingRequest", "PingResponse"),
        Method("note", "NOTE", "note", "client", "notification", "Note"),
    )
    assert (module.request_id, module.rpc_error, module.batches) == ("RequestId", "Error", True)
    assert module.warnings == ()


def test_a_type_with_x_method_that_no_envelope_carries_is_a_warning(tmp_path):
    module = ir_of(rpc_schema(Lost={**OBJECT, "x-method": "lost", "x-side": "agent"}), tmp_path)
    (warning,) = module.warnings
    assert (warning.code, warning.subject) == ("unrouted-method", "Lost")
    assert warning.text == "Lost (#/$defs/Lost): has x-method but no JSON-RPC envelope carries it"


def test_a_request_without_a_response_type_is_an_error(tmp_path):
    schema = rpc_schema()
    del schema["$defs"]["PingResponse"]["x-method"], schema["$defs"]["PingResponse"]["x-side"]
    error = error_for(schema, tmp_path)
    assert error.pointer == "#/$defs/PingRequest" and "request 'session/ping' has no response type" in error.message


def test_a_schema_without_envelopes_has_no_methods_and_no_batches(tmp_path):
    module = ir_of({"$defs": {"A": OBJECT}}, tmp_path)
    assert (module.methods, module.request_id, module.rpc_error, module.batches) == ((), None, None, False)
