"""JSON-RPC 2.0 routing: typed ACP messages by method, in both directions.

`decode_message` turns one parsed JSON-RPC object into a `Request`, `Notification`
or `Response` with typed params; responses carry no method, so their result stays
raw until `decode_result` (or `PendingRequests`) types it. Methods starting with `_`
are extensions: their params are kept as raw JSON.

Written against the names of its package's `_routes` (the method names and route tables of the
schema, the types of a request's id and of an error object and their decoders), which generation
renders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from . import _jsonrpc
from . import _runtime as _rt
from ._jsonrpc import MethodNotFound, Notification, NotificationRoute, RequestRoute
from ._routes import (
    _BATCHES,
    _DECODE_ERROR,
    _DECODE_ID,
    _NOTIFICATION_LOOKUP,
    _REQUEST_LOOKUP,
    NOTIFICATIONS,
    REQUESTS,
    Methods,
    _Error,
    _RequestId,
)
from ._routes import SHARED_SIDES as SHARED_SIDES  # `side=` lookups include these sides' methods
from ._runtime import UNDEFINED, Undefined

__all__ = [
    "NOTIFICATIONS",
    "REQUESTS",
    "Message",
    "MethodNotFound",
    "Methods",
    "Notification",
    "NotificationRoute",
    "PendingRequests",
    "Request",
    "RequestRoute",
    "Response",
    "decode_message",
    "decode_result",
    "encode_message",
]


@dataclass(slots=True, kw_only=True)
class Request:
    """A JSON-RPC request; `params` is typed (raw JSON for `_` extension methods)."""

    id: _RequestId
    method: str
    params: Any = UNDEFINED
    unknown_properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Response:
    """A JSON-RPC response: a `result` (raw until typed by `decode_result`) or an `error`.

    `id` is None only in an error response to a request whose id could not be read."""

    id: _RequestId | None
    result: Any = UNDEFINED
    error: _Error | Undefined = UNDEFINED
    unknown_properties: dict[str, Any] = field(default_factory=dict)


Message: TypeAlias = Request | Notification | Response


_ENVELOPES: Final = _jsonrpc.Envelopes(
    request=Request,
    notification=Notification,
    response=Response,
    request_lookup=_REQUEST_LOOKUP,
    notification_lookup=_NOTIFICATION_LOOKUP,
    decode_id=_DECODE_ID,
    decode_error=_DECODE_ERROR,
    batches=_BATCHES,
)


def decode_message(
    data: Any, *, side: str | None = None, strict: bool = False, on_salvage: _rt.SalvageCallback | None = None
) -> Message:
    """One parsed JSON-RPC object as a typed `Request`, `Notification` or `Response`.

    `side` restricts the lookup to the methods one side handles ("agent", "client",
    ...); by default every side's table is searched. Malformed envelopes and unknown
    methods raise DecodeError (`MethodNotFound` for the latter)."""
    return _ENVELOPES.decode_message(data, side, strict, on_salvage)  # type: ignore[no-any-return]


def decode_result(
    method: str,
    result: Any,
    *,
    side: str | None = None,
    strict: bool = False,
    on_salvage: _rt.SalvageCallback | None = None,
) -> Any:
    """The typed result of a response to a `method` request (raw JSON for extensions)."""
    return _ENVELOPES.typed_result(method, result, side, strict, on_salvage, _rt.ROOT)


def encode_message(message: Message) -> dict[str, Any]:
    """The JSON-RPC object of `message`, `"jsonrpc": "2.0"` included, in plain JSON types
    (an id, method or undeclared property of a str or int subclass becomes a plain one)."""
    return _ENVELOPES.encode_message(message)


class PendingRequests(_jsonrpc.PendingRequests[Request, Response]):
    __doc__ = _jsonrpc.PendingRequests.__doc__

    def __init__(self, *, side: str | None = None) -> None:
        super().__init__(_ENVELOPES, side=side)
