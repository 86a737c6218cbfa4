"""One connection, several protocol versions: the agent side's router and the client side's
negotiation, as the TypeScript SDK's `AgentProtocolRouter` (2.4.0) has them.

A package's `Agent` and `Client` describe themselves as a `Route` (the protocol version the
package speaks, its `Wire`, and how to make its typed connection over a transport). The
router reads raw messages until a valid `initialize`, picks the route, and hands it the
transport with that `initialize` put back in front (`Replay`); the route's typed connection
serves everything from there, and the connection is never routed again. Negotiation sends
the newest version's `initialize`, reads the agent's answer and starts the typed connection
of the version the agent answered, giving it the answer as its own `initialize`'s (`Primed`).
Nothing here imports another package: a route of another package is passed in by the user,
who imported that package to write the agent or client it describes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from . import _runtime as _rt
from ._connection import (
    DEFAULT_OPTIONS,
    Connection,
    ConnectionClosed,
    ConnectionOptions,
    MessageTooLarge,
    Transport,
    Wire,
    failed_message_id,
    unparsed_response_id,
)
from ._runtime import DecodeError

_log = logging.getLogger(f"{_rt.LOGGER}.router")

INITIALIZE: Final = "initialize"
MAX_PROTOCOL_VERSION: Final = 0xFFFF
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
RESULT_PATH: Final[_rt.Path] = (_rt.ROOT, "result")
UNKNOWN_IMPLEMENTATION: Final = {"name": "unknown", "version": "unknown"}
"""Put in the place of a missing or malformed v2 `info` written for a newer version than the one selected."""


class Connect(Protocol):
    """How a package makes its typed connection for a handler over a transport: its
    `AgentSideConnection` or `ClientSideConnection` with the handler bound."""

    def __call__(self, transport: Transport, *, options: ConnectionOptions) -> Connection: ...


@dataclass(frozen=True, slots=True)
class Route:
    """One package's side of a connection: the protocol version it speaks, its wire, and its
    typed connection for a handler over a transport, with the connection's options
    (`AgentSideConnection(agent, transport, options=...)`)."""

    version: int | None
    wire: Wire
    connect: Connect
    # A Python method name → whether the handler serves it (overrides its interface's default)
    serves: Callable[[str], bool] = lambda name: False


def overrides(handler: object, interface: type) -> Callable[[str], bool]:
    """Whether `handler` overrides the method `name` of `interface` (serves it)."""
    return lambda name: getattr(type(handler), name, None) is not getattr(interface, name, None)


def _connect(route: Route, transport: Transport, options: ConnectionOptions) -> Connection:
    """The route's typed connection over `transport`, with the user's options (one
    `ConnectionOptions` serves every package that shares this runtime)."""
    return route.connect(transport, options=options)


class Routable(Protocol):
    """An `Agent` or `Client` of any package sharing this runtime: it describes itself as a route."""

    def _acp_route(self) -> Route: ...


class ProtocolVersionMismatch(ConnectionError):
    """The agent answered `initialize` with a protocol version no client given speaks."""

    def __init__(self, answered: object, spoken: Sequence[int]) -> None:
        self.answered = answered
        self.spoken = list(spoken)
        hint = f"; pass a client of protocol version {answered} to fall back to it" if type(answered) is int else ""
        super().__init__(
            f"the agent answered initialize with protocolVersion {answered!r}, this client speaks {self.spoken}{hint}"
        )


def _versions(routes: Sequence[Route]) -> dict[int, Route]:
    by_version: dict[int, Route] = {}
    for route in routes:
        version = route.version
        if version is None:
            raise ValueError("a package without a protocol version cannot be routed: set its protocol-version")
        if version in by_version:
            raise ValueError(f"two agents or clients of protocol version {version}")
        by_version[version] = route
    return by_version


class Replay:
    """A transport that receives `first` (raw messages) before what `transport` receives."""

    def __init__(self, transport: Transport, first: Sequence[bytes]) -> None:
        self._transport = transport
        self._first = list(first)

    async def receive(self) -> bytes | None:
        if self._first:
            return self._first.pop(0)
        return await self._transport.receive()

    async def send(self, message: bytes) -> None:
        await self._transport.send(message)

    async def close(self) -> None:
        await self._transport.close()

    @property
    def principal(self) -> object:
        return getattr(self._transport, "principal", None)


def _error(request_id: Any, code: int, message: str, data: Any = _rt.UNDEFINED) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not _rt.UNDEFINED:
        error["data"] = data
    return _rt.dump_json_bytes({"jsonrpc": "2.0", "id": request_id, "error": error})


def _invalid_request(request_id: Any, detail: str) -> bytes:
    return _error(request_id, _rt.INVALID_REQUEST, f"Invalid request: {detail}")


def _is_id(value: Any) -> bool:
    return value is None or type(value) in (str, int, float)


def _is_protocol_version(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_PROTOCOL_VERSION


def select(requested: int, versions: Sequence[int]) -> int | None:
    """The version that serves a client asking for `requested`: the highest configured one at
    or below it; an endpoint that serves v1 alone keeps the legacy fallback to v1 (any request)."""
    if list(versions) == [1]:
        return 1
    return max((version for version in versions if version <= requested), default=None)


def _is_implementation(value: Any) -> bool:
    return type(value) is dict and type(value.get("name")) is str and type(value.get("version")) is str


def v2_initialize_as_v1(params: dict[str, Any]) -> dict[str, Any]:
    """A v2 `initialize`'s params as v1 ones, as the TypeScript SDK's router downgrades them:
    v1 client capabilities (no file system, no terminal; terminal auth when v2 offers it), the
    v2 `info` as `clientInfo` when it is valid, `_meta` kept."""
    capabilities = params.get("capabilities")
    capabilities = capabilities if type(capabilities) is dict else {}
    auth = capabilities.get("auth")
    auth = auth if type(auth) is dict else {}
    v1_auth: dict[str, Any] = {"terminal": auth.get("terminal") is not None}
    if auth.get("_meta") is not None:
        v1_auth["_meta"] = auth["_meta"]
    client: dict[str, Any] = {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "session": {"configOptions": {"boolean": {}}},
        "plan": {},
        "auth": v1_auth,
    }
    for key in ("elicitation", "_meta"):
        if capabilities.get(key) is not None:
            client[key] = capabilities[key]
    result: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": client}
    if _is_implementation(params.get("info")):
        result["clientInfo"] = params["info"]
    if params.get("_meta") is not None:
        result["_meta"] = params["_meta"]
    return result


def _initialize_params(params: dict[str, Any], requested: int, selected: int) -> dict[str, Any]:
    """`initialize` params asking for `requested`, as the `selected` version reads them: exactly
    as sent when the two are equal, else downgraded (v2 → v1) or with the selected version."""
    if requested == selected:
        return params
    if selected == 1 and requested >= 2:
        return v2_initialize_as_v1(params)
    rewritten = {**params, "protocolVersion": selected}
    if selected == 2 and not _is_implementation(params.get("info")):
        rewritten["info"] = dict(UNKNOWN_IMPLEMENTATION)
    return rewritten


@dataclass(frozen=True, slots=True)
class Routed:
    """A valid `initialize`: the route that serves it and the message as that route reads it."""

    route: Route
    message: bytes


def route_initialize(data: bytes, routes: dict[int, Route], strict: bool = False) -> Routed | bytes | None:
    """What to do with a message received before the connection is routed: route it (a valid
    `initialize`, as the selected version reads it, `strict` or not), ignore it (None: a
    notification or a response), or answer it (bytes). An exception while handling it (a
    `RecursionError` re-encoding deep params, a `MemoryError`) answers it -32603, as the typed
    connection does: no message ends the connection."""
    try:
        return _route_initialize(data, routes, strict)
    except Exception as error:
        _log.error("failed to handle a message of %d bytes before initialize: %r", len(data), error)
        answered, request_id = failed_message_id(data)
        return _error(request_id, _rt.INTERNAL_ERROR, "Internal error") if answered else None


def _route_initialize(data: bytes, routes: dict[int, Route], strict: bool) -> Routed | bytes | None:
    try:
        message = _rt.parse_json(data)
    except DecodeError as error:
        return _error(None, _rt.PARSE_ERROR, "Parse error", {"error": str(error)})
    if type(message) is list:
        return _invalid_request(None, "JSON-RPC batches are not supported")
    notification = type(message) is dict and message.get("jsonrpc") == "2.0" and "id" not in message
    if notification and type(message.get("method")) is str:
        return None  # a notification before initialization
    if type(message) is dict and "method" not in message and ({"id", "result", "error"} & set(message)):
        return None  # response-shaped: nothing awaits a response yet
    if not (
        type(message) is dict
        and message.get("jsonrpc") == "2.0"
        and type(message.get("method")) is str
        and "id" in message
        and _is_id(message["id"])
    ):
        return _error(None, _rt.INVALID_REQUEST, "Invalid request", "first ACP message must be an initialize request")
    request_id = message["id"]
    if message["method"] != INITIALIZE:
        return _error(request_id, _rt.INVALID_REQUEST, "Invalid request", "first ACP request must be initialize")
    params = message.get("params")
    requested: Any = params.get("protocolVersion") if type(params) is dict else None
    if type(params) is not dict or not _is_protocol_version(requested):
        detail = "initialize.protocolVersion must be a valid ACP protocol version"
        return _error(request_id, _rt.INVALID_PARAMS, "Invalid params", detail)  # the TypeScript SDK's wording
    selected = select(requested, sorted(routes))
    if selected is None:
        data_ = {"requested": requested, "supported": sorted(routes)}
        return _error(request_id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data_)
    if selected >= 2 and type(request_id) not in (str, int):
        return _invalid_request(None, f"ACP v{selected} request IDs must be strings or integers")
    route = routes[selected]
    rewritten = _initialize_params(params, requested, selected)
    normalized = message if rewritten is params else {**message, "params": rewritten}
    try:
        # As the typed connection will read it, so that a failing `initialize` is answered before
        # routing; `on_salvage` hears of its salvages once, when the typed connection decodes it.
        route.wire.decoder("agent", strict, None)(normalized)
    except DecodeError as error:
        return _error(request_id, error.code, error.message, error.data)
    return Routed(route, data if normalized is message else _rt.dump_json_bytes(normalized))


async def serve(transport: Transport, routes: Sequence[Route], options: ConnectionOptions = DEFAULT_OPTIONS) -> None:
    """Route the connection on `transport` to the route of the version its `initialize` selects,
    then serve it with that route's typed connection until it ends. Before a valid
    `initialize`: notifications and responses are ignored, other requests answered -32600, a
    batch -32600 with `id: null`, a failing `initialize` answered with its error (-32602 for its
    params, -32022 for an unsupported version); none of them closes the connection. The stream
    ending before `initialize`, or a cancellation, closes the transport (or the typed
    connection). The typed connection takes `options`."""
    by_version = _versions(routes)
    try:
        routed = await _route(transport, by_version, options.strict)
    except BaseException:  # cancelled before routing: the transport is closed, as its end closes it
        with contextlib.suppress(Exception):
            await transport.close()
        raise
    if routed is None:
        return
    connection = _connect(routed.route, Replay(transport, [routed.message]), options)
    try:
        await connection.wait_closed()
    finally:
        await connection.close()


async def _route(transport: Transport, routes: dict[int, Route], strict: bool) -> Routed | None:
    """Read and answer messages until a valid `initialize` (None: the stream ended before it,
    and the transport is closed)."""
    while True:
        try:
            data = await transport.receive()
        except MessageTooLarge as error:
            await _answer(transport, _invalid_request(error.request_id, str(error)))
            continue
        except (OSError, RuntimeError) as error:
            _log.warning("connection failed before initialize: %s", error)
            data = None
        if data is None:
            with contextlib.suppress(OSError, RuntimeError):
                await transport.close()
            return None
        outcome = route_initialize(data, routes, strict)
        if isinstance(outcome, Routed):
            return outcome
        if outcome is not None:
            await _answer(transport, outcome)


async def _answer(transport: Transport, message: bytes) -> None:
    """Send an answer before routing; a transport that failed ends at the next `receive`."""
    try:
        await transport.send(message)
    except (OSError, RuntimeError) as error:
        _log.warning("connection failed before initialize: %s", error)


class Primed:
    """A client transport whose first outgoing message (the typed connection's `initialize`) is
    not sent: it is answered with `result`, the answer the agent already gave to negotiation,
    followed by the messages the agent sent meanwhile (`received`); then `transport` as it is."""

    def __init__(self, transport: Transport, result: Any, received: Sequence[bytes]) -> None:
        self._transport = transport
        self._result = result
        self._queue = list(received)
        self._primed = asyncio.Event()
        self._detached = False

    async def receive(self) -> bytes | None:
        await self._primed.wait()
        if self._queue:
            return self._queue.pop(0)
        return await self._transport.receive()

    async def send(self, message: bytes) -> None:
        if self._primed.is_set():
            await self._transport.send(message)
            return
        request = _rt.parse_json(message)
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": self._result}
        self._queue.insert(0, _rt.dump_json_bytes(answer))
        self._primed.set()

    def detach(self) -> None:
        """Leave the transport open when the connection over this one closes."""
        self._detached = True

    async def close(self) -> None:
        if not self._detached:
            await self._transport.close()


NEGOTIATION_ID: Final = "acp-negotiate"
"""The id of negotiation's `initialize`: a string, so that it meets none of the connection's."""


async def negotiate(
    transport: Transport,
    params: Any,
    newest: Route,
    others: Sequence[Route],
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> tuple[Any, Any]:
    """Send `initialize` with `params` (of the `newest` route's version), read the agent's answer
    and return the typed connection and `InitializeResponse` of the version it answered: the
    newest's, or one of `others` (a fallback, given its version's params, downgraded from
    `params`). With a v1 fallback the `initialize` sent reads as v1 too: it carries v1's
    `clientCapabilities` (`fs` and `terminal` for the methods the v1 client serves) and
    `clientInfo`, which a v1 agent reads from a v2 request. An answer is read by its body as well
    as its number: one that does not read as the version it names but reads as an older one
    given (agents on the official Python SDK echo the requested version with a v1 body) is
    that one. An error answer raises the newest package's `RequestError`; an answer of a version
    no route speaks raises `ProtocolVersionMismatch`, one that reads as none `DecodeError`; none
    closes the transport, and after any of them nothing reads it (negotiation may be retried)."""
    by_version = _versions([newest, *others])
    wire = newest.wire
    request = wire.encode(wire.request(id=NEGOTIATION_ID, method=INITIALIZE, params=params))
    sent = request["params"]
    v1 = by_version.get(1) if newest.version != 1 else None
    if v1 is not None:
        request["params"] = {**as_v1_fields(sent, v1.serves), **sent}
    await transport.send(_rt.dump_json_bytes(request))
    message, received = await _answer_to_negotiation(transport)
    error = message.get("error")
    if "result" not in message:
        error = error if type(error) is dict else {}
        code, text = error.get("code"), error.get("message")
        raise wire.error(code if type(code) is int else _rt.INTERNAL_ERROR, str(text), error.get("data", _rt.UNDEFINED))
    result = message["result"]
    version = _answering_version(result, by_version, options.strict)
    route = by_version[version]
    typed = params
    if route is not newest:
        own = _initialize_params(sent, sent.get("protocolVersion", version), version)
        if version == 1:
            own = {**own, **as_v1_fields(sent, route.serves)}
        envelope = {"jsonrpc": "2.0", "id": 0, "method": INITIALIZE, "params": own}
        typed = route.wire.decoder("agent", False, None)(envelope).params
    primed = Primed(transport, result, received)
    connection = _connect(route, primed, options)
    try:
        response = await connection._request(INITIALIZE, typed)
    except BaseException:  # cancelled: the connection stops reading, the transport stays open
        primed.detach()
        await connection.close()
        raise
    return connection, response


def as_v1_fields(params: dict[str, Any], serves: Callable[[str], bool]) -> dict[str, Any]:
    """The v1 `clientCapabilities` and `clientInfo` of an `initialize` with (v2) `params`, sent
    beside its own fields: `fs` and `terminal` true for the methods the v1 client serves (an
    agent calls only what is advertised, and what is advertised must be served), the rest as
    the TypeScript SDK's router downgrades v2 capabilities; `clientInfo` from `info`."""
    downgraded = v2_initialize_as_v1(params)
    capabilities = downgraded["clientCapabilities"]
    capabilities["fs"] = {"readTextFile": serves("fs_read_text_file"), "writeTextFile": serves("fs_write_text_file")}
    capabilities["terminal"] = all(serves(name) for name in _V1_TERMINAL_METHODS)
    fields = {"clientCapabilities": capabilities}
    if "clientInfo" in downgraded:
        fields["clientInfo"] = downgraded["clientInfo"]
    return fields


_V1_TERMINAL_METHODS: Final = (
    "terminal_create",
    "terminal_output",
    "terminal_release",
    "terminal_wait_for_exit",
    "terminal_kill",
)


async def _answer_to_negotiation(transport: Transport) -> tuple[dict[str, Any], list[bytes]]:
    """The answer to negotiation's `initialize`, and the messages the agent sent before it."""
    received: list[bytes] = []
    while True:
        data = await transport.receive()
        if data is None:
            raise ConnectionClosed("the connection closed before the answer to initialize")
        try:
            message = _rt.parse_json(data)
        except DecodeError:
            if unparsed_response_id(data) == NEGOTIATION_ID:
                raise  # the answer, nested deeper than the parser reaches (or a number it cannot hold)
            received.append(data)  # the typed connection answers it
            continue
        if type(message) is dict and "method" not in message and message.get("id") == NEGOTIATION_ID:
            return message, received
        received.append(data)


def _answering_version(result: Any, by_version: dict[int, Route], strict: bool) -> int:
    """The version `result` (an `initialize` result) reads as: the version it names when it
    reads as that, else the newest older one it reads as (DecodeError of the version named when
    it reads as none)."""
    answered: Any = result.get("protocolVersion") if type(result) is dict else None
    if type(answered) is not int or answered not in by_version:
        raise ProtocolVersionMismatch(answered, sorted(by_version))
    candidates = [answered, *(version for version in sorted(by_version, reverse=True) if version < answered)]
    failure: DecodeError | None = None
    for version in candidates:
        try:
            by_version[version].wire.decode_result(INITIALIZE, result, "agent", strict, None, RESULT_PATH)
        except DecodeError as error:
            failure = failure or error
            continue
        return version
    assert failure is not None
    raise failure
