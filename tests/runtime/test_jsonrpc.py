"""generator/runtime/_jsonrpc.py on its own: envelopes read and written for hand-written message
classes and one route per kind ("add" request, "log" notification), and the pending-request
table. The routes of a real schema are tested in tests/package/test_rpc.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from generator.runtime import _jsonrpc as rpc
from generator.runtime import _runtime as rt


@dataclass(slots=True, kw_only=True)
class Request:
    id: int | str
    method: str
    params: Any = rt.UNDEFINED
    unknown_properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Notification:
    method: str
    params: Any = rt.UNDEFINED
    unknown_properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ErrorObject:
    code: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


@dataclass(slots=True, kw_only=True)
class Response:
    id: int | str | None
    result: Any = rt.UNDEFINED
    error: ErrorObject | rt.Undefined = rt.UNDEFINED
    unknown_properties: dict[str, Any] = field(default_factory=dict)


def decode_numbers(value: Any, ctx: rt.Context, path: rt.Path) -> list[int]:
    if type(value) is not list or any(type(item) is not int for item in value):
        raise rt.DecodeError(path, "a list of integers", value)
    return value


def decode_sum(value: Any, ctx: rt.Context, path: rt.Path) -> int:
    if type(value) is not int:
        raise rt.DecodeError(path, "integer", value)
    return value


def decode_id(value: Any, ctx: rt.Context, path: rt.Path) -> int | str:
    if type(value) not in (int, str):
        raise rt.DecodeError(path, "a string or an integer", value)
    return value  # type: ignore[no-any-return]


def decode_error(value: Any, ctx: rt.Context, path: rt.Path) -> ErrorObject:
    return ErrorObject(code=value["code"], message=value["message"])


ADD = rpc.RequestRoute("add", "server", list, int, decode_numbers, decode_sum)
LOG = rpc.NotificationRoute("log", "client", str, lambda value, ctx, path: value)
ENVELOPES = rpc.Envelopes(
    request=Request,
    notification=Notification,
    response=Response,
    request_lookup={None: {"add": ADD}, "server": {"add": ADD}, "client": {}},
    notification_lookup={None: {"log": LOG}, "server": {}, "client": {"log": LOG}},
    decode_id=decode_id,
    decode_error=decode_error,
    batches=False,
)


def decode(data: Any, side: str | None = None, strict: bool = False) -> Any:
    return ENVELOPES.decode_message(data, side, strict, None)


def test_a_request_a_notification_and_a_response_decode_to_the_packages_classes():
    assert decode({"jsonrpc": "2.0", "id": 1, "method": "add", "params": [1, 2], "x": 1}) == Request(
        id=1, method="add", params=[1, 2], unknown_properties={"x": 1}
    )
    assert decode({"jsonrpc": "2.0", "method": "log", "params": "hi"}) == Notification(method="log", params="hi")
    assert decode({"jsonrpc": "2.0", "id": "a", "result": 3}) == Response(id="a", result=3)
    error = decode({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}})
    assert error == Response(id=None, error=ErrorObject(code=-32600, message="no"))


@pytest.mark.parametrize(
    ("data", "code", "path"),
    [
        ([], -32600, "$"),
        ("x", -32600, "$"),
        ({"id": 1, "method": "add", "params": []}, -32600, "$.jsonrpc"),
        ({"jsonrpc": "2.0", "id": None, "method": "add", "params": []}, -32600, "$.id"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "add", "params": []}, -32600, "$.id"),
        ({"jsonrpc": "2.0", "id": 1, "method": 7}, -32600, "$.method"),
        ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}, -32600, "$"),
        ({"jsonrpc": "2.0", "id": 1}, -32600, "$"),
        ({"jsonrpc": "2.0", "id": 1, "method": "teleport"}, -32601, "$.method"),
        ({"jsonrpc": "2.0", "id": 1, "method": "add", "params": ["x"]}, -32602, "$.params"),
        ({"jsonrpc": "2.0", "id": 1, "method": "add"}, -32602, "$.params"),
    ],
    ids=[
        "batch",
        "not-an-object",
        "no-jsonrpc",
        "null-id",
        "float-id",
        "method-type",
        "result-and-error",
        "neither",
        "unknown-method",
        "bad-params",
        "missing-params-checked-as-empty",
    ],
)
def test_a_bad_envelope_is_a_decode_error_with_the_code_to_answer_with(data, code, path):
    with pytest.raises(rt.DecodeError) as caught:
        decode(data)
    assert (caught.value.code, caught.value.path) == (code, path)


def test_an_unknown_method_is_method_not_found_naming_it():
    with pytest.raises(rpc.MethodNotFound) as caught:
        decode({"jsonrpc": "2.0", "method": "teleport"})
    assert (caught.value.message, caught.value.data) == ('"Method not found": teleport', {"method": "teleport"})


def test_the_side_restricts_the_lookup_and_extensions_keep_raw_params():
    with pytest.raises(rpc.MethodNotFound):
        decode({"jsonrpc": "2.0", "id": 1, "method": "add", "params": []}, side="client")
    with pytest.raises(ValueError, match="unknown side 'editor'"):
        decode({"jsonrpc": "2.0", "id": 1, "method": "add", "params": []}, side="editor")
    assert decode({"jsonrpc": "2.0", "id": 1, "method": "_x/y", "params": {"a": 1}}).params == {"a": 1}


def decode_settings(value: Any, ctx: rt.Context, path: rt.Path) -> dict[str, int]:
    if type(value) is not dict:
        raise rt.DecodeError(path, "object", value)
    if type(value.get("level")) is not int:
        raise rt.DecodeError((path, "level"), "integer", value.get("level", rt.MISSING))
    return value


CONFIGURE = rpc.RequestRoute("configure", "server", dict, dict, decode_settings, lambda value, ctx, path: value)
CHANGED = rpc.NotificationRoute("changed", "client", dict, decode_settings)
WITH_OBJECTS = rpc.Envelopes(
    request=Request,
    notification=Notification,
    response=Response,
    request_lookup={None: {"configure": CONFIGURE}, "server": {"configure": CONFIGURE}, "client": {}},
    notification_lookup={None: {"changed": CHANGED}, "server": {}, "client": {"changed": CHANGED}},
    decode_id=decode_id,
    decode_error=decode_error,
    batches=False,
)


def outcome(decode: Any, data: Any) -> Any:
    """What decoding `data` gives: the message, or the error's kind, code, path and text."""
    try:
        return decode(data)
    except rt.DecodeError as error:
        return type(error), error.code, error.path, str(error)


