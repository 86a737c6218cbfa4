"""ACP over Streamable HTTP and WebSocket, server side: an ASGI application, wire-compatible with
the TypeScript SDK 2.4.0's `AcpServer` (`experimental/server`).

One endpoint, `/acp`. Over HTTP a client POSTs each of its messages: `initialize` (without
`Acp-Connection-Id`) opens a connection and is answered `200` with the agent's response and
the new `Acp-Connection-Id`; every later POST carries that header and is answered `202` (its
answer comes over SSE). The agent's messages go out on `GET` streams of server-sent events
(`data: <json>\\n\\n`, a `:` comment as keep-alive every 15 s): one per connection, and one per
session (`Acp-Session-Id`) for the messages whose params name that session, for the answers to
requests posted for it, and for the agent's requests about it. `DELETE` ends the connection.
A WebSocket at the same path is one connection, one message per text frame, `Acp-Connection-Id`
on the `101`.

Errors as `AcpServer` answers them: 415 for a POST that is not `application/json`, 400 for
invalid JSON, a batch (with a -32600 body), a non-object, `initialize` on an existing connection,
a missing `Acp-Connection-Id`, a missing or mismatched `Acp-Session-Id` on a session-scoped
message; 404 for an unknown connection or another path, 406 for a GET that does not accept
`text/event-stream`, 409 for a second receiver of one stream, 405 for other methods. Differing
from `AcpServer`: the client's answer to a session-scoped request of the agent is accepted without
`Acp-Session-Id` (the Python SDK 0.12.1's client sends none; it is matched to its request by id),
a mismatched one is still refused; 413 for a body over `max_body_bytes`; 403 for a request with
an `Origin` not allowed, 401 for one `authorize` refuses; CORS for the allowed origins (a
preflight `OPTIONS` answered 204, the CORS headers on every response), which `AcpServer` lacks
(it answers `OPTIONS` 405). No module outside the standard library
is imported here: any ASGI server runs the app (uvicorn, hypercorn)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import re
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from . import _runtime as _rt
from ._connection import DEFAULT_LIMITS, MessageTooLarge, Transport
from ._runtime import DecodeError

_log = logging.getLogger(f"{_rt.LOGGER}.http")

PATH: Final = "/acp"
CONNECTION_ID_HEADER: Final = "acp-connection-id"
SESSION_ID_HEADER: Final = "acp-session-id"
KEEP_ALIVE_SECONDS: Final = 15.0
CORS_ALLOWED_METHODS: Final = "GET, POST, DELETE"
CORS_ALLOWED_HEADERS: Final = "Acp-Connection-Id, Acp-Session-Id, Authorization, Content-Type"
"""The request headers a page of an allowed origin may send (`Accept` needs no permission)."""
CORS_EXPOSED_HEADERS: Final = "Acp-Connection-Id, Acp-Session-Id"
CORS_MAX_AGE_SECONDS: Final = 600
DEFAULT_MAX_MESSAGE_BYTES: Final = DEFAULT_LIMITS.max_message_bytes  # as over stdio
DEFAULT_MAX_BUFFERED_BYTES: Final = DEFAULT_LIMITS.max_buffered_bytes
DEFAULT_MAX_OUTPUT_STALL: Final = 60.0
DEFAULT_MAX_REQUEST_BODY_BYTES: Final = 16 * 1024 * 1024  # the TypeScript SDK's Node adapter's
DEFAULT_MAX_BUFFERED_SESSION_STREAMS: Final = 1024  # as the TypeScript SDK's ConnectionLimits
DEFAULT_MAX_ID_LENGTH: Final = 1024  # as the TypeScript SDK's ConnectionLimits
DEFAULT_REPLAY_BYTES: Final = 1024 * 1024
DEFAULT_CLOSE_GRACE: Final = 5.0
DEFAULT_BODY_TIMEOUT: Final = 30.0
DEFAULT_MAX_CONNECTIONS: Final = 256
DEFAULT_IDLE_TIMEOUT: Final = 300.0
DEFAULT_LOG_INTERVAL: Final = 60.0
DEFAULT_MAX_INBOUND_BYTES: Final = DEFAULT_MAX_BUFFERED_BYTES
RETRY_AFTER_SECONDS: Final = 5
HEALTH_PATH: Final = "/health"
DRAIN_POLL_SECONDS: Final = 0.05
WEBSOCKET_READ_AHEAD: Final = 16  # as the websockets library's max_queue
AFFINITY_COOKIE: Final = "acp_instance"
"""The cookie naming the instance (`ServerSettings.instance`) that answered `initialize`."""
INSTANCE_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""An instance name: what a cookie value, a header and a load balancer's server name all take."""
SESSION_SCOPED_METHODS: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)
"""Methods whose POST must carry `Acp-Session-Id` (as `AcpServer` has them)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Handler = Callable[[Transport], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class AuthRequest:
    """What `authorize` decides from: one HTTP request to the endpoint, or a WebSocket upgrade.

    `headers` (names lowercased) and `cookies` (parsed from `Cookie`, the first of a repeated
    name) are read-only; `query` is the raw query string without `?`; `client` the peer's
    `(host, port)` when the server knows it (behind a proxy: the proxy's); `transport` is
    `"http"` or `"websocket"`; `connection_id` the `Acp-Connection-Id` the request names (None
    for `initialize` and for an upgrade)."""

    method: str
    path: str
    query: str
    client: tuple[str, int] | None
    headers: Mapping[str, str]
    cookies: Mapping[str, str]
    transport: str
    connection_id: str | None


Authorize = Callable[[AuthRequest], Any]
"""`authorize(request)` returns (or its awaitable resolves to) the request's principal: any value
compared with `==` (a user name, an account id); None or False refuses the request (401)."""


def parse_cookies(header: str) -> dict[str, str]:
    """The `name=value` pairs of a `Cookie` header (RFC 6265: `; `-separated, a value's double
    quotes removed), the first of a repeated name; a pair without `=` is skipped."""
    cookies: dict[str, str] = {}
    for pair in header.split(";"):
        name, equals, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name:
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        cookies.setdefault(name, value)
    return cookies


def auth_request(
    *,
    method: str,
    target: str,
    client: tuple[str, int] | None,
    headers: Mapping[str, str],
    transport: str,
) -> AuthRequest:
    """The `AuthRequest` of a request to `target` (its path and query) with `headers` (names lowercased)."""
    path, _, query = target.partition("?")
    return AuthRequest(
        method=method,
        path=path,
        query=query,
        client=client,
        headers=MappingProxyType(dict(headers)),
        cookies=MappingProxyType(parse_cookies(headers.get("cookie", ""))),
        transport=transport,
        connection_id=headers.get(CONNECTION_ID_HEADER) or None,
    )


async def principal_of(authorize: Authorize, request: AuthRequest) -> Any:
    """What `authorize` returns for `request` (awaited if it is awaitable); None when it refuses."""
    principal = authorize(request)
    if inspect.isawaitable(principal):
        principal = await principal
    return None if principal is None or principal is False else principal


Route = str | None
"""Where a message goes out: a session's stream, or None for the connection's."""


def _key(value: Any) -> tuple[str, Any] | None:
    """A JSON-RPC id as a dict key (`1` and `"1"` differ, `true` is none)."""
    if type(value) is str or type(value) is int:
        return (type(value).__name__, value)
    return None


def _well_formed_request(message: dict[str, Any]) -> bool:
    """Whether a message with a method and an id is a request the agent answers with that id
    (the connection answers a malformed envelope with `id: null`)."""
    return (
        message.get("jsonrpc") == "2.0"
        and type(message.get("method")) is str
        and "result" not in message
        and "error" not in message
        and _key(message.get("id")) is not None
    )


def _session_of(message: Any) -> str | None:
    params = message.get("params") if type(message) is dict else None
    session = params.get("sessionId") if type(params) is dict else None
    return session if type(session) is str else None


def over_long_id(message: Any, session_header: str | None, limit: int) -> str | None:
    """Why a client's message is refused for an id longer than `limit` characters (a request's
    string id, its session's id in the params or the `Acp-Session-Id` header), or None."""
    if session_header is not None and len(session_header) > limit:
        return f"Session ID exceeds maxIdLength ({limit})"
    if type(message) is not dict or "method" not in message:
        return None
    session = _session_of(message)
    if session is not None and len(session) > limit:
        return f"Session ID exceeds maxIdLength ({limit})"
    request_id = message.get("id")
    if type(request_id) is str and len(request_id) > limit:
        return f"Request ID exceeds maxIdLength ({limit})"
    return None


Event = tuple[int, bytes]
"""A message of an SSE stream and its event id (counting from 1 on each stream)."""


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """What the server keeps for its clients beyond a connection's own limits, and its
    operations.

    `replay_bytes`: the messages an SSE stream keeps after sending them, most recent first, for
    a client that reconnects with `Last-Event-ID` (a message sent just before a network blip
    may never have arrived). `close_grace`: the seconds a connection's handler is given to finish
    once its connection has ended (DELETE, or the server's shutdown) before it is cancelled: a
    handler at its concurrency limit reads nothing more, and would never see the end.
    `health_path`: answered `GET` 200 `ok` (503 `draining` once `drain` has begun), before the
    origin and `authorize` checks (a load balancer's probe carries no credentials); None: none.
    `body_timeout`: the seconds a POST's body may take to arrive; past it the request is answered
    408 with `Connection: close` and not executed. `max_connections`: the ACP connections (HTTP
    and WebSocket) open at once; one more is answered 503 with `Retry-After`. `idle_timeout`: the
    seconds an HTTP connection lives with no request in progress and no stream open; then it
    ends (its later requests get 404). `max_inbound_bytes`: the bytes of the messages a
    connection's client has posted that its handler has not yet read; past them a POST waits
    (WebSocket frames are read ahead within the same bytes). `log_interval`: one warning per
    cause per that many seconds, then how many like it were suppressed.
    `instance`: this process's name among several behind a load balancer (letters, digits, `_`
    and `-`, up to 64). Every connection id it issues starts with it and a `.`, and its answer to
    `initialize` sets the cookie `acp_instance` to it, so that a load balancer routing on either
    sends a connection's later requests to the process that holds the connection; a request
    naming a connection of another instance is answered 404 saying so, and logged. None: a
    random name per application (ids still name their process; no cookie is set)."""

    replay_bytes: int = DEFAULT_REPLAY_BYTES
    close_grace: float = DEFAULT_CLOSE_GRACE
    health_path: str | None = HEALTH_PATH
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_inbound_bytes: int = DEFAULT_MAX_INBOUND_BYTES
    log_interval: float = DEFAULT_LOG_INTERVAL
    instance: str | None = None

    def __post_init__(self) -> None:
        if self.instance is not None and not INSTANCE_PATTERN.fullmatch(self.instance):
            raise ValueError(
                f"ServerSettings.instance: expected 1 to 64 letters, digits, '_' or '-', found {self.instance!r}"
            )


DEFAULT_SERVER_SETTINGS: Final = ServerSettings()


def short_id(connection_id: str) -> str:
    """A connection id as logged: its instance and the first 8 characters of the rest (the whole
    id is the connection's only credential, and a log is read by more people than the
    connection's client)."""
    instance, dot, token = connection_id.rpartition(".")
    return f"{instance}{dot}{token[:8]}…"


def instance_of(connection_id: str) -> str | None:
    """The instance a connection id names (its part before the first `.`), or None."""
    instance, dot, _ = connection_id.partition(".")
    return instance if dot and INSTANCE_PATTERN.fullmatch(instance) else None


class LogThrottle:
    """Warnings bounded per cause: the first of a cause is logged, the others within `interval`
    seconds are counted, and the next one logged after that says how many were suppressed."""

    def __init__(self, logger: logging.Logger, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._last: dict[str, tuple[float, int]] = {}

    def warning(self, cause: str, message: str, *args: Any) -> bool:
        """Log `message % args` under `cause` unless one was logged within `interval`; whether
        it was logged."""
        now = self.clock()
        last = self._last.get(cause)
        if last is not None and now - last[0] < self.interval:
            self._last[cause] = (last[0], last[1] + 1)
            return False
        suppressed = last[1] if last is not None else 0
        if suppressed:
            message += " (%d more like it suppressed in the last %.0f s)"
            args = (*args, suppressed, now - last[0])  # type: ignore[index]
        self.logger.warning(message, *args)
        self._last[cause] = (now, 0)
        return True


class _Outbox:
    """The messages waiting for one SSE stream, the last ones sent (for `Last-Event-ID`), and
    whether a receiver holds it."""

    def __init__(self, replay_bytes: int) -> None:
        self.messages: deque[Event] = deque()
        self.bytes = 0
        self.next_id = 1
        self.sent: deque[Event] = deque()
        self.sent_bytes = 0
        self.replay_bytes = replay_bytes
        self.changed = asyncio.Event()
        self.receiver = False
        self.released = asyncio.Event()
        """Set when the receiver leaves: a GET taking the stream over waits for it."""
        self.taken_over = asyncio.Event()
        self.closed = False

    def put(self, message: bytes) -> None:
        self.messages.append((self.next_id, message))
        self.next_id += 1
        self.bytes += len(message)
        self.changed.set()

    def take(self) -> Event | None:
        if not self.messages:
            return None
        event = self.messages.popleft()
        self.bytes -= len(event[1])
        return event

    def unsend(self, event: Event) -> None:
        """`event`, taken but not sent (its receiver left), first again."""
        self.messages.appendleft(event)
        self.bytes += len(event[1])

    def sent_out(self, event: Event) -> None:
        """Keep `event` for a reconnecting client, forgetting the oldest past `replay_bytes`."""
        self.sent.append(event)
        self.sent_bytes += len(event[1])
        while self.sent_bytes > self.replay_bytes:
            self.sent_bytes -= len(self.sent.popleft()[1])

    def replay_after(self, last_id: int) -> None:
        """The messages sent after event `last_id` (those still kept), to be sent again first."""
        while self.sent and self.sent[-1][0] > last_id:
            event = self.sent.pop()
            self.sent_bytes -= len(event[1])
            self.unsend(event)
        self.changed.set()

    def close(self) -> None:
        self.closed = True
        self.changed.set()


class HttpConnection:
    """One ACP connection over HTTP: the handler's transport, the streams of its output."""

    def __init__(self, server: AcpHttpApp, connection_id: str, principal: Any = None) -> None:
        self.server = server
        self.id = connection_id
        self.principal = principal
        """Whom `authorize` named at `initialize` (None without `authorize`): the connection's
        later requests from another principal are refused 403; the agent reads it as
        `conn.principal`."""
        self.inbound: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=256)
        self.inbound_room = asyncio.Event()
        """Set when a message posted may be queued: there is room, or the connection has ended."""
        self.inbound_bytes = 0
        """The bytes of the messages in `inbound`, bounded by `max_inbound_bytes`."""
        self.active_requests = 0
        """The HTTP requests of this connection in progress (SSE streams among them)."""
        self.last_active = asyncio.get_running_loop().time()
        self.idle_timer: asyncio.TimerHandle | None = None
        self.streams: dict[Route, _Outbox] = {None: server.new_outbox()}
        self.pending_routes: dict[tuple[str, Any], Route] = {}
        """The client's requests → the stream their answer goes out on."""
        self.client_response_routes: dict[tuple[str, Any], Route] = {}
        """The agent's requests → the session they are about."""
        self.initialize_id: tuple[str, Any] | None = None
        self.initialized: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.closed = False
        self.ended = False
        self.drained = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    # --- the handler's side: a Transport ------------------------------------------------

    async def receive(self) -> bytes | None:
        if self.ended:
            return None
        message = await self.inbound.get()
        self.inbound_bytes -= len(message or b"")
        self.inbound_room.set()
        self.ended = message is None
        return message

    async def send(self, message: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("the HTTP connection is closed")
        try:
            parsed = _rt.parse_json(message)
        except DecodeError:
            parsed = None
        if type(parsed) is not dict:
            self._push(None, message)
            return
        key = _key(parsed.get("id"))
        if "method" not in parsed:
            if key is not None and key == self.initialize_id and not self.initialized.done():
                self.initialized.set_result(message)
                return
            route = self.pending_routes.pop(key, None) if key is not None else None
            self._push(route, message)
        else:
            session = _session_of(parsed)
            if session is not None and len(session) > self.server.max_id_length:
                self.close_for_limit(f"its agent issued a session ID over maxIdLength ({self.server.max_id_length})")
            if key is not None:
                self.client_response_routes[key] = session
            self._push(session, message)
        await self._wait_for_capacity()

    async def close(self) -> None:
        self.end()

    # --- the app's side -------------------------------------------------------------------

    def _push(self, route: Route, message: bytes) -> None:
        outbox = self.streams.get(route)
        if outbox is None:
            if self.buffered_session_streams() >= self.server.max_buffered_session_streams:
                limit = self.server.max_buffered_session_streams
                self.close_for_limit(f"its output would buffer more than maxBufferedSessionStreams ({limit}) sessions")
            outbox = self.streams[route] = self.server.new_outbox()
        outbox.put(message)

    def buffered_session_streams(self) -> int:
        """Sessions whose messages wait with no client receiving them."""
        return sum(1 for route, outbox in self.streams.items() if route is not None and not outbox.receiver)

    def close_for_limit(self, why: str) -> None:
        self.server.log.warning(f"limit: {why}", "closing HTTP connection %s: %s", short_id(self.id), why)
        self.end()
        raise ConnectionResetError(f"the connection closed: {why}")

    def buffered(self) -> int:
        return sum(outbox.bytes for outbox in self.streams.values())

    async def _wait_for_capacity(self) -> None:
        """Backpressure: the agent waits while its output not yet read exceeds the limit; a
        client that reads nothing for `max_output_stall` seconds loses the connection."""
        limit = self.server.max_buffered_bytes
        if self.buffered() <= limit:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.server.max_output_stall
        while self.buffered() > limit and not self.closed:
            self.drained.clear()
            try:
                await asyncio.wait_for(self.drained.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                self.server.log.warning(
                    "stopped reading", "closing HTTP connection %s: its client stopped reading", short_id(self.id)
                )
                self.end()
                raise ConnectionResetError("the client stopped reading its output") from None

    async def room(self) -> None:
        """Until the agent's output not yet read is within the limit, or the connection ends."""
        while self.buffered() > self.server.max_buffered_bytes and not self.closed:
            self.drained.clear()
            await self.drained.wait()

    async def deliver(self, message: bytes) -> bool:
        """A message the client posted, for the handler; False (dropped) once the connection has
        ended, also while it waited for room."""
        limit = self.server.server_settings.max_inbound_bytes
        while not self.closed and (
            self.inbound.full() or (self.inbound_bytes and self.inbound_bytes + len(message) > limit)
        ):  # (one message alone may take the whole room: `max_request_body_bytes` bounds it)
            self.inbound_room.clear()
            await self.inbound_room.wait()
        if self.closed:
            return False
        self.inbound.put_nowait(message)
        self.inbound_bytes += len(message)
        return True

    def begin_request(self) -> None:
        self.active_requests += 1

    def end_request(self) -> None:
        self.active_requests -= 1
        self.last_active = asyncio.get_running_loop().time()

    def watch_idle(self) -> None:
        """End the connection once it has been idle (no request in progress, no stream open) for
        `idle_timeout` seconds."""
        loop = asyncio.get_running_loop()
        timeout = self.server.server_settings.idle_timeout
        if self.closed:
            return
        if self.active_requests == 0 and loop.time() - self.last_active >= timeout:
            self.end()
            return
        wait = timeout if self.active_requests else timeout - (loop.time() - self.last_active)
        self.idle_timer = loop.call_later(max(wait, 0.0), self.watch_idle)

    def end(self) -> None:
        """End the connection: the handler's stream ends, every SSE stream ends."""
        if self.closed:
            return
        self.closed = True
        self.server.connections.pop(self.id, None)
        if self.idle_timer is not None:
            self.idle_timer.cancel()
        while not self.inbound.empty():  # released: nobody will handle them now
            self.inbound.get_nowait()
        self.inbound_bytes = 0
        self.inbound.put_nowait(None)
        self.inbound_room.set()  # the POSTs waiting for room are answered
        if self.task is not None and self.task is not asyncio.current_task():
            # a handler at its concurrency limit reads no more: it is given `close_grace` seconds
            grace = asyncio.get_running_loop().call_later(self.server.server_settings.close_grace, self.task.cancel)
            self.task.add_done_callback(lambda _: grace.cancel())
        for outbox in self.streams.values():
            outbox.close()
        if not self.initialized.done():
            self.initialized.set_exception(ConnectionResetError("the connection ended before initialize was answered"))
        self.drained.set()


class AcpHttpApp:
    """The ASGI application: `handler(transport)` serves each connection (HTTP or WebSocket).

    `allowed_origins`: the `Origin`s (`scheme://host:port`) a browser page may connect from; a
    request with any other `Origin` is refused 403 (clients that are not browsers send none). A
    page of an allowed origin gets CORS: its preflight `OPTIONS` is answered 204 (methods GET,
    POST, DELETE; headers `CORS_ALLOWED_HEADERS`), every response carries
    `Access-Control-Allow-Origin` (with credentials, `Vary: Origin`) and exposes the
    `Acp-Connection-Id` and `Acp-Session-Id` headers.
    `authorize(request)` (an `AuthRequest`) is asked before any message is handled and returns
    the request's principal (None or False: 401); a connection belongs to the principal of its
    `initialize` (or its WebSocket upgrade): its later requests from another get 403.
    `max_request_body_bytes` bounds a POST body (413; `max_message_bytes` too, when smaller),
    `max_message_bytes` a WebSocket frame (close 1009); `max_buffered_bytes` the agent's output of
    one connection not yet read by its client, beyond which the agent waits, and the client's
    requests are held back, for at most `max_output_stall` seconds before the connection ends
    (a WebSocket whose client reads nothing is dropped after that long too);
    `max_buffered_session_streams` the sessions of one connection holding output that no client
    receives (one more ends the connection); `max_id_length` the request and session ids a client
    may send (400, close 1008; an agent issuing a longer session id loses the connection)."""

    def __init__(
        self,
        handler: Handler,
        *,
        path: str = PATH,
        allowed_origins: Sequence[str] = (),
        authorize: Authorize | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        max_output_stall: float = DEFAULT_MAX_OUTPUT_STALL,
        max_request_body_bytes: int = DEFAULT_MAX_REQUEST_BODY_BYTES,
        max_buffered_session_streams: int = DEFAULT_MAX_BUFFERED_SESSION_STREAMS,
        max_id_length: int = DEFAULT_MAX_ID_LENGTH,
        keep_alive: float = KEEP_ALIVE_SECONDS,
        server_settings: ServerSettings = ServerSettings(),
    ) -> None:
        self.handler = handler
        self.path = path
        self.allowed_origins = frozenset(allowed_origins)
        self.authorize = authorize
        self.max_message_bytes = max_message_bytes
        self.max_buffered_bytes = max_buffered_bytes
        self.max_output_stall = max_output_stall
        self.max_request_body_bytes = max_request_body_bytes
        self.max_buffered_session_streams = max_buffered_session_streams
        self.max_id_length = max_id_length
        self.keep_alive = keep_alive
        self.server_settings = server_settings
        self.connections: dict[str, HttpConnection] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.draining = False
        self.websockets = 0
        """The WebSocket connections open (with `connections`, bounded by `max_connections`)."""
        self.log = LogThrottle(_log, server_settings.log_interval)
        self.instance = server_settings.instance or secrets.token_hex(4)
        """The prefix of this application's connection ids (`ServerSettings.instance`, or random)."""

    def new_connection_id(self) -> str:
        """A new connection's id: this instance's name, `.`, and 128 random bits (the id is the
        connection's only credential)."""
        return f"{self.instance}.{secrets.token_hex(16)}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind not in ("http", "websocket"):
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        if kind == "http" and scope["path"] == self.server_settings.health_path and scope["method"] == "GET":
            await _text(send, 503 if self.draining else 200, "draining" if self.draining else "ok")
            return
        if scope["path"] != self.path:
            await self._refuse(kind, send, 404, "Not Found")
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self.allowed_origins:
            await self._refuse(kind, send, 403, "Origin not allowed")
            return
        if origin is not None and kind == "http":
            if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
                await _preflight(send, origin)  # before `authorize`: a preflight carries no credentials
                return
            send = _with_cors(send, origin)
        principal = None
        if self.authorize is not None:
            client = scope.get("client")
            query = scope.get("query_string", b"").decode("latin-1")
            request = auth_request(
                method=scope.get("method", "GET"),
                target=f"{scope['path']}?{query}" if query else scope["path"],
                client=tuple(client) if client else None,
                headers=headers,
                transport=kind,
            )
            principal = await principal_of(self.authorize, request)
            if principal is None:
                await self._refuse(kind, send, 401, "Unauthorized")
                return
        if kind == "websocket":
            if self.draining:
                await self._refuse(kind, send, 503, "Draining")
                return
            if self.at_capacity():
                await self._refuse(kind, send, 503, "Too many connections", _RETRY_AFTER)
                return
            await self._websocket(receive, send, principal)
            return
        method = scope["method"]
        connection = self.connections.get(headers.get(CONNECTION_ID_HEADER, ""))
        if connection is not None and connection.principal != principal:
            await _text(send, 403, "Acp-Connection-Id belongs to another principal")
            return
        if connection is not None:
            connection.begin_request()  # not idle while it lasts
        try:
            if method == "POST":
                await self._post(headers, receive, send, principal)
            elif method == "GET":
                await self._get(headers, receive, send)
            elif method == "DELETE":
                await self._delete(headers, send)
            else:
                await _text(send, 405, "Method Not Allowed")
        finally:
            if connection is not None:
                connection.end_request()

    async def drain(self, seconds: float) -> None:
        """Stop taking connections (`initialize` and WebSocket upgrades answered 503, the health
        endpoint 503), give the HTTP connections with a request not yet answered (a turn
        running) up to `seconds` to answer them, then end every connection (`close`)."""
        self.draining = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while loop.time() < deadline and any(c.pending_routes for c in self.connections.values()):
            await asyncio.sleep(min(DRAIN_POLL_SECONDS, max(0.0, deadline - loop.time())))
        await self.close()

    async def close(self) -> None:
        """End every connection and wait for their handlers."""
        for connection in list(self.connections.values()):
            connection.end()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def at_capacity(self) -> bool:
        """Whether `max_connections` are open (a new one is refused 503)."""
        return len(self.connections) + self.websockets >= self.server_settings.max_connections

    async def _refuse(
        self, kind: str, send: Send, status: int, text: str, headers: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        if kind == "websocket":
            start = {"type": "websocket.http.response.start", "status": status, "headers": [*_TEXT_HEADERS, *headers]}
            await send(start)
            await send({"type": "websocket.http.response.body", "body": text.encode()})
        else:
            await _respond(send, status, [*_TEXT_HEADERS, *headers], text.encode())

    def new_outbox(self) -> _Outbox:
        return _Outbox(self.server_settings.replay_bytes)

    def _start(self, transport: Transport) -> asyncio.Task[None]:
        task = asyncio.ensure_future(self._run(transport))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run(self, transport: Transport) -> None:
        try:
            await self.handler(transport)
        except Exception:
            if self.log.warning("handler failed", "an ACP connection's handler failed"):
                _log.debug("the failure", exc_info=True)
        finally:
            with contextlib.suppress(Exception):
                await transport.close()

    # --- HTTP -------------------------------------------------------------------------------

    async def _post(self, headers: Mapping[str, str], receive: Receive, send: Send, principal: Any = None) -> None:
        if headers.get("content-type", "").split(";", 1)[0].strip().lower() != "application/json":
            await _text(send, 415, "Unsupported Media Type")
            return
        limit = min(self.max_request_body_bytes, self.max_message_bytes)
        declared = headers.get("content-length", "")
        try:
            if declared.isdigit() and int(declared) > limit:
                body = None
            else:
                body = await asyncio.wait_for(_read_body(receive, limit), self.server_settings.body_timeout)
        except ClientLeft:
            return  # nobody to answer, nothing to execute
        except TimeoutError:  # a slow (or slowloris) client: what came is not executed
            self.log.warning("body timeout", "a POST body took more than %s s", self.server_settings.body_timeout)
            await _respond(send, 408, [*_TEXT_HEADERS, (b"connection", b"close")], b"Request body timeout")
            return
        if body is None:
            await _text(send, 413, f"Request body exceeds {limit} bytes")
            return
        try:
            message = _rt.parse_json(body)
        except DecodeError:
            await _text(send, 400, "Invalid JSON")
            return
        if type(message) is list:
            error = {"code": _rt.INVALID_REQUEST, "message": "Invalid request: JSON-RPC batches are not supported"}
            await _json(send, 400, _rt.dump_json_bytes({"jsonrpc": "2.0", "id": None, "error": error}))
            return
        if type(message) is not dict:
            await _text(send, 400, "Invalid JSON-RPC message")
            return
        connection_id = headers.get(CONNECTION_ID_HEADER)
        refusal = over_long_id(message, headers.get(SESSION_ID_HEADER), self.max_id_length)
        if refusal is not None:
            await _text(send, 400, refusal)
            return
        if message.get("method") == "initialize" and "id" in message and message.get("jsonrpc") == "2.0":
            if connection_id:
                await _text(send, 400, "Initialize not allowed on existing connection")
            elif self.draining:
                await _text(send, 503, "Draining")
            elif self.at_capacity():
                await _respond(send, 503, [*_TEXT_HEADERS, *_RETRY_AFTER], b"Too many connections")
            else:
                await self._initialize(message, body, receive, send, principal)
            return
        connection = await self._named_connection(connection_id, send)
        if connection is None:
            return
        refusal = self._route_inbound(connection, message, headers.get(SESSION_ID_HEADER))
        if refusal is not None:
            await _text(send, 400, refusal)
            return
        if "method" in message and "id" in message and connection.buffered() > self.max_buffered_bytes:
            # a request makes the agent answer: held back while its output waits for the client
            if not await _until_done(connection.room(), receive):
                await _text(send, 499, "Request aborted")  # the client went away (as AcpServer answers)
                return
            if connection.closed:
                await _text(send, 404, "Unknown Acp-Connection-Id")
                return
        if not await connection.deliver(body):
            await _text(send, 404, "Unknown Acp-Connection-Id")  # it ended while the message waited
            return
        await _empty(send, 202)

    def _route_inbound(self, connection: HttpConnection, message: dict[str, Any], header: str | None) -> str | None:
        """Why a posted message is refused (400), or None; records where its answer goes."""
        key = _key(message.get("id"))
        if "method" not in message:
            route = connection.client_response_routes.pop(key, None) if key is not None else None
            if header is not None and route is not None and header != route:
                return "Mismatched Acp-Session-Id"
            return None  # matched to its request by id, with or without the header
        session = _session_of(message)
        if header is None and (session is not None or message.get("method") in SESSION_SCOPED_METHODS):
            return "Missing Acp-Session-Id"
        if header is not None and session is not None and header != session:
            return "Mismatched Acp-Session-Id"
        if key is not None and _well_formed_request(message):
            # (a malformed one is answered with `id: null`: its route would never be taken)
            connection.pending_routes[key] = None if message.get("method") == "session/load" else header or session
        return None

    async def _initialize(
        self, message: dict[str, Any], body: bytes, receive: Receive, send: Send, principal: Any = None
    ) -> None:
        if message.get("id") is None:
            await _text(send, 400, "Initialize request must include an ID")
            return
        connection = HttpConnection(self, self.new_connection_id(), principal)
        connection.initialize_id = _key(message["id"])
        self.connections[connection.id] = connection
        connection.task = self._start(connection)
        connection.begin_request()
        connection.watch_idle()
        await connection.deliver(body)
        try:
            if not await _until_done(asyncio.shield(connection.initialized), receive):
                connection.end()  # the client went away before the answer: no connection is left behind
                connection.initialized.exception()  # retrieved: nobody waits for it any more
                await _text(send, 499, "Request aborted")
                return
            answer = connection.initialized.result()
        except ConnectionResetError as error:
            connection.end()
            failure = {"code": _rt.INTERNAL_ERROR, "message": "Initialize failed", "data": str(error)}
            await _json(send, 500, _rt.dump_json_bytes({"jsonrpc": "2.0", "id": message["id"], "error": failure}))
            return
        finally:
            connection.end_request()
        headers = [(CONNECTION_ID_HEADER.encode(), connection.id.encode())]
        if self.server_settings.instance is not None:  # for a load balancer that routes on it
            cookie = f"{AFFINITY_COOKIE}={self.instance}; Path=/; HttpOnly; SameSite=Lax"
            headers.append((b"set-cookie", cookie.encode()))
        await _json(send, 200, answer, headers)

    async def _named_connection(self, connection_id: str | None, send: Send) -> HttpConnection | None:
        """The connection `Acp-Connection-Id` names, or None once the 400 (no id) or the 404
        (an unknown one) is answered."""
        if not connection_id:
            await _text(send, 400, "Missing Acp-Connection-Id")
            return None
        connection = self.connections.get(connection_id)
        if connection is None:
            owner = instance_of(connection_id)
            if owner is not None and owner != self.instance:  # a load balancer without affinity
                self.log.warning(
                    "misrouted",
                    "a request for connection %s of instance %r reached instance %r: route a connection's "
                    "requests by the %s cookie or by its id's prefix",
                    short_id(connection_id),
                    owner,
                    self.instance,
                    AFFINITY_COOKIE,
                )
                why = f"Unknown Acp-Connection-Id: issued by instance {owner!r}, this is instance {self.instance!r}"
                await _text(send, 404, why)
                return None
            await _text(send, 404, "Unknown Acp-Connection-Id")
        return connection

    async def _get(self, headers: Mapping[str, str], receive: Receive, send: Send) -> None:
        if "text/event-stream" not in headers.get("accept", "").lower():
            await _text(send, 406, "Not Acceptable")
            return
        connection = await self._named_connection(headers.get(CONNECTION_ID_HEADER), send)
        if connection is None:
            return
        route = headers.get(SESSION_ID_HEADER) or None
        refusal = over_long_id(None, route, self.max_id_length)
        if refusal is not None:
            await _text(send, 400, refusal)
            return
        outbox = connection.streams.get(route)
        if outbox is None:
            outbox = connection.streams[route] = self.new_outbox()
        last_event_id = headers.get("last-event-id", "")
        if outbox.receiver and last_event_id.isdigit():
            # a client resuming its stream after a blip takes it over from its half-open receiver
            outbox.taken_over.set()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(outbox.released.wait(), self.max_output_stall)
        if outbox.receiver:
            await _text(send, 409, "Outbound stream already has an active receiver")
            return
        outbox.receiver = True
        outbox.released.clear()
        outbox.taken_over.clear()
        if last_event_id.isdigit():
            outbox.replay_after(int(last_event_id))
        try:
            await self._stream(connection, outbox, receive, send)
        finally:
            outbox.receiver = False
            outbox.released.set()
            if route is not None and not outbox.messages and connection.streams.get(route) is outbox:
                del connection.streams[route]
            elif route is not None and connection.buffered_session_streams() > self.max_buffered_session_streams:
                with contextlib.suppress(ConnectionResetError):
                    connection.close_for_limit("a client left a session stream past maxBufferedSessionStreams")

    async def _stream(self, connection: HttpConnection, outbox: _Outbox, receive: Receive, send: Send) -> None:
        """Send `outbox` as server-sent events until the connection ends, the client leaves, or
        another GET takes the stream over. The client's departure is looked for before each
        message (the ASGI server drops a send after it silently: the message stays queued for
        the next receiver), and each send is bounded by `max_output_stall` (a client that stops
        reading cannot hold the stream, nor the server's shutdown, for longer)."""
        stall = self.max_output_stall
        await within(send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}), stall)
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            while not gone.done() and not outbox.taken_over.is_set():
                event = outbox.take()
                if event is not None:
                    connection.drained.set()
                    outbox.sent_out(event)  # kept from now: a send cut short may not have arrived
                    body = b"id: %d\ndata: %s\n\n" % event
                    await within(send({"type": "http.response.body", "body": body, "more_body": True}), stall)
                    await asyncio.sleep(0)  # the client's departure, if any, is seen before the next one
                    continue
                if outbox.closed:
                    break
                outbox.changed.clear()
                changed = asyncio.ensure_future(outbox.changed.wait())
                taken = asyncio.ensure_future(outbox.taken_over.wait())
                done, _ = await asyncio.wait(
                    {changed, gone, taken}, timeout=self.keep_alive, return_when="FIRST_COMPLETED"
                )
                changed.cancel()
                taken.cancel()
                if not done:
                    await within(send({"type": "http.response.body", "body": b":\n\n", "more_body": True}), stall)
            if not gone.done():
                await within(send({"type": "http.response.body", "body": b"", "more_body": False}), stall)
        except (TimeoutError, OSError):
            pass  # the client left, or stopped reading: the messages not sent wait for the next receiver
        finally:
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone

    async def _delete(self, headers: Mapping[str, str], send: Send) -> None:
        connection = await self._named_connection(headers.get(CONNECTION_ID_HEADER), send)
        if connection is None:
            return
        connection.end()
        await _empty(send, 202)

    # --- WebSocket ----------------------------------------------------------------------------

    async def _websocket(self, receive: Receive, send: Send, principal: Any = None) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        transport = AsgiWebSocketTransport(
            receive,
            send,
            self.max_message_bytes,
            max_output_stall=self.max_output_stall,
            max_id_length=self.max_id_length,
            max_read_ahead_bytes=self.server_settings.max_inbound_bytes,
            log=self.log,
            principal=principal,
        )
        connection_id = self.new_connection_id()
        self.websockets += 1
        await send({"type": "websocket.accept", "headers": [(CONNECTION_ID_HEADER.encode(), connection_id.encode())]})
        reading = asyncio.ensure_future(transport.read_frames())
        try:
            await serve_until_gone(self._start(transport), transport.departed.wait(), self.server_settings.close_grace)
        finally:
            self.websockets -= 1
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading


class AsgiWebSocketTransport:
    """A `Transport` over an ASGI WebSocket: one message per text frame; a binary frame is
    ignored, a frame over `max_message_bytes` closes the socket with 1009, a request or session
    id over `max_id_length` with 1008; a send the client does not take within `max_output_stall`
    seconds (it stopped reading) ends the connection.

    `read_frames`, run beside the handler, reads ahead up to `WEBSOCKET_READ_AHEAD` frames: the
    client's departure is seen (`departed`) while its handler reads nothing (at its concurrency
    limit), unless that many frames wait before it."""

    def __init__(
        self,
        receive: Receive,
        send: Send,
        max_message_bytes: int,
        *,
        max_output_stall: float = DEFAULT_MAX_OUTPUT_STALL,
        max_id_length: int = DEFAULT_MAX_ID_LENGTH,
        max_read_ahead_bytes: int = DEFAULT_MAX_INBOUND_BYTES,
        log: LogThrottle | None = None,
        principal: Any = None,
    ) -> None:
        self.principal = principal
        """Whom `authorize` named at the upgrade (the agent reads it as `conn.principal`)."""
        self._receive = receive
        self._read_ahead_bytes = max_read_ahead_bytes
        self._frame_bytes = 0
        self._log = log or LogThrottle(_log, DEFAULT_LOG_INTERVAL)
        self._send = send
        self._limit = max_message_bytes
        self._stall = max_output_stall
        self._max_id_length = max_id_length
        self._closed = False
        self._frames: asyncio.Queue[Message] = asyncio.Queue()
        self._frame_taken = asyncio.Event()
        self.departed = asyncio.Event()

    async def read_frames(self) -> None:
        while True:
            while self._frames.qsize() >= WEBSOCKET_READ_AHEAD or (
                self._frames.qsize() and self._frame_bytes >= self._read_ahead_bytes
            ):
                self._frame_taken.clear()
                await self._frame_taken.wait()
            event = await self._receive()
            self._frame_bytes += _frame_size(event)
            self._frames.put_nowait(event)  # the departure too, past the read-ahead
            if event["type"] == "websocket.disconnect":
                self.departed.set()
                return

    async def receive(self) -> bytes | None:
        while not self._closed:
            event = await self._frames.get()
            self._frame_bytes -= _frame_size(event)
            self._frame_taken.set()
            if event["type"] == "websocket.disconnect":
                self._closed = True
                return None
            text = event.get("text")
            if text is None:
                self._log.warning("binary frame", "ignoring a binary WebSocket frame")
                continue
            data: bytes = text.encode("utf-8", "surrogatepass")
            if len(data) > self._limit:
                await self._close(1009)
                raise MessageTooLarge("a WebSocket frame longer than the limit")
            if len(data) > self._max_id_length:  # a shorter message cannot hold a longer id
                with contextlib.suppress(DecodeError):
                    refusal = over_long_id(_rt.parse_json(data), None, self._max_id_length)
                    if refusal is not None:
                        await self._close(1008)
                        raise ConnectionResetError(f"the WebSocket is closed: {refusal}")
            return data
        return None

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionResetError("the WebSocket is closed")
        try:
            await within(
                self._send({"type": "websocket.send", "text": message.decode("utf-8", "surrogatepass")}), self._stall
            )
        except TimeoutError:  # before OSError: TimeoutError is one since Python 3.11
            self._closed = True
            self._log.warning("stopped reading", "dropping a WebSocket whose client stopped reading")
            raise ConnectionResetError("the client stopped reading") from None
        except OSError as error:
            self._closed = True
            raise ConnectionResetError(f"the WebSocket is closed: {error}") from None

    async def close(self) -> None:
        await self._close(1000)

    async def _close(self, code: int) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                await self._send({"type": "websocket.close", "code": code})


def _frame_size(event: Message) -> int:
    return len(event.get("text") or "") + len(event.get("bytes") or b"")


_TEXT_HEADERS: Final = [(b"content-type", b"text/plain; charset=utf-8")]
_RETRY_AFTER: Final = [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"connection", b"keep-alive"),
]


class ClientLeft(Exception):
    """The client disconnected before its request's body ended."""


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, None when it is longer than `limit`; `ClientLeft` when the client goes
    before it ends (what came is not the message it meant to send)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            raise ClientLeft
        chunk: bytes = event.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not event.get("more_body", False):
            return b"".join(chunks)


async def within(work: Awaitable[None], seconds: float) -> None:
    """Await `work`; `asyncio.TimeoutError` once it has taken `seconds`. A timer that cancels
    this task, cheaper than `asyncio.wait_for` (a task per call, and a turn of the loop: it
    halved the messages per second of a WebSocket, measured here)."""
    task = asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        await work
    except asyncio.CancelledError:
        if not expired:
            raise
        if hasattr(task, "uncancel"):  # Python 3.11+: this cancellation was ours, and is handled
            task.uncancel()
        raise TimeoutError from None
    finally:
        timer.cancel()


async def serve_until_gone(handler: asyncio.Task[None], gone: Awaitable[Any], grace: float) -> None:
    """Await `handler`; once its client is `gone`, give it `grace` seconds, then cancel it (one
    at its concurrency limit reads nothing, and would never see the end)."""
    watching = asyncio.ensure_future(gone)
    try:
        await asyncio.wait({handler, watching}, return_when=asyncio.FIRST_COMPLETED)
        if not handler.done():
            await asyncio.wait({handler}, timeout=grace)
            handler.cancel()
        await asyncio.gather(handler, return_exceptions=True)
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _until_done(work: Awaitable[Any], receive: Receive) -> bool:
    """Wait for `work`; False, with `work` cancelled, when the client disconnects first."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await gone
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return False
    if not task.cancelled():
        task.exception()  # retrieved: the caller reads the outcome from `work` itself
    return True


def _cors_headers(origin: str) -> list[tuple[bytes, bytes]]:
    """What lets a page of `origin` (an allowed one) read a response: the origin itself, not `*`,
    and credentials allowed, as the TypeScript SDK's HTTP client sends its cookies by default
    (`credentials: "include"`); the connection and session ids readable by the page."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-credentials", b"true"),
        (b"access-control-expose-headers", CORS_EXPOSED_HEADERS.encode()),
        (b"vary", b"Origin"),
    ]


