"""ACP over WebSocket, as the TypeScript SDK 2.4.0 (`experimental/ws-client`, `AcpServer`) and the
Python SDK 0.12.1 (`acp.ws`) speak it: one JSON-RPC message per text frame, on the endpoint
`/acp`, the server naming the connection with `Acp-Connection-Id` on its `101` response.

Needs the `websockets` library (the package's `websocket` extra); importing this module
without it raises an `ImportError` that says so. `import package` never imports it: the
connection module's `connect_websocket` and `serve_websocket` import it on first call."""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Final

from . import _runtime as _rt
from ._connection import DEFAULT_LIMITS, Transport
from ._cookies import AffinityCookies
from ._http_server import (
    _RETRY_AFTER,
    DEFAULT_CLOSE_GRACE,
    DEFAULT_LOG_INTERVAL,
    DEFAULT_SERVER_SETTINGS,
    LogThrottle,
    ServerSettings,
    auth_request,
    principal_of,
    serve_until_gone,
    within,
)
from ._http_server import (
    Authorize as Authorize,  # re-exported: the connection module's `serve_websocket` names it
)

try:
    from websockets.asyncio.client import ClientConnection, connect
    from websockets.asyncio.connection import Connection
    from websockets.asyncio.server import Server, ServerConnection, serve
    from websockets.exceptions import ConnectionClosed as _WebSocketClosed
    from websockets.http11 import Request, Response
except ImportError as error:  # pragma: no cover - exercised in a clean interpreter by the tests
    raise ImportError(
        f"{__package__}'s WebSocket transport needs the websockets library: "
        f"install the package's `websocket` extra (pip install 'DIR[websocket]') or `pip install websockets`"
    ) from error

_log = logging.getLogger(f"{_rt.LOGGER}.websocket")
_throttle = LogThrottle(_log, DEFAULT_LOG_INTERVAL)
"""This module's warnings, one per cause per minute (a peer can cause them at will)."""

PATH: Final = "/acp"
"""The endpoint both official SDKs serve and connect to."""
CONNECTION_ID_HEADER: Final = "Acp-Connection-Id"
DEFAULT_MAX_MESSAGE_BYTES: Final = DEFAULT_LIMITS.max_message_bytes  # as over stdio
"""A frame longer than this closes the connection with 1009 (message too big)."""
CLOSE_TIMEOUT: Final = 5.0
DEFAULT_MAX_OUTPUT_STALL: Final = 60.0
"""How long a send may wait for a peer that does not read before the connection is dropped."""
DEFAULT_MAX_BUFFERED_BYTES: Final = DEFAULT_LIMITS.max_buffered_bytes
"""The replies (pongs) a connection writes for a peer that reads none of them, at most."""


class _RepliesBounded(Connection):
    """A `websockets` connection that bounds the replies it writes for a peer that does not read.

    `websockets` answers each ping with a pong (and a close with a close) as the frame arrives,
    straight to the socket, without waiting for the peer to read: a peer that sends pings and
    reads nothing would grow the socket's write buffer without end. While writing is paused
    (the buffer is over its high-water mark: the peer is behind), the bytes such replies add
    are counted; past `max_unread_replies` the connection is aborted. What the agent sends is
    not counted: its sends wait for the buffer to drain (`WebSocketTransport.send`)."""

    max_unread_replies: int = DEFAULT_MAX_BUFFERED_BYTES
    _unread_replies = 0

    def data_received(self, data: bytes) -> None:
        before = self.transport.get_write_buffer_size()
        super().data_received(data)
        if not self.paused or self.transport.is_closing():
            return
        self._unread_replies += max(0, self.transport.get_write_buffer_size() - before)
        if self._unread_replies > self.max_unread_replies:
            _throttle.warning(
                "replies unread",
                "dropping a WebSocket whose peer reads none of the %d bytes of replies to its frames",
                self._unread_replies,
            )
            self.transport.abort()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unread_replies = 0  # the peer has read nearly all it was sent


