"""The connection machinery every generated package shares: the transport of newline-delimited
JSON over asyncio streams, and the JSON-RPC engine both typed connections are built on
(ids, pending requests, handler tasks, cancellation, dispatch). What it needs of the
schema (the message classes and their codec, the cancel and initialize methods) it is
given as a `Wire` by the package's connection module."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import reprlib
import signal
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass
from typing import IO, Any, Final, Generic, Protocol, TypeVar

from . import _runtime as _rt
from ._observe import Tap, WireObserver
from ._runtime import UNDEFINED, DecodeError

_log = logging.getLogger(f"{_rt.LOGGER}.connection")

_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
"""The longest message, in bytes, read by default (asyncio's default of 64 KiB is too small for
images): `ConnectionLimits.max_message_bytes`, the TypeScript SDK's default."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one connection holds for its peer at most, whatever the peer sends or fails to read.
    The defaults follow the TypeScript SDK's `ConnectionLimits` and `DEFAULT_MAX_MESSAGE_BYTES`
    where it has the limit; it has no bound on requests served at once or notifications queued.

    A limit that is reached makes the reader wait (it stops reading, so the pipe pushes back on
    the peer) or, for output the peer does not read, fails the connection."""

    max_message_bytes: int = _MAX_MESSAGE_BYTES
    """The longest message read, newline excluded; a longer one is answered -32600 and skipped."""
    max_concurrent_requests: int = 1024
    """Requests served at once; the reader waits for one to finish before it reads on."""
    max_queued_notifications: int = 1024
    """Notifications waiting for their handler; the reader waits for room before it reads on."""
    max_buffered_bytes: int = 64 * 1024 * 1024
    """Output the transport holds for a peer that has not read it; writers wait above it."""
    max_output_stall: float = 60.0
    """Seconds a writer waits for a peer that reads none of the buffered output; then the
    connection fails with `ConnectionClosed`."""
    max_id_length: int = 1024
    """The longest string request id, in characters; a longer one is answered -32600."""

    def __post_init__(self) -> None:
        for name in _COUNTS:
            value = getattr(self, name)
            if not (type(value) is int and value > 0):
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        stall = self.max_output_stall
        if not (type(stall) in (int, float) and stall > 0):  # NaN is not > 0
            raise ValueError(f"max_output_stall must be a positive number of seconds, not {stall!r}")


_COUNTS: Final = (
    "max_message_bytes",
    "max_concurrent_requests",
    "max_queued_notifications",
    "max_buffered_bytes",
    "max_id_length",
)


DEFAULT_LIMITS: Final = ConnectionLimits()


def _is_a(value: object, cls: type) -> bool:
    """Whether `value` is a `cls`, of this package or of another generated with it (each package
    has its own copy of this module; a routed connection takes the other package's options)."""
    return isinstance(value, cls) or type(value).__qualname__ == cls.__qualname__


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """What every entry point and connection of the package takes (`options=`): one bundle, so
    that serving, connecting, routing and negotiating read the same values.

    A value of the wrong type or out of range is refused when the options are made, with an
    error naming the field (`ConnectionOptions(close_timeout=0)` raises `ValueError`)."""

    limits: ConnectionLimits = DEFAULT_LIMITS
    """What the connection and its transport hold for the peer at most."""
    strict: bool = False
    """Refuse what lenient decoding would salvage (a request's params: -32602)."""
    on_salvage: _rt.SalvageCallback | None = None
    """Called with each `Salvage` of lenient decoding (a value dropped or defaulted, and why)."""
    close_timeout: float = 5.0
    """Seconds a close waits for the peer to read the output it holds; then it is dropped."""

    def __post_init__(self) -> None:
        if not _is_a(self.limits, ConnectionLimits):
            raise TypeError(f"limits must be a ConnectionLimits, not {self.limits!r}")
        if type(self.strict) is not bool:
            raise TypeError(f"strict must be a bool, not {self.strict!r}")
        if self.on_salvage is not None and not callable(self.on_salvage):
            raise TypeError(f"on_salvage must be a callable or None, not {self.on_salvage!r}")
        timeout = self.close_timeout
        if not (type(timeout) in (int, float) and timeout > 0):  # NaN is not > 0
            raise ValueError(f"close_timeout must be a positive number of seconds, not {timeout!r}")

    @staticmethod
    def checked(options: object) -> ConnectionOptions:
        """`options`, when it is a `ConnectionOptions` (of this package or another generated with
        it); otherwise `TypeError`."""
        if not _is_a(options, ConnectionOptions):
            raise TypeError(f"options must be a ConnectionOptions, not {options!r}")
        return options  # type: ignore[return-value]


DEFAULT_OPTIONS: Final = ConnectionOptions()
READ_SIZE: Final = 64 * 1024
"""The most `StreamTransport` reads from its stream at once."""
READER_LIMIT: Final = 64 * 1024
"""The `limit` of the stream readers the package's helpers create for a `StreamTransport`
(asyncio's default): a reader pauses its pipe when it buffers twice that."""
KILL_GRACE: Final = 5.0
"""How long leaving `spawn_process` early (cancelled) waits for the child it killed to be reaped."""
ABORT_GRACE: Final = 1.0
"""How long `StreamTransport.close` waits for an aborted transport to report itself closed (it
takes a turn or two of the event loop)."""
FLUSH_STEP: Final = 16 * 1024
"""`StreamTransport.send` gives the event loop a turn each time its write buffer grows by this much
(below the high-water mark, where it does not wait), so that a slower peer reads while it writes."""

_E = TypeVar("_E", bound="RequestError")
_T = TypeVar("_T")


class ErrorObject(Protocol):
    """A JSON-RPC error object, as the schema's error type holds it."""

    @property
    def code(self) -> int: ...

    @property
    def message(self) -> str: ...

    @property
    def data(self) -> Any: ...


class RequestError(Exception):
    """A JSON-RPC error as an exception: raise it from a handler to answer the request with it.

    `RequestError(code, message, data)` for any code; the package's subclass adds one
    constructor per error code of the schema. Awaiting a request that the peer answered
    with an error raises it too."""

    def __init__(self, code: int, message: str, data: Any = UNDEFINED) -> None:
        super().__init__(f"{message} ({int(code)})")
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        """The message, the code and the data when there is one (where agents put the cause)."""
        text = f"{self.message} ({int(self.code)})"  # the number, also of an ErrorCode member
        return text if self.data is UNDEFINED else f"{text}: {_describe(self.data)}"

    @classmethod
    def from_error(cls: type[_E], error: ErrorObject) -> _E:
        """The exception of a received error object."""
        return cls(error.code, error.message, error.data)

    @classmethod
    def from_decode_error(cls: type[_E], error: DecodeError) -> _E:
        """The error to answer a message that did not decode with: its code (-32602 for a
        value, -32600 for an envelope, -32601 for a method), where and what."""
        return cls(error.code, error.message, error.data)


_DESCRIBE: Final = reprlib.Repr()
_DESCRIBE.maxlevel, _DESCRIBE.maxdict, _DESCRIBE.maxlist, _DESCRIBE.maxstring, _DESCRIBE.maxother = 6, 20, 20, 500, 500


def _describe(value: Any) -> str:
    """A bounded description of an error's data (a deep or huge value is cut short, never fatal)."""
    try:
        return _DESCRIBE.repr(value)
    except Exception:  # a data object whose repr fails (RecursionError among them)
        return f"<{type(value).__name__}>"


class ConnectionClosed(ConnectionError):
    """The connection ended: raised by requests that were pending and by any later call."""


class MessageTooLarge(Exception):
    """A transport read a message longer than its limit (and skipped it). `request_id` is the id
    of the request it was, when its beginning tells (`request_id_of`): the answer names it, so
    the peer's request fails at once instead of waiting for an answer that never comes."""

    def __init__(self, message: str, request_id: int | str | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


HEAD_BYTES: Final = 4096
"""How much of a message skipped for its length a transport keeps, to read its id from."""

_HEAD_TOKEN: Final = re.compile(
    rb'\s*("(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|[][{}:,])'
)


def request_id_of(head: bytes) -> int | str | None:
    """The id of the request whose text begins with `head`, when the top-level `"id"` and
    `"method"` come before any nested value, as the SDKs write requests
    (`{"jsonrpc":"2.0","id":7,"method":"mcp/message","params":...`); None when the beginning does
    not tell (a response, a notification, the id after the params, a value cut off)."""
    fields: dict[str, Any] = {}
    token = _HEAD_TOKEN.match(head)
    if token is None or token[1] != b"{":
        return None
    while True:
        key, colon = _HEAD_TOKEN.match(head, token.end()), None
        if key is not None and key[1].startswith(b'"'):
            colon = _HEAD_TOKEN.match(head, key.end())
        value = _HEAD_TOKEN.match(head, colon.end()) if colon is not None and colon[1] == b":" else None
        after = _HEAD_TOKEN.match(head, value.end()) if value is not None else None
        if key is None or value is None or after is None or value[1] in (b"{", b"[") or after[1] not in (b",", b"}"):
            break  # nested, cut off or not JSON: nothing more is read from the beginning
        with contextlib.suppress(ValueError):
            fields[json.loads(key[1])] = json.loads(value[1])
        if after[1] == b"}":
            break
        token = after
    request_id, method = fields.get("id"), fields.get("method")
    if type(method) is not str or not (
        type(request_id) is str or (type(request_id) is int and -(2**63) <= request_id < 2**63)
    ):
        return None  # the schema's ids: strings and int64
    return request_id


class Transport(Protocol):
    """How a connection moves messages; one JSON text per call. `StreamTransport` is
    newline-delimited JSON over asyncio streams; a WebSocket or HTTP transport implements
    the same three methods and leaves dispatch untouched."""

    async def receive(self) -> bytes | None:
        """The next message, None at the end of the stream; MessageTooLarge for one that is skipped."""
        ...

    async def send(self, message: bytes) -> None:
        """Send one message, waiting while the peer is not reading (flow control)."""
        ...

    async def close(self) -> None:
        """Close the outgoing direction; the peer sees the end of the stream."""
        ...


class StreamTransport:
    """Newline-delimited JSON over an asyncio `StreamReader`/`StreamWriter` pair.

    It splits lines itself (as the TypeScript SDK's `LineBuffer` does), reading the stream in
    chunks of `READ_SIZE` bytes, so that what it holds of one line is at most
    `limits.max_message_bytes` and a chunk whatever the peer sends; the rest of a longer line is
    read and dropped as it comes (`MessageTooLarge` once it ends). The reader's own `limit`
    bounds nothing here, and a small one (`READER_LIMIT`, as the package's helpers create)
    keeps the reader's buffer small. `send` waits while the peer holds
    `limits.max_buffered_bytes` unread, and fails the transport (`ConnectionClosed`) when it
    reads none of it for `limits.max_output_stall` seconds."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        close_timeout: float = 5.0,
        limits: ConnectionLimits = DEFAULT_LIMITS,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._close_timeout = close_timeout
        self._limits = limits
        self._lock = asyncio.Lock()  # held by the send that waits for the peer to read
        self._held = 0  # the sends waiting for the peer (holding or awaiting the lock)
        self._flushed = 0  # the write buffer's size when the event loop last wrote from it (as far as `send` saw)
        self._buffer = bytearray()  # what has been read of the lines not yet returned
        self._scanned = 0  # the length of `_buffer`'s start known to hold no newline
        self._skipping = False  # dropping the rest of a line over the limit
        self._head = b""  # the beginning of the line being dropped (`HEAD_BYTES`), for its id
        with contextlib.suppress(AttributeError, NotImplementedError, ValueError):
            writer.transport.set_write_buffer_limits(high=limits.max_buffered_bytes)

    async def receive(self) -> bytes | None:
        buffer, limit = self._buffer, self._limits.max_message_bytes
        while True:
            end = buffer.find(b"\n", self._scanned)
            if end < 0:
                if self._skipping or len(buffer) > limit:
                    if not self._skipping:
                        self._head = bytes(buffer[:HEAD_BYTES])
                    self._skipping = True
                    buffer.clear()
                self._scanned = len(buffer)
                chunk = await self._reader.read(READ_SIZE)
                if chunk:
                    if not buffer and not self._skipping:
                        end = chunk.find(b"\n")
                        if end == len(chunk) - 1 and end <= limit:
                            # One whole line, as a peer that waits for answers sends them: taken
                            # from the chunk, without a trip through the buffer.
                            line = chunk[:end]
                            if line and not line.isspace():
                                return line
                            continue
                    buffer += chunk
                    continue
                if self._skipping:  # the stream ended inside an overlong line
                    self._skipping = False
                    raise MessageTooLarge(f"a message longer than {limit} bytes", request_id_of(self._head))
                line = bytes(buffer)
                buffer.clear()
                self._scanned = 0
                return line if line and not line.isspace() else None
            skipped = self._skipping or end > limit
            line = b"" if skipped else _take(buffer, end)
            if skipped and not self._skipping:  # the whole line is in the buffer
                self._head = bytes(buffer[:HEAD_BYTES])
            del buffer[: end + 1]
            self._scanned = 0
            if skipped:
                self._skipping = False
                raise MessageTooLarge(f"a message longer than {limit} bytes", request_id_of(self._head))
            if line and not line.isspace():  # not blank (`strip` would copy the line to say so)
                return line

    async def send(self, message: bytes) -> None:
        writer = self._writer
        written = not self._held
        if written:
            # No send waits for the peer to read: this one writes at once, without the lock.
            writer.write(message + b"\n")  # `writelines` joins them too, a call deeper
            buffered = writer.transport.get_write_buffer_size()
            if buffered <= self._limits.max_buffered_bytes:
                # At or below the high-water mark: `drain` returns at once (it raises the
                # connection's error, and yields to the loop when the transport is closing).
                await writer.drain()
                if buffered < self._flushed:
                    self._flushed = buffered  # the event loop has written some since
                elif buffered >= self._flushed + FLUSH_STEP:
                    # The peer reads slower than this side writes: a turn of the event loop,
                    # in which the transport hands what the peer has made room for to the
                    # system, so that both sides work at once (a writer that never waits
                    # would fill the buffer while the peer, its pipe read, waits idle).
                    await asyncio.sleep(0)
                    self._flushed = writer.transport.get_write_buffer_size()
                return
        # Over the high-water mark: this send, and every send after it (in order, behind the
        # lock), waits until the peer has read enough.
        self._held += 1
        try:
            async with self._lock:
                if not written:
                    writer.write(message + b"\n")
                await self._drained()
        finally:
            self._held -= 1

    async def _drained(self) -> None:
        """Wait until the peer holds at most `max_buffered_bytes` unread; fail the transport
        (`ConnectionClosed`) when it reads none of it for `max_output_stall` seconds."""
        transport = self._writer.transport
        if transport.get_write_buffer_size() <= self._limits.max_buffered_bytes:
            await self._writer.drain()
            return
        while True:
            before = transport.get_write_buffer_size()
            try:
                await asyncio.wait_for(self._writer.drain(), self._limits.max_output_stall)
                return
            except TimeoutError:
                if transport.get_write_buffer_size() < before:
                    continue  # a slow reader, but a reader
            transport.abort()
            stall = self._limits.max_output_stall
            raise ConnectionClosed(f"the peer read none of the output for {stall} s: the connection is closed")

    async def close(self) -> None:
        """Close the writing direction. A peer that has not read what is still queued after
        `close_timeout` seconds is cut off (the transport is aborted), and so is one when this
        wait is cancelled: close always returns, and never leaves the transport open."""
        if not self._writer.is_closing():
            self._writer.close()
        # Shielded: a timeout cancels the wait, not the stream's own close waiter, which a
        # subprocess pipe still sets when `abort` closes it (set once cancelled, it logs an
        # InvalidStateError). An abort ends the waiter within a turn or two of the loop, and close
        # waits for that, so that no task of its own outlives it.
        closed = asyncio.ensure_future(self._writer.wait_closed())
        closed.add_done_callback(_retrieve)
        try:
            await asyncio.wait_for(asyncio.shield(closed), self._close_timeout)
        except TimeoutError:  # before OSError, which it is
            await self._abort(closed)
        except OSError:
            pass
        except BaseException:
            await self._abort(closed)
            raise

    async def _abort(self, closed: asyncio.Future[None]) -> None:
        """Cut the peer off, dropping what it has not read, and wait for the stream to close."""
        self._writer.transport.abort()
        await asyncio.wait([closed], timeout=ABORT_GRACE)


def _retrieve(task: asyncio.Future[None]) -> None:
    """Mark a background wait's outcome seen: the peer's going (an `OSError`) is no news."""
    if not task.cancelled():
        task.exception()


def _take(buffer: bytearray, end: int) -> bytes:
    """The first `end` bytes of `buffer`: a long line copied once (through a view), a line of
    less than a chunk by a slice, which costs half as much and copies it twice."""
    if end < READ_SIZE:
        return bytes(buffer[:end])
    with memoryview(buffer) as view:
        return bytes(view[:end])


_RESULT_PATH: Final[_rt.Path] = (_rt.ROOT, "result")  # where a result that does not decode is wrong

_RUNNING: Final[set[asyncio.Task[None]]] = set()
"""The reader task (and `close`'s shutdown) of every connection that has not ended. asyncio
holds tasks weakly: without this, a connection its owner keeps no reference to
(`connect_to_client(agent, ...)` called for its effect) would be collected, and its socket
closed, by the next garbage collection."""

Handlers = Mapping[str, Callable[[Any, Any], Awaitable[Any]]]
"""Wire method → a call of the handler's method for it: `lambda handler, params: handler.m(params)`."""
_Conn = TypeVar("_Conn", bound="Connection")


@dataclass(frozen=True, slots=True)
class Wire:
    """What the engine needs of the schema, from the package's rpc and models modules."""

    # (side, strict, on_salvage) → the decoder of the messages a connection serving `side` reads
    # with these options: a parsed JSON-RPC object → Request | Notification | Response
    decoder: Callable[[str | None, bool, _rt.SalvageCallback | None], Callable[[Any], Any]]
    encode: Callable[[Any], dict[str, Any]]  # a message → its JSON-RPC object
    request: type
    notification: type
    response: type
    # (method, result, side, strict, on_salvage, path) → the typed result of a response to a
    # `method` request sent to `side` (DecodeError when it does not decode)
    decode_result: Callable[[str, Any, str | None, bool, _rt.SalvageCallback | None, _rt.Path], Any]
    error: type[RequestError]  # the package's RequestError, raised by requests answered with an error
    error_object: Callable[[int, str, Any], Any]  # (code, message, data) → the schema's error object
    cancel_method: str  # handled by the engine: cancels the request being served
    cancel_params: Callable[[int], Any]  # a request id → the params of `cancel_method`
    cancelled_id: Callable[[Any], Any]  # the params of `cancel_method` → the request id
    initialize_method: str | None  # served first: earlier requests are refused
    # The notification (`{"sessionId": ...}`) that cancels the turn a pending TURN_METHOD request
    # is running, sent when the task awaiting it is cancelled (v1's `session/cancel`, which every
    # agent honours); None where a pending one is held, its turn not started (v2 answers once the
    # prompt is inserted): withdrawing the request is its cancellation.
    turn_cancel: str | None = None
    schema_methods: Collection[str] = ()  # refused by `send_request`/`send_notification` (typed methods send them)
    # The raw params of an `initialize` that is not the first, whether another is being answered
    # (its handler has not returned), and whether another request came since the last answered →
    # the error that refuses it (-32600), or None to serve it; None: every one is served (v1).
    repeated_initialize: Callable[[Any, bool, bool], RequestError | None] | None = None
    # A request's method → the error that refuses it before `initialize` has been answered
    # (-32600, before its params are read); the default is the TypeScript SDK's v1 wording.
    not_initialized: Callable[[str], RequestError] = lambda method: RequestError(
        _rt.INVALID_REQUEST, f"Invalid request: ACP connection must be initialized before '{method}'"
    )
    # The JSON-RPC object of a notification (method, params), of a request the engine made (id,
    # method, params) and of a response with a result (id, result), as `encode` writes them,
    # without the message object (the hot path's);
    # None: the engine makes the message and calls `encode`.
    encode_notification: Callable[[str, Any], dict[str, Any]] | None = None
    encode_request: Callable[[Any, str, Any], dict[str, Any]] | None = None  # (id, method, params)
    encode_result: Callable[[Any, Any], dict[str, Any]] | None = None


class ErrorConstructor(Protocol):
    """A constructor of the package's `RequestError` for one code (`RequestError.invalid_request`):
    the data, and a message that defaults to the schema's title of the code."""

    def __call__(self, data: Any = ..., message: str = ...) -> RequestError: ...


_Answer = TypeVar("_Answer")


@dataclass(frozen=True, slots=True)
class VersionCheck(Generic[_Answer]):
    """How the agent's connection of a package that speaks one protocol version (v2) guards
    `initialize`, as the TypeScript SDK's agent of that version does and in its words: bound by
    the package's connection module to its version, its -32600 constructor and the property of
    `initialize`'s answer that holds the version answered."""

    version: int
    invalid_request: ErrorConstructor
    answered_version: Callable[[_Answer], object]  # `initialize`'s answer → its `protocolVersion`

    def repeated_initialize(self, params: Any, in_progress: bool, after_other_requests: bool) -> RequestError | None:
        """Why an `initialize` that is not the first is refused (-32600): none while another is
        being answered (its handler has not returned), and a repeat must come before any other
        request and ask for the version the first answer selected (or a newer one); None: the
        agent's handler serves it (`Wire.repeated_initialize`)."""
        if in_progress:
            return self.invalid_request(f"ACP v{self.version} initialize is already in progress")
        if after_other_requests:
            return self.invalid_request(f"ACP v{self.version} initialize must not be repeated after other requests")
        requested = params.get("protocolVersion") if type(params) is dict else None
        if type(requested) is int and requested < self.version:
            message = f"Invalid request: a repeated initialize must request protocol version {self.version} or later"
            return self.invalid_request(message=message)
        return None

    def not_initialized(self, method: str) -> RequestError:
        """The refusal of a request before `initialize` has been answered, its detail in `data`
        (`Wire.not_initialized`)."""
        return self.invalid_request(f"ACP v{self.version} connection must be initialized before '{method}'")

    async def answered(self, answer: Awaitable[_Answer]) -> _Answer:
        """The agent's answer to `initialize`, refused when its protocol version is not the package's:
        the client's `initialize` is answered -32600 instead, and the connection stays as it was
        (uninitialized, or with the previous answer in effect)."""
        response = await answer
        answered = self.answered_version(response)
        if answered != self.version:
            data = {"expectedProtocolVersion": self.version, "receivedProtocolVersion": answered}
            message = f"Invalid request: The v{self.version} API only supports protocol version {self.version}"
            raise self.invalid_request(data, message)
        return response


def _readable_id(message: Any) -> Any:
    """The id of a message that did not decode, when it is a usable one."""
    request_id = message.get("id") if type(message) is dict else None
    if type(request_id) is float and request_id.is_integer():
        return request_id  # `2.0`, an integer to JSON Schema (and to JavaScript)
    return request_id if type(request_id) in (int, str) else None


def _response_shaped(message: Any) -> bool:
    """Whether a message that did not decode reads as a response (no method; an id, a result
    or an error), which is never answered, as the TypeScript SDK has it."""
    return (
        type(message) is dict
        and "method" not in message
        and ("id" in message or "result" in message or "error" in message)
    )


_TOKENS: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}:]')
"""A JSON string, a bracket or a colon: what `unparsed_response_id` reads of a line."""
_SCALAR: Final = re.compile(rb'\s*(-?\d+|"[^"\\]*(?:\\.[^"\\]*)*")\s*[,}]')
"""An integer or a string, then the end of a member: the id `unparsed_response_id` reads."""


def unparsed_response_id(data: bytes) -> Any:
    """The id of a line that did not parse (nested deeper than the parser reaches, a number it
    cannot hold) when its top level reads as a response: an object without `method`, with `id`
    and `result` or `error`. Read by scanning strings and brackets, without recursion; None
    when the line does not read so."""
    depth, key, members = 0, b"", {}
    for token in _TOKENS.finditer(data):
        text = token[0]
        if depth == 0 and text != b"{":
            return None  # the top level is not an object
        if text == b"{" or text == b"[":
            depth += 1
        elif text == b"}" or text == b"]":
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and text == b":":
            members[key] = token.end()
        elif depth == 1:
            key = text
    start = members.get(b'"id"')
    if b'"method"' in members or start is None or not ({b'"result"', b'"error"'} & members.keys()):
        return None
    value = _SCALAR.match(data, start)
    with contextlib.suppress(ValueError):
        return json.loads(value[1]) if value else None
    return None


def failed_message_id(data: bytes) -> tuple[bool, Any]:
    """Whether a message whose handling raised is answered -32603, and with which id: a
    notification or a response is not answered, a request by its id when it can be read,
    anything else with `id: null`."""
    try:
        message = _parse(data)
    except Exception:
        return True, None
    if type(message) is dict and "method" in message and "id" not in message:
        return False, None
    if _response_shaped(message):
        return False, None
    return True, _readable_id(message)


def _parse(data: bytes) -> Any:
    """The JSON value of one line. Bytes that are not UTF-8 read as U+FFFD and a leading byte
    order mark is skipped, as the TypeScript SDK's `TextDecoder` reads them."""
    try:
        return _rt.parse_json(data)
    except DecodeError:
        text = data.decode("utf-8", "replace")
        text = text[1:] if text.startswith("\ufeff") else text
        if text.encode() == data:
            raise
    return _rt.parse_json(text)


TURN_METHOD: Final = "session/prompt"
"""The request that starts a turn (ACP's, in every version): its answer is settled once the
notifications received before it have been handled."""


@dataclass(eq=False, slots=True)
class _Settled:
    """The answer to a turn request, queued behind the notifications received before it."""

    future: asyncio.Future[Any]
    error: BaseException | None
    result: Any

    def apply(self) -> None:
        if self.future.done():
            return
        if self.error is not None:
            self.future.set_exception(self.error)
        else:
            self.future.set_result(self.result)


class Connection:
    """The JSON-RPC machinery of both typed connections: ids, pending requests, handler tasks,
    dispatch. `wire` says what the package's messages are; `requests` and `notifications` call
    the `handler`'s method for each method of its side. `options` (`ConnectionOptions`) bound
    what it holds; their `strict` and `on_salvage` are passed to every decode the connection
    makes (the params it serves, the results it receives): strict, a message that lenient
    decoding would salvage is refused (-32602 for a request's params)."""

    def __init__(
        self,
        handler: Any,
        transport: Transport,
        *,
        wire: Wire,
        side: str,
        peer: str,
        requests: Handlers,
        notifications: Handlers,
        options: ConnectionOptions = DEFAULT_OPTIONS,
    ) -> None:
        options = ConnectionOptions.checked(options)
        self.options: Final = options
        """What the connection was made with (`ConnectionOptions`)."""
        self._wire = wire
        self._limits = limits = options.limits
        self._strict = strict = options.strict
        self._on_salvage = on_salvage = options.on_salvage
        self._slot_free = asyncio.Event()  # set when a request finishes while the reader waits
        self._handler = handler
        self._transport = transport
        self._side = side
        self._requests = requests
        self._notifications = notifications
        self._peer = peer
        self._decode = wire.decoder(side, strict, on_salvage)
        self._next_id = 0
        self._waiting: dict[int, tuple[str, asyncio.Future[Any]]] = {}  # the requests sent, by id
        self._abandoned: set[int] = set()  # cancelled requests whose response is dropped quietly
        self._ordered: set[int] = set()  # turn requests answered after the notifications before them
        self._queued_answers: set[_Settled] = set()  # their answers, in the inbox
        self._serving: dict[tuple[type, Any], asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        # None: the stream has ended. Bounded: the reader awaits room (backpressure).
        self._inbox: asyncio.Queue[Any] = asyncio.Queue(limits.max_queued_notifications)
        self._initialized = wire.initialize_method is None
        self._served_other = False  # a request other than `initialize` came once initialized
        self._initializing = False  # an `initialize` is being answered (its handler has not returned)
        self._closed = False
        self._tap: Tap | None = None  # the wire observers, when there are any
        self._stopping = False  # `_shutdown` has begun: no task may start
        self._closing: asyncio.Task[None] | None = None  # `close`'s shutdown, which every caller awaits
        self._loop = asyncio.get_running_loop()
        self._worker = self._loop.create_task(self._notification_loop())
        self._reader = self._loop.create_task(self._receive_loop())
        _RUNNING.add(self._reader)
        self._reader.add_done_callback(_RUNNING.discard)

    @property
    def principal(self) -> Any:
        """Whom the server's `authorize` named for this connection's peer (`http_app`,
        `serve_websocket`): None over stdio, in memory, on the client's side, or without `authorize`."""
        return getattr(self._transport, "principal", None)

    async def ext_method(self, method: str, params: Any) -> Any:
        """Send an extension request (`method` starts with `_`); params and result are raw JSON."""
        if not method.startswith("_"):
            raise ValueError(f"extension methods start with '_', not {method!r}")
        return await self._request(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send an extension notification (`method` starts with `_`) with raw JSON params."""
        if not method.startswith("_"):
            raise ValueError(f"extension methods start with '_', not {method!r}")
        await self._notify(method, params)

    async def send_request(self, method: str, params: Any = UNDEFINED) -> Any:
        """Send a request for a method the schema does not define (an extension's too): params and
        result are raw JSON. The schema's methods have typed methods of their own, which this refuses."""
        self._check_raw(method)
        return await self._request(method, params)

    async def send_notification(self, method: str, params: Any = UNDEFINED) -> None:
        """Send a notification for a method the schema does not define, with raw JSON params."""
        self._check_raw(method)
        await self._notify(method, params)

    def _check_raw(self, method: str) -> None:
        if type(method) is not str or not method:
            raise ValueError(f"a method name is a non-empty string, not {method!r}")
        if method in self._wire.schema_methods:
            raise ValueError(f"{method!r} is a method of the schema: call the connection's typed method for it")

    def start_task(self, work: Coroutine[Any, Any, _T], *, name: str | None = None) -> asyncio.Task[_T]:
        """Run `work` in a task the connection owns: when the connection ends it is cancelled and
        awaited. An exception it raises is logged (once); await the task for its result."""
        if self._stopping:
            work.close()
            raise ConnectionClosed("cannot start a task: the connection is closed")
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("the connection's task %s failed", task.get_name(), exc_info=task.exception())

    def add_observer(self, observer: WireObserver) -> None:
        """Tell `observer` of every message from now on (`WireObserver`); attach it in `on_connect`
        to see the first."""
        if self._tap is None:
            self._tap = Tap(self._side)
        self._tap.observers.append(observer)

    def remove_observer(self, observer: WireObserver) -> None:
        """Stop telling `observer` (ValueError when it is not attached)."""
        if self._tap is None or observer not in self._tap.observers:
            raise ValueError(f"{observer!r} is not observing this connection")
        self._tap.observers.remove(observer)
        if not self._tap.observers:
            self._tap = None

    async def close(self) -> None:
        """Stop reading, fail pending requests with ConnectionClosed, cancel the handlers and await
        them, close the transport. Every call awaits the same shutdown, which runs to its end even
        when a caller is cancelled (then that caller returns at once)."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
            _RUNNING.add(self._closing)
            self._closing.add_done_callback(_RUNNING.discard)
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        if not self._stopping:  # once the reader is shutting down (the stream ended), it finishes
            self._reader.cancel()
        await asyncio.wait([self._reader])
        if not self._stopping:  # cancelled before its first step, the reader never ran its `finally`
            await self._shutdown()

    async def wait_closed(self) -> None:
        """Wait until the connection has ended (the peer closed it, or `close`)."""
        await asyncio.wait([self._reader])

    async def __aenter__(self: _Conn) -> _Conn:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _request(self, method: str, params: Any) -> Any:
        if self._closed:
            raise ConnectionClosed(f"cannot send {method}: the connection is closed")
        request_id = self._next_id
        self._next_id = request_id + 1
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiting[request_id] = (method, future)
        if method == TURN_METHOD and asyncio.current_task() is not self._worker:
            self._ordered.add(request_id)  # (a notification handler awaiting it would wait for itself)
        encode = self._wire.encode_request
        try:
            if encode is not None:
                await self._write(_rt.dump_json_bytes(encode(request_id, method, params)))
            else:
                await self._write(self._encode(self._wire.request(id=request_id, method=method, params=params)))
            return await future
        except asyncio.CancelledError:
            if not self._closed and request_id in self._waiting:
                self._abandoned.add(request_id)
                turn = method == TURN_METHOD and self._wire.turn_cancel is not None
                session_id = getattr(params, "session_id", None) if turn else None
                # Sent before the cancellation goes on: whatever the caller sends next (a turn's
                # `cancelled` answer) follows the withdrawal on the wire.
                await self._cancel(request_id, session_id if type(session_id) is str else None)
            raise
        finally:
            self._waiting.pop(request_id, None)
            self._ordered.discard(request_id)

    async def _cancel(self, request_id: int, session_id: str | None) -> None:
        """Cancel a request the peer is serving: the turn it runs in `session_id` when given
        (`Wire.turn_cancel`), and the request (`$/cancel_request`, which some peers honour)."""
        with contextlib.suppress(ConnectionClosed):
            if session_id is not None and self._wire.turn_cancel is not None:
                await self._notify(self._wire.turn_cancel, {"sessionId": session_id})
            await self._notify(self._wire.cancel_method, self._wire.cancel_params(request_id))

    async def _notify(self, method: str, params: Any) -> None:
        if self._closed:
            raise ConnectionClosed(f"cannot send {method}: the connection is closed")
        encode = self._wire.encode_notification
        if encode is not None:
            await self._write(_rt.dump_json_bytes(encode(method, params)))
        else:
            await self._write(self._encode(self._wire.notification(method=method, params=params)))

    async def _write(self, data: bytes) -> None:
        if self._tap is not None:
            self._tap.crossed("out", data)
        try:
            await self._transport.send(data)
        except ConnectionClosed as error:
            self._fail(error)
            raise
        except (OSError, RuntimeError) as error:
            raise ConnectionClosed(f"the connection failed: {error}") from error

    def _fail(self, error: ConnectionClosed) -> None:
        """The transport has failed for good (a peer that stopped reading): end the connection."""
        if not self._reader.done() and not self._stopping:
            _log.warning("%s", error)
            self._reader.cancel()

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _receive_loop(self) -> None:
        try:
            while True:
                try:
                    data = await self._transport.receive()
                except MessageTooLarge as error:
                    message = f"Invalid request: {error}"
                    await self._answer(self._error(error.request_id, _rt.INVALID_REQUEST, message))
                    continue
                if data is None:
                    await self._finish()
                    break
                if self._tap is not None:
                    self._tap.crossed("in", data)
                try:
                    await self._receive(data)
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # RecursionError, MemoryError, ...: this message's error
                    await self._failed(data, error)
        except (OSError, RuntimeError) as error:
            _log.warning("connection failed: %s", error)
        finally:
            await self._shutdown()

    async def _finish(self) -> None:
        """The peer has closed the stream: fail the requests no response can answer now, then
        handle the notifications it sent before it closed (`close` does not wait for them)."""
        self._closed = True
        self._fail_waiting()
        await self._inbox.put(None)
        await asyncio.wait([self._worker])

    async def _failed(self, data: bytes, error: Exception) -> None:
        """A message whose handling raised: answer a request -32603 (with its id when it can
        be read) and go on; the connection itself is unharmed."""
        _log.error("failed to handle a message of %d bytes: %r", len(data), error)
        answered, request_id = failed_message_id(data)
        if answered:
            with contextlib.suppress(Exception):
                await self._answer(self._error(request_id, _rt.INTERNAL_ERROR, "Internal error"))

    async def _receive(self, data: bytes) -> None:
        try:
            message = _parse(data)
        except DecodeError as error:
            if self._waiting:
                self._fail_unparsed(data, error)
            await self._answer(self._error(None, _rt.PARSE_ERROR, "Parse error", {"error": str(error)}))
            return
        if type(message) is dict:
            request_id = message.get("id")
            if (
                type(request_id) is int
                and len(message) == 3
                and "result" in message
                and message.get("jsonrpc") == "2.0"
                and request_id in self._waiting
            ):
                # The answer to one of our requests with nothing else in it (`jsonrpc`, `id`,
                # `result`): its result typed without the generic decoding of the envelope, which
                # would find the same (the id is one this connection made).
                self._resolve_result(request_id, message["result"])
                return
            if type(request_id) is str and len(request_id) > self._limits.max_id_length:
                text = f"Invalid request: a request id longer than {self._limits.max_id_length} characters"
                if "method" in message:
                    await self._answer(self._error(None, _rt.INVALID_REQUEST, text))
                return  # a response to no request of ours
            if "method" in message and message.get("params") is None:
                method = message["method"]
                if type(method) is str and not method.startswith("_"):
                    message["params"] = {}  # served as `{}`, as the TypeScript SDK does
            if (
                message.get("method") == self._wire.initialize_method
                and (self._initialized or self._initializing)
                and await self._refused_repeat(message)
            ):
                return
            if not self._initialized and await self._refused_early(message):
                return
        try:
            decoded = self._decode(message)
        except DecodeError as error:
            await self._refuse(message, error)
            return
        if isinstance(decoded, self._wire.request):
            await self._dispatch(decoded)
        elif isinstance(decoded, self._wire.response):
            self._resolve(decoded)
        elif decoded.method == self._wire.cancel_method:
            cancelled = self._wire.cancelled_id(decoded.params)
            task = self._serving.get((type(cancelled), cancelled))
            if task is not None:
                # Once the handler task has taken its first step (scheduled before this): a task
                # cancelled before it starts would never run `_serve` and never answer.
                self._loop.call_soon(task.cancel)
        elif self._initialized:
            try:
                self._inbox.put_nowait(decoded)
            except asyncio.QueueFull:
                await self._inbox.put(decoded)  # backpressure: the reader waits for room
        else:
            _log.debug("ignored %s before initialization", decoded.method)

    def _fail_unparsed(self, data: bytes, error: DecodeError) -> None:
        """A line that did not parse may still answer a pending request: fail it with the parse
        error rather than leave it waiting until the connection closes."""
        request_id = unparsed_response_id(data)
        if type(request_id) is int and request_id in self._waiting:
            self._settle(request_id, error)

    async def _refuse(self, message: Any, error: DecodeError) -> None:
        """Answer a message that did not decode with its error. A malformed response fails
        its pending request (or is logged); a notification's bad params are only logged."""
        request_id = _readable_id(message)
        if _response_shaped(message):
            if type(request_id) is int and request_id in self._waiting:
                self._settle(request_id, error)
            else:
                _log.warning("dropped a malformed response: %s", error)
            return
        if type(message) is dict and "id" not in message and error.code != _rt.INVALID_REQUEST:
            _log.warning("dropped notification %s: %s", message.get("method"), error)
            return
        if error.code == _rt.INVALID_REQUEST:
            request_id = None  # not a JSON-RPC request: answered with `id: null`, as the TypeScript SDK does
        await self._answer(self._error(request_id, error.code, error.message, error.data))

    async def _refused_repeat(self, message: dict[str, Any]) -> bool:
        """Whether `message`, an `initialize` that is not the first (or comes while the first is
        being answered), is one the wire refuses, answered with its error here (before its params
        are read: a v1 client's repeat is refused, not found invalid)."""
        refusal = self._wire.repeated_initialize
        if refusal is None or "id" not in message:
            return False
        error = refusal(message.get("params"), self._initializing, self._served_other)
        if error is None:
            return False
        await self._answer(self._error(_readable_id(message), error.code, error.message, error.data))
        return True

    async def _refused_early(self, message: dict[str, Any]) -> bool:
        """Whether `message` is a request other than `initialize` before the connection is
        initialized, answered -32600 here whatever its params (as the TypeScript SDK answers it)."""
        method = message.get("method")
        if type(method) is not str or method == self._wire.initialize_method or "id" not in message:
            return False
        if message.get("jsonrpc") != "2.0":
            return False  # not a JSON-RPC request: the envelope's decoding refuses it
        error = self._wire.not_initialized(method)
        await self._answer(self._error(_readable_id(message), error.code, error.message, error.data))
        return True

    async def _dispatch(self, request: Any) -> None:
        key = (type(request.id), request.id)
        if key in self._serving:
            message = f"Invalid request: request id {request.id!r} is in use"
            await self._answer(self._error(request.id, _rt.INVALID_REQUEST, message))
            return
        if request.method != self._wire.initialize_method:
            self._served_other = True
        else:
            self._initializing = True  # until its handler returns: another `initialize` meanwhile may be refused
        while len(self._serving) >= self._limits.max_concurrent_requests:
            self._slot_free.clear()  # the reader stops reading until a request finishes
            await self._slot_free.wait()
        if self._inbox.qsize():
            # Notifications read before this request wait for their handler: a task, which starts
            # after them, as the request came after them (an eager start would overtake them).
            self._serving[key] = self._loop.create_task(self._serve(request, key))
        elif sys.version_info >= (3, 12):
            # The handler's first step runs now, in its own task (`current_task()`, timeouts and
            # task groups see it): a handler that does not wait answers without a trip through
            # the event loop, and its task is never entered in `_serving`.
            task = asyncio.Task(self._serve(request, key), loop=self._loop, eager_start=True)
            if not task.done():
                self._serving[key] = task
        else:
            self._serving[key] = self._loop.create_task(self._serve(request, key))

    async def _serve(self, request: Any, key: tuple[type, Any]) -> None:
        # The handler's call, its answer and its slot in one frame (one coroutine per request).
        try:
            try:
                if request.method.startswith("_"):
                    result = await self._handler.ext_method(request.method, request.params)
                else:
                    result = await self._requests[request.method](self._handler, request.params)
                encode = self._wire.encode_result
                if encode is not None:
                    data = _rt.dump_json_bytes(encode(request.id, result))
                else:
                    data = self._encode(self._wire.response(id=request.id, result=result))
            except asyncio.CancelledError:
                if self._closed:
                    raise
                data = self._error(request.id, _rt.REQUEST_CANCELLED, "Request cancelled", {"requestId": request.id})
            except RequestError as error:
                try:
                    data = self._error(request.id, error.code, error.message, error.data)
                except Exception:
                    _log.exception("the error of %s (request %r) does not encode", request.method, request.id)
                    data = self._error(request.id, _rt.INTERNAL_ERROR, "Internal error")
            except Exception:
                _log.exception("the handler of %s (request %r) failed", request.method, request.id)
                data = self._error(request.id, _rt.INTERNAL_ERROR, "Internal error")
            else:
                if request.method == self._wire.initialize_method:
                    self._initialized = True
            if self._initializing and request.method == self._wire.initialize_method:
                self._initializing = False  # answered (before the answer is written, as in the TypeScript SDK)
            try:
                await self._write(data)
            except ConnectionClosed:  # not `contextlib.suppress`: a context manager per answer
                return  # the connection has ended: nothing can be answered
        finally:
            # Here rather than in a done callback (one scheduled call less per request): the
            # task always starts, as a cancellation is scheduled after its first step (at shutdown,
            # which may cancel it before, nothing waits for a slot).
            self._serving.pop(key, None)
            self._slot_free.set()

    def _encode(self, message: Any) -> bytes:
        return _rt.dump_json_bytes(self._wire.encode(message))

    def _error(self, request_id: Any, code: int, message: str, data: Any = UNDEFINED) -> bytes:
        """The error response to `request_id` (None when it could not be read)."""
        return self._encode(self._wire.response(id=request_id, error=self._wire.error_object(code, message, data)))

    async def _answer(self, data: bytes) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._write(data)

    async def _notification_loop(self) -> None:
        inbox = self._inbox
        while True:
            try:
                notification = inbox.get_nowait()
            except asyncio.QueueEmpty:
                notification = await inbox.get()
            if notification is None:
                return
            if type(notification) is _Settled:
                self._queued_answers.discard(notification)
                notification.apply()
                continue
            try:
                handle = self._notifications.get(notification.method)
                if handle is not None:
                    await handle(self._handler, notification.params)
                elif notification.method.startswith("_"):
                    await self._handler.ext_notification(notification.method, notification.params)
            except Exception:
                _log.exception("the handler of notification %s failed", notification.method)

    def _resolve(self, response: Any) -> None:
        request_id = response.id
        if type(request_id) is not int or request_id not in self._waiting:
            if type(request_id) is int and request_id in self._abandoned:
                self._abandoned.discard(request_id)
            else:
                _log.warning("dropped a response to unknown request id %r", request_id)
            return
        if isinstance(response.error, _rt.Undefined):
            self._resolve_result(request_id, response.result)
        else:
            self._settle(request_id, self._wire.error.from_error(response.error))

    def _resolve_result(self, request_id: int, result: Any) -> None:
        """Settle the pending request `request_id` with its typed `result` (or the DecodeError)."""
        method = self._waiting[request_id][0]
        try:
            typed = self._wire.decode_result(method, result, self._peer, self._strict, self._on_salvage, _RESULT_PATH)
        except DecodeError as error:
            self._settle(request_id, error)
            return
        if method == self._wire.initialize_method:
            self._initialized = True
        self._settle(request_id, None, typed)

    def _settle(self, request_id: int, error: BaseException | None, result: Any = None) -> None:
        _, future = self._waiting.pop(request_id)
        if future.done():
            return
        if request_id in self._ordered:  # after the notifications received before it
            self._ordered.discard(request_id)
            answer = _Settled(future, error, result)
            self._queued_answers.add(answer)
            try:
                self._inbox.put_nowait(answer)
            except asyncio.QueueFull:
                self._spawn(self._inbox.put(answer))
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def _fail_waiting(self) -> None:
        for method, future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionClosed(f"the connection closed before the response to {method}"))
        self._waiting.clear()
        self._abandoned.clear()

    async def _shutdown(self) -> None:
        self._closed = self._stopping = True
        self._fail_waiting()
        tasks = [*self._serving.values(), *self._tasks, self._worker]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for answer in self._queued_answers:  # the notifications before them will not be handled
            answer.apply()
        self._queued_answers.clear()
        with contextlib.suppress(OSError, RuntimeError):
            await self._transport.close()
        if self._tap is not None:
            self._tap.closed()


async def stdio_streams(limit: int = READER_LIMIT) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """This process's stdin and stdout as an asyncio stream pair (stdout carries protocol lines
    only); `limit` is the reader's (a `StreamTransport` splits lines itself). Either may be a
    pipe, a socket, a terminal or a regular file (`agent < requests.jsonl > answers.jsonl`)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    if _is_regular_file(sys.stdin):
        _FileReadTransport(sys.stdin.fileno(), asyncio.StreamReaderProtocol(reader))
    else:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    transport: asyncio.WriteTransport
    if _is_regular_file(sys.stdout):
        transport = _FileWriteTransport(sys.stdout.fileno(), protocol)
    else:
        transport, _ = await loop.connect_write_pipe(lambda: protocol, sys.stdout)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _is_regular_file(stream: Any) -> bool:
    """Whether `stream` is a regular file, which the event loop's pipe transports refuse."""
    return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)


class _FileReadTransport(asyncio.ReadTransport):
    """A regular file read into `protocol` a chunk at a time in a worker thread (a file is never
    "ready" to a selector), paused while the reader holds more than its limit."""

    def __init__(self, fd: int, protocol: asyncio.Protocol) -> None:
        super().__init__()
        self._fd = fd
        self._protocol = protocol
        self._resumed = asyncio.Event()
        self._resumed.set()
        protocol.connection_made(self)
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        error: Exception | None = None
        try:
            while data := await asyncio.to_thread(os.read, self._fd, 1 << 16):
                self._protocol.data_received(data)
                await self._resumed.wait()
            self._protocol.eof_received()
        except OSError as failure:
            error = failure
        self._protocol.connection_lost(error)

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    def is_reading(self) -> bool:
        return self._resumed.is_set()

    def is_closing(self) -> bool:
        return self._task.done()

    def close(self) -> None:
        self._task.cancel()


class _FileWriteTransport(asyncio.WriteTransport):
    """Writes to a regular file at once (a file never blocks a writer for long); nothing is
    buffered, so a writer's `drain` never waits."""

    def __init__(self, fd: int, protocol: asyncio.BaseProtocol) -> None:
        super().__init__()
        self._fd = fd
        self._protocol = protocol
        self._closing = False
        protocol.connection_made(self)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass  # nothing is ever buffered

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            asyncio.get_running_loop().call_soon(self._protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()


Stderr = None | int | IO[Any] | Callable[[str], None]
"""Where a started process's stderr goes: None inherits this process's, `subprocess.DEVNULL`
discards it, an open file (or a file descriptor) receives it, and a callable is called with
each line (without its line ending, decoded as UTF-8 with replacement)."""


@contextlib.asynccontextmanager
async def spawn_process(
    command: str | os.PathLike[str],
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    limit: int = READER_LIMIT,
    timeout: float = 5.0,
    stderr: Stderr = None,
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Start `command` in a session of its own, with its stdin and stdout piped to this process
    and its stderr where `stderr` says (`Stderr`); `limit` is the stdout reader's (a
    `StreamTransport` splits lines itself).

    The session's process group is the process's and every one it starts (a wrapper such as
    `sh -c`, `npx` or an npm bin shim, and the agent behind it): on exit, once its owner has
    closed its stdin, the group has half of `timeout` to exit, is then sent SIGTERM, and
    SIGKILL when any of it remains at `timeout`; leaving takes at most `timeout`. A cancellation
    meanwhile kills the group at once: no process outlives the task that started it."""
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE if callable(stderr) else stderr,
        env=None if env is None else dict(env),
        cwd=cwd,
        limit=limit,
        start_new_session=True,
    )
    lines = None
    if callable(stderr):
        assert process.stderr is not None
        lines = asyncio.ensure_future(_each_line(process.stderr, stderr, limit))
    try:
        yield process
    finally:
        await _stop(process, timeout, lines)


async def _each_line(stream: asyncio.StreamReader, call: Callable[[str], None], limit: int) -> None:
    """Call `call` with each line of `stream` until it ends; a line longer than `limit` bytes is
    passed in parts of `limit` bytes or more. A failing call is logged."""
    pending = b""
    while chunk := await stream.read(1 << 16):
        *complete, pending = (pending + chunk).split(b"\n")
        if len(pending) > limit:
            complete.append(pending)
            pending = b""
        for line in complete:
            _call_with_line(call, line)
    if pending:
        _call_with_line(call, pending)


def _call_with_line(call: Callable[[str], None], line: bytes) -> None:
    try:
        call(line.decode("utf-8", "replace").removesuffix("\r"))
    except Exception:
        _log.exception("the stderr callback failed")


async def _stop(process: asyncio.subprocess.Process, timeout: float, lines: asyncio.Future[None] | None) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), timeout / 2)
        if _group_alive(process.pid):
            _signal_group(process.pid, signal.SIGTERM)
            while _group_alive(process.pid) and loop.time() < deadline:
                await asyncio.sleep(min(0.02, max(0.0, deadline - loop.time())))
            _signal_group(process.pid, signal.SIGKILL)
        await process.wait()
        if lines is not None:
            await asyncio.wait([lines], timeout=max(0.0, deadline - loop.time()))
    except BaseException:  # cancelled (or interrupted) while waiting: do not leave it running
        _signal_group(process.pid, signal.SIGKILL)
        # Reaped before its transport closes: closing it first reaps the child out of asyncio's
        # sight, and (Python 3.12+) its exit status reads 255 instead of -SIGKILL.
        await asyncio.wait([asyncio.ensure_future(process.wait())], timeout=KILL_GRACE)
        raise
    finally:
        if lines is not None:
            lines.cancel()
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()  # else `BaseSubprocessTransport.__del__` warns that it was left open


def _group_alive(group: int) -> bool:
    """Whether any process of the process group `group` remains (one not yet reaped included)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member that is no longer ours: the group's id was reused
        return False
    return True


def _signal_group(group: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, number)
