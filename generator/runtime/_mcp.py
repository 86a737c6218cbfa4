"""MCP over ACP (`mcp/message`) with the official MCP SDK (`mcp`, the package's `mcp` extra).

ACP carries MCP servers over the ACP connection itself: the agent (the consumer) sends
`mcp/message` requests, each one inner MCP request for a server of `type: "acp"` that the
client or a proxy (the provider) declared in `session/new`; the provider answers with the inner
MCP outcome (`result`, or an inner MCP `error`) and sends `mcp/message` notifications for an
active request (progress). Errors of the binding itself (an unknown `serverId`, a duplicate
active `requestId`) are outer ACP errors, as the TypeScript SDK answers them (-33001, -32602).

The inner traffic is MCP's stateless 2026-07-28 revision, which the TypeScript SDK 2.4.0 and the
Python SDK (`mcp` 2.x) both speak: every inner request carries its protocol version and client
capabilities in `params._meta`, and there is no `initialize`. `McpProvider` serves an `mcp`
server per request on that path (`modern_on_request`, one exchange per request: no streams);
`McpCaller` gives an `mcp.Client` a transport whose requests travel as `mcp/message`.

Schema-free: the generated `mcp.py` subclasses both with the package's typed messages
(`McpMessages`). Importing this module imports `mcp`; `import acp_v2` does not."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

import anyio
import mcp_types
from mcp.client import Client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import modern_error_data, modern_on_request
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
from mcp.shared.message import SessionMessage
from mcp.shared.transport_context import TransportContext
from mcp_types.version import LATEST_MODERN_VERSION

from ._connection import DEFAULT_LIMITS, ConnectionClosed, ConnectionLimits, RequestError
from ._runtime import UNDEFINED, dump_json_bytes

__all__ = ["PROTOCOL_VERSION", "SERVER_UNAVAILABLE", "McpCaller", "McpMessages", "McpProvider", "Peer"]

PROTOCOL_VERSION = LATEST_MODERN_VERSION
"""The MCP revision of the inner traffic: 2026-07-28, the stateless one, on both sides."""
SERVER_UNAVAILABLE = -33001
"""The outer ACP error for an `mcp/message` whose `serverId` this provider does not serve."""
_LONGEST_OUTER_ID = 2**63
"""Stands for the outer JSON-RPC id of our own `mcp/message` request when its line is measured
(the connection counts its ids up from 0: never longer than this)."""


def _limits(peer: Any) -> ConnectionLimits:
    """The limits of `peer`'s connection (`options.limits`: what it reads, taken as what the
    other end reads too); the default limits for a peer without options."""
    limits = getattr(getattr(peer, "options", None), "limits", DEFAULT_LIMITS)
    return limits if isinstance(limits, ConnectionLimits) else DEFAULT_LIMITS


def _line_bytes(message: dict[str, Any]) -> int:
    """The length in bytes of `message` written as a line, as the connection writes it."""
    return len(dump_json_bytes(message))


@dataclass(frozen=True)
class McpMessages:
    """The package's typed `mcp/message` classes, which the generated `mcp.py` binds."""

    request: Callable[..., Any]  # MessageMcpRequest
    notification: Callable[..., Any]  # MessageMcpNotification
    result: Callable[..., Any]  # MessageMcpResponseResult
    error: Callable[..., Any]  # MessageMcpResponseError
    error_object: Callable[..., Any]  # McpError
    server: Callable[..., Any]  # McpServerAcpVariant, the `type: "acp"` entry of `session/new`


_Provider = TypeVar("_Provider", bound="McpProvider")


class Peer(Protocol):
    """A connection that sends `mcp/message` (its typed method): the provider's notifications, the caller's requests."""

    async def mcp_message(self, params: Any) -> Any: ...


@dataclass
class _RequestContext:
    """The `DispatchContext` one inner request runs under: its notifications (progress) go back
    to the consumer as `mcp/message` notifications naming the request; the stateless revision
    has no server-to-client requests."""

    notify_peer: Callable[[str, Mapping[str, Any] | None], Awaitable[None]]
    progress_token: Any
    request_id: str
    transport: TransportContext = field(default_factory=lambda: TransportContext(kind="acp", can_send_request=False))
    message_metadata: None = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return False

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        await self.notify_peer(method, params)

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify_peer("notifications/progress", params)


@dataclass
class _Served:
    server: Server[Any]
    handle: Callable[..., Awaitable[dict[str, Any]]]
    active: set[str] = field(default_factory=set)