class WebSocketTransport:
    """A `Transport` over an open `websockets` connection: each message is one text frame.

    A binary frame is ignored (with a warning), as the TypeScript SDK does; the end of the
    WebSocket, clean or not, is the end of the stream."""

    def __init__(
        self,
        websocket: ClientConnection | ServerConnection,
        connection_id: str | None = None,
        *,
        max_output_stall: float = DEFAULT_MAX_OUTPUT_STALL,
    ) -> None:
        self.websocket = websocket
        self.connection_id = connection_id
        self.principal: object = None
        """Whom `authorize` named at the upgrade (server side; the agent reads `conn.principal`)."""
        """The `Acp-Connection-Id` of this connection (None when the server sent none)."""
        self.max_output_stall = max_output_stall

    async def receive(self) -> bytes | None:
        while True:
            try:
                frame = await self.websocket.recv()
            except _WebSocketClosed:
                return None
            if isinstance(frame, str):
                return frame.encode("utf-8", "surrogatepass")
            _throttle.warning("binary frame", "ignoring a binary WebSocket frame of %d bytes", len(frame))

    async def send(self, message: bytes) -> None:
        """Send one text frame, waiting while the socket's buffer is full (websockets' write
        limit); a peer that reads nothing for `max_output_stall` seconds is dropped."""
        try:
            await within(self.websocket.send(message, text=True), self.max_output_stall)
        except _WebSocketClosed as error:
            raise ConnectionResetError(f"the WebSocket is closed: {error}") from None
        except TimeoutError:
            _throttle.warning("stopped reading", "dropping a WebSocket whose peer stopped reading")
            self.websocket.transport.abort()
            raise ConnectionResetError("the peer stopped reading") from None

    async def close(self) -> None:
        """Close the WebSocket (1000), waiting at most the connection's `close_timeout`."""
        await self.websocket.close()


@contextlib.asynccontextmanager
async def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    open_timeout: float = 10.0,
    cookies: AffinityCookies | None = None,
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
) -> AsyncIterator[WebSocketTransport]:
    """Connect to the agent at `url` (`ws://` or `wss://`, the server's `/acp`) and yield the
    transport; `headers` go on the upgrade request (`Authorization`, say), and the `cookies`
    stored from earlier connections; the cookies the `101` sets are stored in them. The
    WebSocket is closed on exit, and aborted before if the agent reads none of the replies
    (pongs) to its frames once they pass `max_buffered_bytes` (`_RepliesBounded`)."""
    upgrade_headers = dict(headers or {})
    if cookies is not None:
        caller = next((name for name in upgrade_headers if name.lower() == "cookie"), None)
        header = cookies.header(upgrade_headers.pop(caller) if caller is not None else None)
        if header is not None:
            upgrade_headers["Cookie"] = header

    class BoundedConnection(_RepliesBounded, ClientConnection):
        max_unread_replies = max_buffered_bytes

    websocket = await connect(
        url,
        additional_headers=upgrade_headers,
        max_size=max_message_bytes,
        open_timeout=open_timeout,
        close_timeout=CLOSE_TIMEOUT,
        compression=None,
        create_connection=BoundedConnection,
    )
    response = websocket.response
    connection_id = response.headers.get(CONNECTION_ID_HEADER) if response is not None else None
    if cookies is not None and response is not None:
        cookies.store(response.headers.get_all("Set-Cookie"))
    try:
        yield WebSocketTransport(websocket, connection_id)
    finally:
        await websocket.close()


class WebSocketServer:
    """A running WebSocket server (`serve_websocket`): its address and its end."""

    def __init__(self, server: Server, path: str) -> None:
        self.server = server
        self.path = path

    @property
    def port(self) -> int:
        """The port it listens on (the one chosen when asked for port 0)."""
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        """`ws://host:port/acp` of its first socket."""
        host = self.server.sockets[0].getsockname()[0]
        host = f"[{host}]" if ":" in host else host
        return f"ws://{host}:{self.port}{self.path}"

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        await self.server.serve_forever()

    def close(self) -> None:
        """Stop accepting connections and close the open ones."""
        self.server.close()

    async def wait_closed(self) -> None:
        await self.server.wait_closed()


