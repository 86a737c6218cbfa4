"""A proxy's one connection to its conductor as two transports: `upstream`, toward the client
(what the predecessor sends, plain, `proxy/initialize` read as `initialize`), and `downstream`,
toward the agent (what the successor sends, delivered in `proxy/successor` envelopes, and what
the proxy sends it, wrapped in them). The package's typed connections run over each: the proxy
serves its predecessor as an agent and its successor as a client (`proxy.serve_proxy`).

Requests the two connections send get ids of this link's own (each connection numbers its
requests from 0, and the conductor sees one link); their answers come back with the connection's
ids. Requests the conductor sends keep its ids, and their answers go back unchanged. A
`$/cancel_request` is sent plain, naming the id on this link, from either side (the schema never
wraps it): one from the conductor reaches the side serving the request it names."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Final

from . import _runtime as _rt
from ._connection import DEFAULT_LIMITS, ConnectionClosed, ConnectionLimits, MessageTooLarge, Transport, _parse

_log = logging.getLogger(f"{_rt.LOGGER}.proxy")

INITIALIZE: Final = "initialize"
PROXY_INITIALIZE: Final = "proxy/initialize"
PROXY_SUCCESSOR: Final = "proxy/successor"
CANCEL_REQUEST: Final = "$/cancel_request"
QUEUED: Final = 16
"""Messages read ahead for one side; the reader waits for room beyond (backpressure)."""
_JSONRPC: Final = "2.0"


class ProxySide:
    """One of the two transports of a `ProxyLink`."""

    def __init__(self, link: ProxyLink, name: str) -> None:
        self.name = name
        self._link = link
        self._inbox: asyncio.Queue[bytes | MessageTooLarge | None] = asyncio.Queue(QUEUED)
        self._ended = False  # the conductor's stream has ended: what is queued, then the end
        self.closed = False

    async def receive(self) -> bytes | None:
        self._link.start()
        while True:
            if self._ended and self._inbox.empty():
                return None
            item = await self._inbox.get()
            if isinstance(item, MessageTooLarge):
                raise item
            if item is not None:  # (None only wakes a reader up at the end)
                return item

    async def send(self, message: bytes) -> None:
        await self._link.send(self, message)

    async def close(self) -> None:
        self.closed = True
        await self._link.side_closed()

    async def deliver(self, item: bytes | MessageTooLarge) -> None:
        if not self.closed:
            await self._inbox.put(item)

    def end(self) -> None:
        self._ended = True
        with contextlib.suppress(asyncio.QueueFull):  # full: its reader is not waiting
            self._inbox.put_nowait(None)


class ProxyLink:
    """Splits `transport`, a proxy's connection to its conductor, into `upstream` and `downstream`.
    Reading starts with the first `receive` of either side; the transport is closed once both
    sides are (or its stream ends)."""

    def __init__(self, transport: Transport, *, limits: ConnectionLimits = DEFAULT_LIMITS) -> None:
        self._transport = transport
        self._limits = limits
        self.upstream = ProxySide(self, "upstream")
        self.downstream = ProxySide(self, "downstream")
        self._next_id = 0
        self._sent: dict[int, tuple[ProxySide, Any]] = {}  # this link's id → (side, that side's id)
        self._ids: dict[tuple[ProxySide, type, Any], int] = {}  # (side, its id) → this link's id
        self._serving: dict[tuple[type, Any], ProxySide] = {}  # the conductor's requests → the side serving it
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        if self._reader is None:
            self._reader = asyncio.ensure_future(self._read())

    async def side_closed(self) -> None:
        if not (self.upstream.closed and self.downstream.closed) or self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        with contextlib.suppress(OSError, RuntimeError, ConnectionClosed):
            await self._transport.close()

    async def _read(self) -> None:
        try:
            while True:
                try:
                    data = await self._transport.receive()
                except MessageTooLarge as error:
                    await self.upstream.deliver(error)
                    continue
                if data is None:
                    break
                try:
                    await self._route(data)
                except asyncio.CancelledError:
                    raise
                except Exception:  # RecursionError, MemoryError...: this message's failure alone
                    _log.exception("failed to route a message of %d bytes", len(data))
                    await self.upstream.deliver(data)  # its connection answers what it can
        except (OSError, RuntimeError, ConnectionClosed):
            pass
        finally:
            self.upstream.end()
            self.downstream.end()

    async def _route(self, data: bytes) -> None:
        try:
            message = _parse(data)
        except _rt.DecodeError:
            await self.upstream.deliver(data)  # the upstream connection answers it (-32700)
            return
        if type(message) is not dict or message.get("jsonrpc") != _JSONRPC:
            await self.upstream.deliver(data)  # (-32600)
            return
        method = message.get("method")
        if method is None and "method" not in message:
            await self._answer(message, data)
            return
        if method == CANCEL_REQUEST:
            params = message.get("params")
            request_id = params.get("requestId") if type(params) is dict else None
            side = self._serving.get((type(request_id), request_id))
            if side is not None:
                await side.deliver(data)
            return
        side, request_id = self.upstream, message.get("id")
        if method == PROXY_SUCCESSOR:
            envelope = message.get("params")
            if type(envelope) is not dict or type(envelope.get("method")) is not str:
                if "id" in message:
                    await self._refuse(request_id, "proxy/successor params: an object with a method (a string)")
                return
            side = self.downstream
            message = {
                "jsonrpc": _JSONRPC,
                **({"id": request_id} if "id" in message else {}),
                "method": envelope["method"],
            }
            if envelope.get("params") is not None:
                message["params"] = envelope["params"]
            data = _rt.dump_json_bytes(message)
        elif method == PROXY_INITIALIZE:
            message["method"] = INITIALIZE
            data = _rt.dump_json_bytes(message)
        if "id" in message and type(request_id) in (int, str):
            self._serving[(type(request_id), request_id)] = side
        await side.deliver(data)

    async def _answer(self, message: dict[str, Any], data: bytes) -> None:
        request_id = message.get("id")
        sent = self._sent.pop(request_id, None) if type(request_id) is int else None
        if sent is None:
            await self.upstream.deliver(data)  # the upstream connection logs what answers nothing
            return
        side, own_id = sent
        self._ids.pop((side, type(own_id), own_id), None)
        message["id"] = own_id
        await side.deliver(_rt.dump_json_bytes(message))

    async def _refuse(self, request_id: Any, reason: str) -> None:
        error = {"code": _rt.INVALID_PARAMS, "message": reason}
        with contextlib.suppress(OSError, RuntimeError, ConnectionClosed):
            await self._transport.send(_rt.dump_json_bytes({"jsonrpc": _JSONRPC, "id": request_id, "error": error}))

    async def send(self, side: ProxySide, data: bytes) -> None:
        """One message a side's connection writes, as it goes to the conductor."""
        if self._closed:
            raise ConnectionClosed("the proxy's link to its conductor is closed")
        message = _rt.parse_json(data)  # the connection's own output: an object
        method = message.get("method")
        if method is None:  # an answer: to the conductor's request, which keeps its id
            request_id = message.get("id")
            self._serving.pop((type(request_id), request_id), None)
        elif method == CANCEL_REQUEST:
            params = message.get("params")
            own_id = params.get("requestId") if type(params) is dict else None
            link_id = self._ids.get((side, type(own_id), own_id))
            if link_id is None:
                return  # answered meanwhile: nothing to cancel
            message = {"jsonrpc": _JSONRPC, "method": CANCEL_REQUEST, "params": {**params, "requestId": link_id}}
        else:
            if side is self.downstream:
                envelope = {"method": method}
                if "params" in message:
                    envelope["params"] = message["params"]
                wrapped = {"jsonrpc": _JSONRPC, "method": PROXY_SUCCESSOR, "params": envelope}
                if "id" in message:
                    wrapped["id"] = message["id"]
                message = wrapped
            if "id" in message:
                own_id, link_id = message["id"], self._next_id
                self._next_id += 1
                self._sent[link_id] = (side, own_id)
                self._ids[(side, type(own_id), own_id)] = link_id
                message["id"] = link_id
        await self._transport.send(_rt.dump_json_bytes(message))


class ExtensionsToSuccessor:
    """A forwarding agent's extension methods (`_vendor/...`): forwarded to its `successor`."""

    successor: Any  # the package's client-side connection, set by `serve_proxy`

    async def ext_method(self, method: str, params: Any) -> Any:
        return await self.successor.ext_method(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        await self.successor.ext_notification(method, params)


class ExtensionsToPredecessor:
    """A forwarding client's extension methods (`_vendor/...`): forwarded to its `predecessor`."""

    predecessor: Any  # the package's agent-side connection, set by `serve_proxy`

    async def ext_method(self, method: str, params: Any) -> Any:
        return await self.predecessor.ext_method(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        await self.predecessor.ext_notification(method, params)
