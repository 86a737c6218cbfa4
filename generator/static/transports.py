"""The entry points of a package's connections: serve an agent or connect a client over stdio,
a child process, Streamable HTTP, WebSocket or in memory, and negotiate the protocol version.

`run_agent(agent)` serves an agent over stdin/stdout; `spawn_agent_process(client, command,
...)` starts an agent and connects a client to it, `spawn_client_process(agent, command, ...)`
starts a client and serves it; `connect_pair(agent, client)` connects the two in this process
(tests). Every name here is also in the package's top level.

Every entry point takes `options`, a `ConnectionOptions` (`DEFAULT_OPTIONS` by default): the
limits of the connection and its transport (`ConnectionLimits`), whether its decoding is strict,
who hears of what lenient decoding salvages, and how long a close waits for the peer to read.
Routed connections (`serve_agent`, `connect_negotiated`) take the same options, whichever
package the typed connection is of.

The module is the same in every generated package: it is written against the names of its
package's `connection` module (`Agent`, `Client` and their connections), which generation checks
the package defines, and `mypy --strict` on the package checks how they are used."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _router
from ._connection import (
    DEFAULT_OPTIONS,
    ConnectionOptions,
    Stderr,
    StreamTransport,
    Transport,
    spawn_process,
    stdio_streams,
)
from ._cookies import AffinityCookies
from ._memory import memory_transports
from ._router import Routable
from .connection import Agent, AgentSideConnection, Client, ClientSideConnection

if TYPE_CHECKING:
    from ._http_server import AcpHttpApp
    from ._websocket import Authorize, WebSocketServer

__all__ = [
    "connect_http",
    "connect_negotiated",
    "connect_pair",
    "connect_to_agent",
    "connect_to_client",
    "connect_websocket",
    "http_app",
    "open_agent_process",
    "open_http",
    "open_websocket",
    "run_agent",
    "serve_agent",
    "serve_websocket",
    "spawn_agent_process",
    "spawn_client_process",
]


async def run_agent(agent: Agent, *others: Routable, options: ConnectionOptions = DEFAULT_OPTIONS) -> None:
    """Serve `agent` over stdin/stdout until stdin ends (or the task running it is cancelled:
    the connection is closed either way). stdout carries only protocol lines: log to stderr,
    never print. On close, output the client has not read after `options.close_timeout`
    seconds is dropped.

    `others` are agents of other protocol versions (`run_agent(agent, acp_v1_agent)`): then the
    connection is routed by the `protocolVersion` of the client's `initialize`, as `serve_agent`
    says, and the routed connection takes the same options; without them `agent` serves the
    connection alone (in a package of protocol version 2 or later, an `initialize` asking for a
    version below `PROTOCOL_VERSION` is answered -32022 before `agent.initialize` runs, and one
    that `agent.initialize` answers with another version -32600)."""
    options = ConnectionOptions.checked(options)
    reader, writer = await stdio_streams()
    transport = StreamTransport(reader, writer, limits=options.limits, close_timeout=options.close_timeout)
    if others:
        await serve_agent(transport, agent, *others, options=options)
        return
    conn = AgentSideConnection(agent, transport, options=options)
    try:
        await conn.wait_closed()
    finally:
        await conn.close()


async def serve_agent(
    transport: Transport, *agents: Agent | Routable, options: ConnectionOptions = DEFAULT_OPTIONS
) -> None:
    """Serve one connection with the agent, of those given (one per protocol version, of any
    generated package), whose version the client's `initialize` selects: the highest at or
    below the requested `protocolVersion` (a v1 agent alone serves any). Until a valid
    `initialize` arrives, notifications and responses are ignored, other requests answered
    -32600, a batch -32600 with `id: null`, a failing `initialize` answered with its error
    (-32602, or -32022 for a version none serves) and the connection stays open; from it on the
    selected agent's typed connection serves everything, that `initialize` first, and the
    connection is never routed again. Returns when the connection ends; cancelled, it closes the
    connection (or the transport, before routing). The typed connection takes `options`
    (whichever package it is of)."""
    options = ConnectionOptions.checked(options)
    await _router.serve(transport, [agent._acp_route() for agent in agents], options)


async def connect_negotiated(
    client: Client,
    transport: Transport,
    params: Any,
    *fallbacks: Routable,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> tuple[Any, Any]:
    """Initialize a connection with `params` (this package's `InitializeRequest`, the newest version) and return the
    typed connection and `InitializeResponse` of the version the agent answers: this package's
    `ClientSideConnection`, or, when the agent answers a version one of `fallbacks` (clients of
    other generated packages) speaks, that package's, its `initialize` params downgraded from
    `params`. An answer of a version none speaks raises `ProtocolVersionMismatch`, an error
    answer `RequestError`; neither closes the transport. The typed connection takes `options`;
    close it when done (`async with conn:`).

    Any transport negotiates: `open_agent_process`, `open_http` and `open_websocket` open the
    transports `spawn_agent_process`, `connect_http` and `connect_websocket` connect over
    (`async with open_http(url) as transport: conn, answer = await connect_negotiated(client,
    transport, params, client_v1)`)."""
    options = ConnectionOptions.checked(options)
    routes = [fallback._acp_route() for fallback in fallbacks]
    return await _router.negotiate(transport, params, client._acp_route(), routes, options)


def connect_to_agent(
    client: Client,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> ClientSideConnection:
    """A client connection over the agent's output (`reader`) and input (`writer`); a client that
    an agent started (`spawn_client_process`) connects over `await stdio_streams()`.
    On close, output the agent has not read after `options.close_timeout` seconds is dropped."""
    options = ConnectionOptions.checked(options)
    transport = StreamTransport(reader, writer, limits=options.limits, close_timeout=options.close_timeout)
    return ClientSideConnection(client, transport, options=options)


def connect_to_client(
    agent: Agent,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AgentSideConnection:
    """An agent connection over the client's output (`reader`) and input (`writer`).
    On close, output the client has not read after `options.close_timeout` seconds is dropped."""
    options = ConnectionOptions.checked(options)
    transport = StreamTransport(reader, writer, limits=options.limits, close_timeout=options.close_timeout)
    return AgentSideConnection(agent, transport, options=options)


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


@contextlib.asynccontextmanager
async def spawn_agent_process(
    client: Client,
    command: str | os.PathLike[str],
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 5.0,
    stderr: Stderr = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """Start the agent `command` in a session of its own and connect `client` to its
    stdin/stdout; its stderr goes where `stderr` says (inherited, a file, `subprocess.DEVNULL`,
    or a callable called with each line). The connection takes `options`.

    On exit the connection is closed, which ends the agent's stdin (input the agent has not read
    after half of `timeout` is dropped), and its process group (the agent, a wrapper it was started
    through and every process they started) is stopped as `spawn_process` says: leaving takes at
    most `timeout` seconds, and no process started survives it; a cancellation kills them at once."""
    options = ConnectionOptions.checked(options)
    opened = open_agent_process(command, *args, env=env, cwd=cwd, timeout=timeout, stderr=stderr, options=options)
    async with opened as (transport, process):
        conn = ClientSideConnection(client, transport, options=options)
        try:
            yield conn, process
        finally:
            await conn.close()


@contextlib.asynccontextmanager
async def open_agent_process(
    command: str | os.PathLike[str],
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 5.0,
    stderr: Stderr = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AsyncIterator[tuple[Transport, asyncio.subprocess.Process]]:
    """Start the agent `command` and yield the transport over its stdin/stdout that
    `spawn_agent_process` connects over, without a connection (for `connect_negotiated`, which
    picks the connection of the version the agent answers), and the process. On exit the
    transport is closed, which ends the agent's stdin, and the agent stopped as
    `spawn_agent_process` says. Of `options`, the transport reads `limits`."""
    limits = ConnectionOptions.checked(options).limits
    async with spawn_process(command, *args, env=env, cwd=cwd, timeout=timeout / 2, stderr=stderr) as process:
        assert process.stdin is not None and process.stdout is not None
        transport = StreamTransport(process.stdout, process.stdin, limits=limits, close_timeout=timeout / 2)
        try:
            yield transport, process
        finally:
            await transport.close()


@contextlib.asynccontextmanager
async def spawn_client_process(
    agent: Agent,
    command: str | os.PathLike[str],
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 5.0,
    stderr: Stderr = None,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> AsyncIterator[tuple[AgentSideConnection, asyncio.subprocess.Process]]:
    """Start the client `command` (an editor that speaks ACP over stdio) and serve `agent` to it
    over its stdin/stdout: `spawn_agent_process` the other way round, `stderr`, `options` and
    leaving (at most `timeout` seconds, no process started surviving) as it says."""
    options = ConnectionOptions.checked(options)
    limit = options.limits.max_message_bytes + 1
    async with spawn_process(
        command, *args, env=env, cwd=cwd, limit=limit, timeout=timeout / 2, stderr=stderr
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        transport = StreamTransport(process.stdout, process.stdin, limits=options.limits, close_timeout=timeout / 2)
        conn = AgentSideConnection(agent, transport, options=options)
        try:
            yield conn, process
        finally:
            await conn.close()


@contextlib.asynccontextmanager
async def connect_pair(
    agent: Agent,
    client: Client,
    *,
    timeout: float = 5.0,
    options: ConnectionOptions = DEFAULT_OPTIONS,
    client_options: ConnectionOptions | None = None,
) -> AsyncIterator[tuple[AgentSideConnection, ClientSideConnection]]:
    """Connect `agent` and `client` in this process over `memory_transports()`: every message is
    encoded to JSON bytes and decoded again, as over a pipe, and the limits hold. Both ends take
    `options` (the client's end `client_options` when they differ). Yields the agent's and the
    client's connections.

    On exit the client's connection closes; the agent's handles what the client sent before
    (its notifications too) and closes, at the latest after `timeout` seconds."""
    options = ConnectionOptions.checked(options)
    client_options = options if client_options is None else ConnectionOptions.checked(client_options)
    agent_end, client_end = memory_transports(options.limits, client_options.limits)
    agent_conn = AgentSideConnection(agent, agent_end, options=options)
    client_conn = ClientSideConnection(client, client_end, options=client_options)
    try:
        yield agent_conn, client_conn
    finally:
        try:
            await client_conn.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(agent_conn.wait_closed(), timeout)
        finally:
            await agent_conn.close()