class McpProvider:
    """Serves `mcp` servers (an `MCPServer`, the former FastMCP, or a low-level `Server`) to the
    peer over `mcp/message`. Use it as `async with`; `await serve(server, name=...)` enters the
    server's lifespan and returns its `session/new` entry (`type: "acp"`, a fresh `serverId`);
    the `Client`'s (or proxy's) `mcp_message` handler answers with `await provider.handle(params,
    conn)`, `conn` being the connection its notifications go back on.

    An answer longer than the consumer reads would be skipped there, unanswered: the provider
    answers an inner MCP error (-32603) instead. The limit is `max_message_bytes`, by default
    that of the connection the answer goes on (`conn.options.limits`), allowing for the longest
    request id it takes."""

    messages: ClassVar[McpMessages]

    def __init__(self, *, max_message_bytes: int | None = None) -> None:
        self.max_message_bytes = max_message_bytes
        self._servers: dict[str, _Served] = {}
        self._lifespans = contextlib.AsyncExitStack()

    async def __aenter__(self: _Provider) -> _Provider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End every server's lifespan; later requests for them are answered -33001."""
        self._servers.clear()
        await self._lifespans.aclose()

    async def serve(self, server: Server[Any] | MCPServer, *, name: str | None = None) -> Any:
        """Serve `server` from now on; its `McpServerAcp` entry for `session/new`."""
        lowlevel: Server[Any] = server._lowlevel_server if isinstance(server, MCPServer) else server
        state = await self._lifespans.enter_async_context(lowlevel.lifespan(lowlevel))
        server_id = f"mcp-{secrets.token_hex(8)}"
        self._servers[server_id] = _Served(lowlevel, modern_on_request(lowlevel, state))
        return self.messages.server(name=name or lowlevel.name, server_id=server_id)

    async def handle(self, params: Any, peer: Peer) -> Any:
        """The answer to one `mcp/message` request: the inner result or inner MCP error; an outer
        `RequestError` for an unknown `serverId` (-33001) or an active `requestId` (-32602)."""
        served = self._servers.get(params.server_id)
        if served is None:
            raise RequestError(
                SERVER_UNAVAILABLE, "MCP server registration unavailable", {"serverId": params.server_id}
            )
        if params.request_id in served.active:
            raise RequestError(
                -32602,
                "duplicate active MCP request ID",
                {"serverId": params.server_id, "requestId": params.request_id},
            )
        inner = params.params if isinstance(params.params, dict) else {}
        served.active.add(params.request_id)
        try:
            return await self._answer(served, params, inner, peer)
        finally:
            served.active.discard(params.request_id)

    async def _answer(self, served: _Served, params: Any, inner: dict[str, Any], peer: Peer) -> Any:
        route = classify_inbound_request({"method": params.method, "params": inner})
        if params.method == "initialize":
            return self._error(mcp_types.METHOD_NOT_FOUND, "the stateless MCP revision has no initialize")
        if isinstance(route, InboundLadderRejection):
            return self._error(route.code, route.message, route.data)
        finished = False

        async def notify_peer(method: str, notification: Mapping[str, Any] | None) -> None:
            if finished:  # nothing of a request after its answer
                return
            await peer.mcp_message(
                self.messages.notification(
                    server_id=params.server_id,
                    request_id=params.request_id,
                    method=method,
                    params=UNDEFINED if notification is None else dict(notification),
                )
            )

        meta = inner.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        context = _RequestContext(notify_peer, token, params.request_id)
        try:
            result = await served.handle(context, params.method, inner)
        except Exception as error:  # MCPError, a ValidationError of the params, or the handler's own
            data = modern_error_data(error)
            return self._error(data.code, data.message, data.data)
        finally:
            finished = True
        answer = self.messages.result(result=result)
        limits = _limits(peer)
        limit = limits.max_message_bytes if self.max_message_bytes is None else self.max_message_bytes
        longest_id = "x" * limits.max_id_length  # the peer's id: this connection refuses longer ones
        if _line_bytes({"jsonrpc": "2.0", "id": longest_id, "result": answer.to_dict()}) > limit:
            too_long = f"the result is longer than the {limit} bytes the caller reads in a message"
            return self._error(mcp_types.INTERNAL_ERROR, too_long)
        return answer

    def _error(self, code: int, message: str, data: Any = None) -> Any:
        error = self.messages.error_object(code=code, message=message, data=UNDEFINED if data is None else data)
        return self.messages.error(error=error)