@contextlib.asynccontextmanager
async def serve_transports(
    handler: Callable[[WebSocketTransport], Awaitable[None]],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = PATH,
    allowed_origins: Sequence[str] = (),
    authorize: Authorize | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_output_stall: float = DEFAULT_MAX_OUTPUT_STALL,
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
    close_grace: float = DEFAULT_CLOSE_GRACE,
    server_settings: ServerSettings = DEFAULT_SERVER_SETTINGS,
) -> AsyncIterator[WebSocketServer]:
    """Listen on `host:port` and run `handler` with a transport for each WebSocket opened at
    `path`; the socket is closed when it returns. A frame over `max_message_bytes` closes the
    socket with 1009; a client that reads nothing for `max_output_stall` seconds while the agent
    writes is dropped, and one that reads none of the replies (pongs) to its frames once they
    pass `max_buffered_bytes` (`_RepliesBounded`); once a client has gone, its handler is given
    `close_grace` seconds, then cancelled. `server_settings.max_connections` WebSockets at once:
    one more is answered 503 with `Retry-After`.

    Before the upgrade: another path is answered 404; a request with an `Origin` header not in
    `allowed_origins` (exact `scheme://host:port` strings) 403, so that no web page can reach a
    local agent unless allowed (clients that are not browsers send no `Origin`); `authorize`,
    given the request (an `AuthRequest`), returning None or False 401; what else it returns is
    the connection's principal (the agent's `conn.principal`). The `101` response
    carries a fresh `Acp-Connection-Id`."""
    origins = frozenset(allowed_origins)

    class BoundedConnection(_RepliesBounded, ServerConnection):
        max_unread_replies = max_buffered_bytes

    connection_ids: dict[ServerConnection, str] = {}
    principals: dict[ServerConnection, object] = {}
    open_count = 0

    async def process_request(connection: ServerConnection, request: Request) -> Response | None:
        if request.path.partition("?")[0] != path:
            return connection.respond(http.HTTPStatus.NOT_FOUND, "Not Found\n")
        origin = request.headers.get("Origin")
        if origin is not None and origin not in origins:
            return connection.respond(http.HTTPStatus.FORBIDDEN, "Origin not allowed\n")
        principal = None
        if authorize is not None:
            headers: dict[str, str] = {}
            for header, text in request.headers.raw_items():
                headers.setdefault(header.lower(), text)
            address = connection.remote_address
            asked = auth_request(
                method="GET",
                target=request.path,
                client=(str(address[0]), int(address[1])) if address else None,
                headers=headers,
                transport="websocket",
            )
            principal = await principal_of(authorize, asked)
            if principal is None:
                return connection.respond(http.HTTPStatus.UNAUTHORIZED, "Unauthorized\n")
        if open_count >= server_settings.max_connections:
            refusal = connection.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, "Too many connections\n")
            for name, value in _RETRY_AFTER:
                refusal.headers[name.decode()] = value.decode()
            return refusal
        connection_ids[connection] = secrets.token_hex(16)
        principals[connection] = principal
        return None

    def process_response(connection: ServerConnection, request: Request, response: Response) -> Response:
        connection_id = connection_ids.get(connection)
        if connection_id is not None and response.status_code == http.HTTPStatus.SWITCHING_PROTOCOLS:
            response.headers[CONNECTION_ID_HEADER] = connection_id
        return response

    async def serve_connection(connection: ServerConnection) -> None:
        nonlocal open_count
        open_count += 1
        try:
            await serve_open(connection)
        finally:
            open_count -= 1

    async def serve_open(connection: ServerConnection) -> None:
        transport = WebSocketTransport(connection, connection_ids.get(connection), max_output_stall=max_output_stall)
        transport.principal = principals.pop(connection, None)
        serving = asyncio.ensure_future(handler(transport))
        serving.add_done_callback(_log_failure)
        try:
            # a handler at its concurrency limit reads nothing: the client's departure ends it
            await serve_until_gone(serving, connection.wait_closed(), close_grace)
        finally:
            connection_ids.pop(connection, None)
            await connection.close()

    server = await serve(
        serve_connection,
        host,
        port,
        process_request=process_request,
        process_response=process_response,
        max_size=max_message_bytes,
        close_timeout=CLOSE_TIMEOUT,
        compression=None,
        create_connection=BoundedConnection,
    )
    wrapped = WebSocketServer(server, path)
    try:
        yield wrapped
    finally:
        server.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(server.wait_closed(), CLOSE_TIMEOUT * 2)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        _log.error("a WebSocket connection's handler failed", exc_info=task.exception())


def _check(transport: WebSocketTransport) -> Transport:
    return transport  # WebSocketTransport is a Transport (checked by mypy)