@pytest.mark.parametrize(
    "data",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "configure", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": "a", "method": "configure", "params": {"level": 2}},
        {"jsonrpc": "2.0", "method": "changed", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": 1, "method": "configure", "params": {"level": 2}, "x": 1},
        {"jsonrpc": "2.0", "id": 1.5, "method": "configure", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": None, "method": "configure", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": [1], "method": "configure", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": 1, "method": "configure", "params": {"level": "high"}},
        {"jsonrpc": "2.0", "id": 1, "method": "configure", "params": None},
        {"jsonrpc": "2.0", "id": 1, "method": "configure", "params": [2]},
        {"jsonrpc": "2.0", "id": 1, "method": "changed", "params": {"level": 2}},
        {"jsonrpc": "2.0", "method": "configure", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": 1, "method": "teleport", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "_x/y", "params": {"a": 1}},
        {"jsonrpc": "2.0", "method": "_x/y", "params": {"a": 1}},
        {"jsonrpc": "1.0", "method": "changed", "params": {"level": 2}},
        {"jsonrpc": "2.0", "id": 1, "result": {"level": 2}, "method": "configure"},
        {"jsonrpc": "2.0", "method": 7, "params": {}},
        {"jsonrpc": "2.0", "id": 1, "result": 3},
        ["not", "an", "object"],
    ],
)
@pytest.mark.parametrize("side", ["server", "client", None])
@pytest.mark.parametrize("strict", [False, True])
def test_a_connections_decoder_reads_every_message_as_decode_message_does(data, side, strict):
    """`decoder` reads the common shapes (exactly `jsonrpc`, `method`, object `params`, and `id`)
    of the side's own methods without the generic path: with the same message, or the same error."""
    decoder = WITH_OBJECTS.decoder(side, strict, None)
    assert outcome(decoder, data) == outcome(lambda value: WITH_OBJECTS.decode_message(value, side, strict, None), data)


def test_a_decoder_for_an_unknown_side_is_refused_when_it_is_made():
    with pytest.raises(ValueError, match="unknown side 'editor'"):
        WITH_OBJECTS.decoder("editor", False, None)


def test_encode_writes_the_envelope_back_in_plain_json_types():
    class Id(str):
        pass

    request = Request(id=Id("r"), method="add", params=[1], unknown_properties={"x": True})
    encoded = ENVELOPES.encode_message(request)
    assert encoded == {"jsonrpc": "2.0", "id": "r", "method": "add", "params": [1], "x": True}
    assert type(encoded["id"]) is str
    assert ENVELOPES.encode_message(Notification(method="log")) == {"jsonrpc": "2.0", "method": "log"}
    error = Response(id=None, error=ErrorObject(code=-32700, message="Parse error"))
    assert ENVELOPES.encode_message(error) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


def test_pending_requests_allocate_ids_keep_their_json_type_and_type_the_result():
    pending: rpc.PendingRequests[Request, Response] = rpc.PendingRequests(ENVELOPES, side="server")
    first = pending.request("add", [1, 2])
    assert (first.id, len(pending)) == (0, 1)
    pending.track(Request(id="0", method="add"))  # "0" is not 0
    with pytest.raises(ValueError, match="still pending"):
        pending.track(Request(id=0, method="add"))
    with pytest.raises(rt.DecodeError, match="expected integer"):
        pending.resolve({"jsonrpc": "2.0", "id": "0", "result": "three"})
    assert "0" not in pending  # forgotten even though its result did not decode
    assert pending.resolve({"jsonrpc": "2.0", "id": 0, "result": 3}) == Response(id=0, result=3)
    with pytest.raises(rt.DecodeError, match="the id of a pending request"):
        pending.resolve(Response(id=0, result=3))
