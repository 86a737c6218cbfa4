"""JSON-RPC 2.0 machinery every package with methods shares: routes, the `Notification` class,
reading an envelope into the package's typed `Request`, `Notification` or `Response`, writing
one back, and the table of requests sent and not yet answered. What depends on the schema (the
request and response classes, whose id and error are the schema's types, the route tables, the
decoders of the request id and of the error object) the package's `_routes` module gives as
`Envelopes`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from . import _runtime as _rt
from ._runtime import UNDEFINED, DecodeError, Undefined

JSONRPC_VERSION: Final = "2.0"
_ENVELOPE_KEYS: Final = frozenset(["jsonrpc", "id", "method", "params", "result", "error"])
_VERSION_PATH: Final[_rt.Path] = (_rt.ROOT, "jsonrpc")
_ID_PATH: Final[_rt.Path] = (_rt.ROOT, "id")
_METHOD_PATH: Final[_rt.Path] = (_rt.ROOT, "method")
_PARAMS_PATH: Final[_rt.Path] = (_rt.ROOT, "params")
_ERROR_PATH: Final[_rt.Path] = (_rt.ROOT, "error")


@dataclass(frozen=True)
class RequestRoute:
    """A request method: the side that handles it, its params and result types."""

    method: str
    side: str
    params: Any
    result: Any
    decode_params: _rt.Decoder[Any] = field(repr=False)
    decode_result: _rt.Decoder[Any] = field(repr=False)


@dataclass(frozen=True)
class NotificationRoute:
    """A notification method: the side that handles it and its params type."""

    method: str
    side: str
    params: Any
    decode_params: _rt.Decoder[Any] = field(repr=False)


@dataclass(slots=True, kw_only=True)
class Notification:
    """A JSON-RPC notification; `params` is typed (raw JSON for `_` extension methods)."""

    method: str
    params: Any = UNDEFINED
    unknown_properties: dict[str, Any] = field(default_factory=dict)


class MethodNotFound(DecodeError):
    """A method that is neither in the schema nor an extension (`_...`)."""

    def __init__(self, path: _rt.Path | str, method: str) -> None:
        expected = "a method of the schema or an extension method starting with '_'"
        super().__init__(path, expected, method, code=_rt.METHOD_NOT_FOUND)
        self.method = method

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.path, self.method)

    @property
    def message(self) -> str:
        return f'"Method not found": {self.method}'  # the TypeScript SDK's wording

    @property
    def data(self) -> dict[str, Any]:
        return {"method": self.method}


def _routes(lookup: Mapping[str | None, Mapping[str, Any]], side: str | None) -> Mapping[str, Any]:
    routes = lookup.get(side)
    if routes is None:
        raise ValueError(f"unknown side {side!r}: one of {sorted(name for name in lookup if name is not None)}")
    return routes


def _route(
    lookup: Mapping[str | None, Mapping[str, Any]], method: str, side: str | None, path: _rt.Path = _METHOD_PATH
) -> Any:
    route = _routes(lookup, side).get(method)
    if route is None:
        raise MethodNotFound(path, method)
    return route


def _invalid(path: _rt.Path, expected: str, found: object) -> DecodeError:
    """A malformed envelope: answered with -32600 (invalid request)."""
    return DecodeError(path, expected, found, code=_rt.INVALID_REQUEST)


def _typed_params(decode: _rt.Decoder[Any], params: Any, ctx: _rt.Context) -> Any:
    """Typed params; missing or null params are checked as `{}` (so required properties
    are reported) and kept as they came."""
    if params is UNDEFINED or params is None:
        decode({}, ctx, _PARAMS_PATH)
        return params
    return decode(params, ctx, _PARAMS_PATH)


@dataclass(frozen=True, slots=True)
class Envelopes:
    """A package's JSON-RPC messages: its message classes, its routes by side (`None`: any
    side) and the decoders of the schema's request id and error object."""

    request: type[Any]
    notification: type[Any]
    response: type[Any]
    request_lookup: Mapping[str | None, Mapping[str, RequestRoute]]
    notification_lookup: Mapping[str | None, Mapping[str, NotificationRoute]]
    decode_id: _rt.Decoder[Any]
    decode_error: _rt.Decoder[Any]
    batches: bool  # whether the schema defines batches (arrays of messages)

    def decode_message(self, data: Any, side: str | None, strict: bool, on_salvage: _rt.SalvageCallback | None) -> Any:
        """One parsed JSON-RPC object (or, with batches, an array of them) as typed messages."""
        if type(data) is list:
            if not self.batches:
                raise _invalid(_rt.ROOT, "a single JSON-RPC message (this schema defines no batches)", data)
            return [self.decode_message(item, side, strict, on_salvage) for item in data]
        # `run_decoder` inline (without its lambda): this is every received message's path.
        try:
            return self._decode_one(data, side, _rt.context(strict, on_salvage))
        except RecursionError:
            raise _rt.too_deep() from None

    def decoder(self, side: str | None, strict: bool, on_salvage: _rt.SalvageCallback | None) -> Callable[[Any], Any]:
        """`decode_message` with these options, for the many messages of one connection: a
        request or notification of a method `side` serves, with exactly `jsonrpc`, `method`,
        object `params` (and `id`), is decoded without the generic reading of its envelope
        (which would find the same); any other message by `decode_message`."""
        ctx = _rt.context(strict, on_salvage)
        requests, notifications = _routes(self.request_lookup, side), _routes(self.notification_lookup, side)
        request, notification = self.request, self.notification

        def decode(data: Any) -> Any:
            if type(data) is dict and data.get("jsonrpc") == JSONRPC_VERSION:
                method, params = data.get("method"), data.get("params")
                if type(method) is str and type(params) is dict:
                    try:
                        if len(data) == 3:  # `jsonrpc`, `method` and `params`: nothing else
                            route = notifications.get(method)
                            if route is not None:
                                params = route.decode_params(params, ctx, _PARAMS_PATH)
                                return notification(method=method, params=params, unknown_properties={})
                        elif len(data) == 4 and data.get("id") is not None:  # and `id`
                            route = requests.get(method)
                            if route is not None:
                                request_id = self._request_id(data, ctx)
                                params = route.decode_params(params, ctx, _PARAMS_PATH)
                                return request(id=request_id, method=method, params=params, unknown_properties={})
                    except RecursionError:
                        raise _rt.too_deep() from None
            return self.decode_message(data, side, strict, on_salvage)

        return decode

    def _request_id(self, data: dict[str, Any], ctx: _rt.Context, nullable: bool = False) -> Any:
        value = data.get("id", _rt.MISSING)
        if value is None and nullable:
            return None
        if value is _rt.MISSING or value is None:
            raise _invalid(_ID_PATH, "a request id (a string or an integer, not null)", value)
        try:
            return self.decode_id(value, ctx, _ID_PATH)
        except DecodeError as error:
            raise _invalid(_ID_PATH, error.expected, value) from None

    def _decode_one(self, data: Any, side: str | None, ctx: _rt.Context) -> Any:
        # Every received message's path: the route lookup and the params' decoding inline, and
        # the paths made once (`_ID_PATH`, ...), as the generated decoders do.
        if type(data) is not dict:
            raise _invalid(_rt.ROOT, "a JSON-RPC message (an object)", data)
        version = data.get("jsonrpc", _rt.MISSING)
        if version != JSONRPC_VERSION:
            raise _invalid(_VERSION_PATH, repr(JSONRPC_VERSION), version)
        unknown = (
            {}
            if _ENVELOPE_KEYS.issuperset(data)
            else {key: value for key, value in data.items() if key not in _ENVELOPE_KEYS}
        )
        method = data.get("method", _rt.MISSING)
        if method is not _rt.MISSING:
            if type(method) is not str:
                raise _invalid(_METHOD_PATH, "string", method)
            if "result" in data or "error" in data:
                raise _invalid(_rt.ROOT, "a request or notification without result or error", data)
            params = data.get("params", UNDEFINED)
            if "id" in data:
                request_id = self._request_id(data, ctx)  # before the method: a bad id is an invalid request
                if not method.startswith("_"):
                    decode = _route(self.request_lookup, method, side).decode_params
                    params = _typed_params(decode, params, ctx)
                return self.request(id=request_id, method=method, params=params, unknown_properties=unknown)
            if not method.startswith("_"):
                decode = _route(self.notification_lookup, method, side).decode_params
                params = _typed_params(decode, params, ctx)
            return self.notification(method=method, params=params, unknown_properties=unknown)
        if "result" in data and "error" in data:
            raise _invalid(_rt.ROOT, "a response with either result or error, not both", data)
        request_id = self._request_id(data, ctx, nullable="error" in data)
        if "error" in data:
            error = self.decode_error(data["error"], ctx, _ERROR_PATH)
            return self.response(id=request_id, error=error, unknown_properties=unknown)
        if "result" not in data:
            raise _invalid(_rt.ROOT, "a method (request or notification), or a result or error (response)", data)
        return self.response(id=request_id, result=data["result"], unknown_properties=unknown)

    def typed_result(
        self,
        method: str,
        result: Any,
        side: str | None,
        strict: bool,
        on_salvage: _rt.SalvageCallback | None,
        path: _rt.Path,
    ) -> Any:
        """The typed result of a response to a `method` request (raw JSON for extensions and for
        methods the schema does not define, which only `send_request` sends)."""
        route: RequestRoute | None = None if method.startswith("_") else self.request_lookup.get(None, {}).get(method)
        if route is None:  # an extension's, or a method the schema does not define
            return result
        if side is not None:
            route = _route(self.request_lookup, method, side, _rt.ROOT)
        try:  # `run_decoder` inline, as in `decode_message`
            return route.decode_result(result, _rt.context(strict, on_salvage), path)
        except RecursionError:
            raise _rt.too_deep() from None

    def encode_message(self, message: Any) -> dict[str, Any]:
        """The JSON-RPC object of `message`, `"jsonrpc": "2.0"` included, in plain JSON types."""
        kind = type(message)  # the exact classes first: one check for each message sent
        if kind is self.notification or (kind is not self.request and isinstance(message, self.notification)):
            data = notification_object(message.method, message.params)
        elif kind is self.request or isinstance(message, self.request):
            data = request_object(message.id, message.method, message.params)
        elif not isinstance(message.error, Undefined):
            data = {"jsonrpc": JSONRPC_VERSION, "id": _rt.encode_value(message.id), "error": message.error.to_dict()}
        else:
            data = result_object(message.id, message.result)
        if message.unknown_properties:
            data.update(_rt.encode_value(message.unknown_properties))
        return data