def _with_cors(send: Send, origin: str) -> Send:
    """`send`, adding the CORS headers of `origin` to the response: without them a browser hides
    every response (its status, body and `Acp-Connection-Id`) from a page of another origin."""
    cors = _cors_headers(origin)

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *cors]}
        await send(message)

    return send_with_cors


async def _preflight(send: Send, origin: str) -> None:
    """The answer to a browser's preflight (`OPTIONS` with `Access-Control-Request-Method`) from
    an allowed `origin`: the methods and headers of ACP over HTTP, cached for ten minutes. (The
    TypeScript SDK's `AcpServer` answers `OPTIONS` 405: a browser cannot use it across origins.)"""
    headers = [
        *_cors_headers(origin),
        (b"access-control-allow-methods", CORS_ALLOWED_METHODS.encode()),
        (b"access-control-allow-headers", CORS_ALLOWED_HEADERS.encode()),
        (b"access-control-max-age", str(CORS_MAX_AGE_SECONDS).encode()),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _text(send: Send, status: int, text: str) -> None:
    await _respond(send, status, _TEXT_HEADERS, text.encode())


async def _json(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await _respond(send, status, [(b"content-type", b"application/json"), *(headers or [])], body)


async def _empty(send: Send, status: int) -> None:
    await _respond(send, status, [], b"")


async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """A whole response, its length declared (without it the server would frame it chunked)."""
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})
