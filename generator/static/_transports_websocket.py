"""The entry points of ACP over WebSocket (the `websocket` extra's websockets library):
`connect_websocket` and `open_websocket` (the client) and `serve_websocket` (a server of its
own). A package generated without the `websocket` extra carries neither this module nor the
transport; `transports` re-exports its names. (`http_app` serves WebSocket too, over ASGI.)"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ._connection import DEFAULT_OPTIONS, ConnectionOptions, Transport
from ._cookies import AffinityCookies
from ._router import Routable
from ._transports import serve_agent
from .connection import Agent, Client, ClientSideConnection

if TYPE_CHECKING:
    from ._websocket import Authorize, WebSocketServer

__all__ = ["connect_websocket", "open_websocket", "serve_websocket"]


@contextlib.asynccontextmanager
async def connect_websocket(
    client: Client,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    open_timeout: float = 10.0,
    cookies: AffinityCookies | None = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AsyncIterator[ClientSideConnection]:
    """Connect `client` to the agent at `url` over WebSocket (`ws://host:port/acp`, `wss://`;
    one JSON-RPC message per text frame), `headers` on the upgrade request; the connection is
    closed on exit. `cookies`, shared by the connections to one agent, keep the cookies its
    server (a load balancer) sets, and send them again: a reconnect reaches the same worker.
    The connection takes `options` (a frame is bounded by `options.limits.max_message_bytes`).
    Needs the `websocket` extra (the `websockets` library)."""
    options = ConnectionOptions.checked(options)
    opened = open_websocket(url, headers=headers, open_timeout=open_timeout, cookies=cookies, options=options)
    async with opened as transport:
        conn = ClientSideConnection(client, transport, options=options)
        try:
            yield conn
        finally:
            await conn.close()


def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    open_timeout: float = 10.0,
    cookies: AffinityCookies | None = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> contextlib.AbstractAsyncContextManager[Transport]:
    """The transport `connect_websocket` connects over, without a connection: for
    `connect_negotiated`, which picks the connection of the version the agent answers. The
    options are `connect_websocket`'s (of `options`, the transport reads `limits`); the
    WebSocket is closed on exit."""
    from . import _websocket

    limits = ConnectionOptions.checked(options).limits
    return _websocket.open_websocket(
        url,
        headers=headers,
        max_message_bytes=limits.max_message_bytes,
        open_timeout=open_timeout,
        cookies=cookies,
        max_buffered_bytes=limits.max_buffered_bytes,
    )


@contextlib.asynccontextmanager
async def serve_websocket(
    *agents: Callable[[], Agent | Routable],
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/acp",
    allowed_origins: Sequence[str] = (),
    authorize: Authorize | None = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AsyncIterator[WebSocketServer]:
    """Serve agents over WebSocket at `ws://host:port/acp` while the context is open (port 0:
    any free port, `server.port`). `agents` make the agents of one connection, one per protocol
    version (a class is such a callable: `serve_websocket(EchoAgent, EchoAgentV1)`); each
    WebSocket gets its own, routed as `serve_agent` says. A request with an `Origin` header not
    in `allowed_origins` is refused (403), one `authorize(request)` refuses 401 (None or
    False; anything else is the connection's principal, `conn.principal`); the `101`
    response carries `Acp-Connection-Id`. A frame over `options.limits.max_message_bytes`
    closes the socket (1009); a client that reads nothing for `options.limits.max_output_stall`
    seconds while its agent writes is dropped, and one that reads none of the pongs to its pings
    once they pass `options.limits.max_buffered_bytes`. Each connection takes `options`, as
    `serve_agent` says. Needs the `websocket` extra (the `websockets` library)."""
    from . import _websocket

    options = ConnectionOptions.checked(options)

    async def handle(transport: Transport) -> None:
        await serve_agent(transport, *(make() for make in agents), options=options)

    async with _websocket.serve_transports(
        handle,
        host=host,
        port=port,
        path=path,
        allowed_origins=allowed_origins,
        authorize=authorize,
        max_message_bytes=options.limits.max_message_bytes,
        max_output_stall=options.limits.max_output_stall,
        max_buffered_bytes=options.limits.max_buffered_bytes,
    ) as server:
        yield server