def request_object(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    """The JSON-RPC object of a request (`params` UNDEFINED: none), in plain JSON types."""
    data = {"jsonrpc": JSONRPC_VERSION, "id": _rt.encode_value(request_id), "method": _rt.encode_value(method)}
    if not isinstance(params, Undefined):
        data["params"] = _rt.encode_value(params)
    return data


def notification_object(method: str, params: Any) -> dict[str, Any]:
    """The JSON-RPC object of a notification (`params` UNDEFINED: none), in plain JSON types."""
    data = {"jsonrpc": JSONRPC_VERSION, "method": _rt.encode_value(method)}
    if not isinstance(params, Undefined):
        data["params"] = _rt.encode_value(params)
    return data


def result_object(request_id: Any, result: Any) -> dict[str, Any]:
    """The JSON-RPC object of a response with a result, in plain JSON types."""
    return {"jsonrpc": JSONRPC_VERSION, "id": _rt.encode_value(request_id), "result": _rt.encode_value(result)}


RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")


class PendingRequests(Generic[RequestT, ResponseT]):
    """The requests sent and not yet answered: allocates their ids and types their results.

    `request(method, params)` makes a request with the next integer id (or `track` one
    made elsewhere: an id still pending is refused); `resolve(response)` forgets it and
    types the result; `discard(id)` forgets a request whose response is no longer wanted.
    `side` is the side that handles the requests (the peer's)."""

    def __init__(self, envelopes: Envelopes, *, side: str | None = None) -> None:
        self.side = side
        self._envelopes = envelopes
        self._methods: dict[tuple[type, Any], str] = {}
        self._next_id = 0

    def request(self, method: str, params: Any = UNDEFINED) -> RequestT:
        """A new tracked request with a fresh integer id."""
        while (int, self._next_id) in self._methods:
            self._next_id += 1
        request: RequestT = self._envelopes.request(id=self._next_id, method=method, params=params)
        self._next_id += 1
        return self.track(request)

    def track(self, request: RequestT) -> RequestT:
        """Note an outgoing request (ids keep their JSON type: 1 and "1" differ)."""
        request_id, method = request.id, request.method  # type: ignore[attr-defined]
        key = (type(request_id), request_id)
        if key in self._methods:
            raise ValueError(f"request id {request_id!r} is still pending ({self._methods[key]})")
        self._methods[key] = method
        return request

    def discard(self, request_id: Any) -> None:
        """Forget a request (cancelled, or its connection closed); unknown ids are ignored."""
        self._methods.pop((type(request_id), request_id), None)

    def __len__(self) -> int:
        return len(self._methods)

    def __contains__(self, request_id: object) -> bool:
        return (type(request_id), request_id) in self._methods

    def resolve(
        self, message: Any, *, strict: bool = False, on_salvage: _rt.SalvageCallback | None = None
    ) -> ResponseT:
        """Decode a response (a parsed object or a `Response`) to a tracked request, typing its result.

        The request is forgotten even when its result does not decode (DecodeError)."""
        envelopes = self._envelopes
        response = message
        if not isinstance(response, envelopes.response):
            response = envelopes.decode_message(message, None, strict, None)
            if not isinstance(response, envelopes.response):
                raise _invalid(_rt.ROOT, "a response", envelopes.encode_message(response))
        method = self._methods.pop((type(response.id), response.id), None)
        if method is None:
            raise _invalid((_rt.ROOT, "id"), "the id of a pending request", response.id)
        if isinstance(response.error, Undefined):
            path = (_rt.ROOT, "result")
            typed = envelopes.typed_result(method, response.result, self.side, strict, on_salvage, path)
            # A new response (the caller's is left as it is), made directly: `replace` walks the fields.
            response = envelopes.response(id=response.id, result=typed, unknown_properties=response.unknown_properties)
        return response  # type: ignore[no-any-return]