class McpCaller:
    """Reaches the peer's ACP-transport MCP servers through ordinary `mcp` clients: `client(server)`
    is an `mcp.Client` (tools, resources, prompts, progress, cancellation) whose requests travel
    as `mcp/message` requests on `conn`. The agent's `mcp_message` handler (the notifications
    for active requests: progress) calls `await caller.deliver(params)`.

    An inner MCP error reaches the `mcp` client as that error (`MCPError`); an outer ACP error
    (an unknown `serverId`, the connection closed) as an `MCPError` with the outer code.

    A request whose `mcp/message` line is longer than the provider reads would be skipped there,
    unanswered: it is refused here, never sent (`MCPError` -32600). The limit, in UTF-8 bytes of
    the whole line, is `max_message_bytes`, by default `conn`'s own (`conn.options.limits`)."""

    messages: ClassVar[McpMessages]

    def __init__(self, conn: Peer, *, max_message_bytes: int | None = None) -> None:
        self.conn = conn
        self.max_message_bytes = _limits(conn).max_message_bytes if max_message_bytes is None else max_message_bytes
        self._prefix = secrets.token_hex(4)  # inner request ids unique on the connection
        self._ids = itertools.count(1)
        self._routes: dict[tuple[str, str], Callable[[mcp_types.JSONRPCNotification], None]] = {}

    def client(self, server: Any, **options: Any) -> Client:
        """An `mcp.Client` of the ACP-transport MCP server `server` (its `McpServerAcp` entry, or
        its `serverId`), speaking the 2026-07-28 revision; `options` go to `mcp.Client`."""
        server_id = server if isinstance(server, str) else server.server_id
        return Client(self.transport(server_id), mode=PROTOCOL_VERSION, **options)

    async def deliver(self, params: Any) -> None:
        """An `mcp/message` notification from the provider: to the client of its request (dropped
        when that request has ended)."""
        send = self._routes.get((params.server_id, params.request_id))
        if send is not None:
            inner = params.params if isinstance(params.params, dict) else None
            send(mcp_types.JSONRPCNotification(jsonrpc="2.0", method=params.method, params=inner))

    @contextlib.asynccontextmanager
    async def transport(self, server_id: str) -> AsyncIterator[tuple[Any, Any]]:
        """The read and write streams of an `mcp` transport to the server `server_id`."""
        to_client_send, to_client = anyio.create_memory_object_stream[SessionMessage | Exception](64)
        from_client, from_client_receive = anyio.create_memory_object_stream[SessionMessage](64)
        calls: dict[Any, asyncio.Task[None]] = {}

        def deliver(message: mcp_types.JSONRPCNotification) -> None:
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                to_client_send.send_nowait(SessionMessage(message))

        async def call(request: mcp_types.JSONRPCRequest) -> None:
            request_id = f"{self._prefix}-{next(self._ids)}"
            outer = self.messages.request(
                server_id=server_id,
                request_id=request_id,
                method=request.method,
                params=UNDEFINED if request.params is None else request.params,
            )
            line = {"jsonrpc": "2.0", "id": _LONGEST_OUTER_ID, "method": "mcp/message", "params": outer.to_dict()}
            if _line_bytes(line) > self.max_message_bytes:
                too_long = f"the mcp/message request is longer than the {self.max_message_bytes} bytes a peer reads"
                await to_client_send.send(SessionMessage(_error_response(request.id, -32600, too_long)))
                calls.pop(request.id, None)
                return
            self._routes[(server_id, request_id)] = deliver
            try:
                answer = await self.conn.mcp_message(outer)
                message: Any = _inner_answer(request.id, answer)
            except RequestError as error:
                message = _error_response(request.id, error.code, error.message, error.data)
            except ConnectionClosed as error:
                message = _error_response(request.id, mcp_types.CONNECTION_CLOSED, str(error))
            finally:
                self._routes.pop((server_id, request_id), None)
                calls.pop(request.id, None)
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await to_client_send.send(SessionMessage(message))

        async def pump() -> None:
            async for session_message in from_client_receive:
                message = session_message.message
                if isinstance(message, mcp_types.JSONRPCRequest):
                    calls[message.id] = asyncio.ensure_future(call(message))
                elif isinstance(message, mcp_types.JSONRPCNotification) and message.method == "notifications/cancelled":
                    cancelled = calls.get((message.params or {}).get("requestId"))
                    if cancelled is not None:  # the outer request is withdrawn ($/cancel_request)
                        cancelled.cancel()

        pumping = asyncio.ensure_future(pump())
        try:
            async with to_client_send, to_client, from_client, from_client_receive:
                yield to_client, from_client
        finally:
            pumping.cancel()
            for task in [pumping, *calls.values()]:
                task.cancel()
            await asyncio.gather(pumping, *calls.values(), return_exceptions=True)


def _inner_answer(request_id: Any, answer: Any) -> Any:
    """The inner JSON-RPC answer of an `mcp/message` response (receivers prefer `result`)."""
    if hasattr(answer, "result"):
        return mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=answer.result or {})
    error = answer.error
    data = None if error.data is UNDEFINED else error.data
    return _error_response(request_id, error.code, error.message, data)


def _error_response(request_id: Any, code: int, message: str, data: Any = None) -> Any:
    error = mcp_types.ErrorData(code=code, message=message, data=None if data is UNDEFINED else data)
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
