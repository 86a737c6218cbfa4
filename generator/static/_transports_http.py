"""The entry points of ACP over Streamable HTTP: `connect_http` and `open_http` (the client,
over the `http` extra's httpx) and `http_app` (the server, an ASGI application that needs
nothing beyond the standard library). A package generated without the `http` extra carries
neither this module nor the HTTP server and client; `transports` re-exports its names."""

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
    from ._http_server import AcpHttpApp, Authorize

__all__ = ["connect_http", "http_app", "open_http"]


@contextlib.asynccontextmanager
async def connect_http(
    client: Client,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: AffinityCookies | None = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AsyncIterator[ClientSideConnection]:
    """Connect `client` to the agent at `url` over Streamable HTTP (`http://host:port/acp`,
    `https://`: POST per message, server-sent events per connection and per session), with
    `headers` on every request; on exit the connection is closed and ended with `DELETE`. HTTP
    errors as the TypeScript SDK's `createHttpStream` maps them (`_http_client`'s docstring).
    `cookies` as for `connect_websocket`. The connection takes `options` (a message is bounded
    by `options.limits.max_message_bytes`). Needs the `http` extra (the `httpx` library)."""
    options = ConnectionOptions.checked(options)
    async with open_http(url, headers=headers, cookies=cookies, options=options) as transport:
        conn = ClientSideConnection(client, transport, options=options)
        try:
            yield conn
        finally:
            await conn.close()


def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: AffinityCookies | None = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> contextlib.AbstractAsyncContextManager[Transport]:
    """The transport `connect_http` connects over, without a connection: for
    `connect_negotiated`, which picks the connection of the version the agent answers. The
    options are `connect_http`'s (of `options`, the transport reads `limits`); on exit the
    connection is ended with `DELETE`."""
    from . import _http_client

    limits = ConnectionOptions.checked(options).limits
    return _http_client.open_http(url, headers=headers, max_message_bytes=limits.max_message_bytes, cookies=cookies)


def http_app(
    *agents: Callable[[], Agent | Routable],
    path: str = "/acp",
    allowed_origins: Sequence[str] = (),
    authorize: Authorize | None = None,
    max_request_body_bytes: int = 16 * 1024 * 1024,
    max_buffered_session_streams: int = 1024,
    options: ConnectionOptions = DEFAULT_OPTIONS,
    instance: str | None = None,
) -> AcpHttpApp:
    """An ASGI application serving agents over Streamable HTTP and WebSocket at `path`, wire-
    compatible with the TypeScript SDK's `AcpServer`: run it with any ASGI server
    (`uvicorn.run(app, host="127.0.0.1", port=8765)`). `agents` make the agents of one connection,
    one per protocol version, as for `serve_websocket`; `allowed_origins` and `authorize` too
    (refusals are 403 and 401; a connection's request from another principal than its
    `initialize`'s, 403). Each connection takes `options`, as `serve_agent` says, and
    the server holds to their limits: a message over `max_message_bytes` is refused; the
    agent's output that its client has not read is held up to `max_buffered_bytes`, beyond
    which the agent waits (and the client's requests are held back), at most
    `max_output_stall` seconds; a request or session id over `max_id_length` characters is
    refused 400 (WebSocket: close 1008). Beyond those, HTTP's own: a POST body over
    `max_request_body_bytes` is refused 413; output waiting for more than
    `max_buffered_session_streams` sessions no client receives ends the connection, as the
    TypeScript SDK's `ConnectionLimits` have it. `instance` names this process among several
    behind a load balancer: its connection ids start with `instance.` and its answer to
    `initialize` sets the cookie `acp_instance=instance`, for the load balancer to route a
    connection's requests by (`ServerSettings.instance`).
    Needs nothing beyond the standard library (the ASGI server aside)."""
    from . import _http_server

    options = ConnectionOptions.checked(options)
    limits = options.limits

    async def handle(transport: Transport) -> None:
        await serve_agent(transport, *(make() for make in agents), options=options)

    return _http_server.AcpHttpApp(
        handle,
        path=path,
        allowed_origins=allowed_origins,
        authorize=authorize,
        max_message_bytes=limits.max_message_bytes,
        max_buffered_bytes=limits.max_buffered_bytes,
        max_output_stall=limits.max_output_stall,
        max_request_body_bytes=max_request_body_bytes,
        max_buffered_session_streams=max_buffered_session_streams,
        max_id_length=limits.max_id_length,
        server_settings=_http_server.ServerSettings(instance=instance),
    )
