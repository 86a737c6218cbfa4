"""A conductor: runs a chain of ACP components (proxies, then one agent) and presents it to its
client as one agent, as the schema's `proxy/initialize` and `proxy/successor` describe.

    python -m acp_v2.conductor "python proxy.py" "python agent.py"

Each argument is one component's command line (split with `shlex`), the last the agent. Every
component is started in a session of its own and its process group is stopped when the chain
ends (`spawn_process`). The conductor routes JSON-RPC messages, each link with its own request ids:

- the client's messages go to the first component; its `initialize` becomes `proxy/initialize`
  when that component is a proxy (every component but the last is);
- a proxy's `proxy/successor` request or notification is unwrapped and sent to the next
  component (`initialize` again becoming `proxy/initialize` when that one is a proxy); the
  envelope's `_meta` is hop-local and dropped;
- any other request or notification of a component goes to its predecessor: wrapped in
  `proxy/successor` for a proxy, plain for the client;
- answers go back unchanged (the id of the request they answer restored);
- `$/cancel_request` cancels, on the next hop, the request the conductor sent for the one it
  names: the message itself never crosses a hop.

A component that exits ends the chain: the requests still pending are answered with an error
(`-32603`, the component named in `data`) and the client's stream is closed. Each link is bounded
by `ConnectionLimits`: messages over `max_message_bytes` are refused, a link with
`max_concurrent_requests` requests forwarded and unanswered is read no further until one is
answered, output is held up to `max_buffered_bytes` for at most `max_output_stall` seconds.

The TypeScript SDK 2.4.0 has only the types of proxies, the npm `@thinkwell/conductor` speaks an
earlier draft (`_proxy/successor/request`), and the Rust `sacp-conductor` is a Rust binary: this
one speaks the schema's methods and needs nothing beyond the standard library."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shlex
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from . import _runtime as _rt
from ._connection import (
    DEFAULT_OPTIONS,
    ConnectionClosed,
    ConnectionOptions,
    MessageTooLarge,
    Stderr,
    StreamTransport,
    Transport,
    _parse,
    failed_message_id,
    spawn_process,
    stdio_streams,
    unparsed_response_id,
)

__all__ = ["INITIALIZE", "PROXY_INITIALIZE", "PROXY_SUCCESSOR", "Conductor", "main", "open_chain", "run_conductor"]

_log = logging.getLogger(f"{_rt.LOGGER}.conductor")

INITIALIZE: Final = "initialize"
PROXY_INITIALIZE: Final = "proxy/initialize"
PROXY_SUCCESSOR: Final = "proxy/successor"
CANCEL_REQUEST: Final = "$/cancel_request"
_JSONRPC: Final = "2.0"


@dataclass(eq=False)
class _Forwarded:
    """A request the conductor received on `origin` and sent on as its own request on `target`."""

    origin: _Link
    origin_id: Any
    target: _Link
    target_id: int
    method: str


@dataclass(eq=False)
class _Link:
    """One JSON-RPC connection of the conductor: to the client, or to a component."""

    name: str
    transport: Transport
    proxy: bool  # a component with a successor (served `proxy/initialize` and `proxy/successor`)
    next_id: int = 0
    sent: dict[int, _Forwarded] = field(default_factory=dict)  # requests sent on it, unanswered
    received: dict[tuple[type, Any], _Forwarded] = field(default_factory=dict)  # requests it sent, forwarded
    room: asyncio.Event = field(default_factory=asyncio.Event)  # set when one of `received` is answered
    ended: bool = False  # nothing more can be written to it


class Conductor:
    """Routes messages between a client's transport and the transports of a chain's components
    (all but the last are proxies). `run()` returns when the client's stream ends or a component's
    does (then the requests still pending are answered with an error), having closed every transport
    it was given. The processes behind the transports are the caller's (`open_chain` owns them)."""

    def __init__(
        self,
        client: Transport,
        components: Sequence[Transport],
        *,
        names: Sequence[str] | None = None,
        options: ConnectionOptions = DEFAULT_OPTIONS,
    ) -> None:
        if not components:
            raise ValueError("a chain has at least one component (the agent)")
        names = names or [f"component {index}" for index in range(len(components))]
        if len(names) != len(components):
            raise ValueError(f"{len(components)} components but {len(names)} names")
        self._limits = ConnectionOptions.checked(options).limits
        self._client = _Link("client", client, proxy=False)
        last = len(components) - 1
        self._components = [
            _Link(name, transport, proxy=index < last)
            for index, (name, transport) in enumerate(zip(names, components, strict=True))
        ]
        self._ended: asyncio.Future[str] | None = None

    @property
    def links(self) -> list[_Link]:
        return [self._client, *self._components]

    async def run(self) -> str:
        """Route until the client or a component ends; the reason, e.g. "the client closed"."""
        self._ended = asyncio.get_running_loop().create_future()
        readers = [asyncio.ensure_future(self._read(link)) for link in self.links]
        try:
            return await asyncio.shield(self._ended)
        finally:
            for reader in readers:
                reader.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            await self._shutdown(self._ended.result() if self._ended.done() else "the conductor was cancelled")

    def _end(self, reason: str) -> None:
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(reason)

    async def _shutdown(self, reason: str) -> None:
        """Answer every request still pending with an error, then close every transport."""
        for link in self.links:
            for forwarded in list(link.sent.values()):
                await self._fail(forwarded, reason)
            link.sent.clear()
            link.received.clear()
        for link in self.links:
            link.ended = True
        closing = [asyncio.ensure_future(link.transport.close()) for link in self.links]
        await asyncio.gather(*closing, return_exceptions=True)

    async def _fail(self, forwarded: _Forwarded, reason: str) -> None:
        """Answer the origin of a forwarded request with the conductor's own error."""
        forwarded.target.sent.pop(forwarded.target_id, None)
        forwarded.origin.received.pop((type(forwarded.origin_id), forwarded.origin_id), None)
        forwarded.origin.room.set()
        data = {"reason": reason, "method": forwarded.method, "component": forwarded.target.name}
        await self._send(forwarded.origin, _error(forwarded.origin_id, _rt.INTERNAL_ERROR, "Internal error", data))

    async def _send(self, link: _Link, message: dict[str, Any]) -> bool:
        """Write one message to `link`; False when the link has ended (or ends now)."""
        if link.ended:
            return False
        try:
            await link.transport.send(_rt.dump_json_bytes(message))
        except (ConnectionClosed, OSError, RuntimeError) as error:
            _log.warning("cannot write to %s: %s", link.name, error)
            link.ended = True
            self._end(f"{link.name} cannot be written to")
            return False
        return True

    async def _read(self, link: _Link) -> None:
        try:
            while True:
                try:
                    data = await link.transport.receive()
                except MessageTooLarge as error:
                    await self._send(link, _error(error.request_id, _rt.INVALID_REQUEST, f"Invalid request: {error}"))
                    continue
                if data is None:
                    break
                try:
                    await self._route(link, data)
                except asyncio.CancelledError:
                    raise
                except Exception:  # RecursionError, MemoryError...: this message's failure alone
                    _log.exception("failed to route a message of %d bytes from %s", len(data), link.name)
                    answered, request_id = failed_message_id(data)
                    if answered:
                        await self._send(link, _error(request_id, _rt.INTERNAL_ERROR, "Internal error"))
        except (OSError, RuntimeError) as error:
            _log.warning("%s failed: %s", link.name, error)
        link.ended = True
        self._end(f"{link.name} closed" if link is self._client else f"{link.name} exited")

    async def _route(self, link: _Link, data: bytes) -> None:
        try:
            message = _parse(data)
        except _rt.DecodeError as error:
            request_id = unparsed_response_id(data)
            forwarded = link.sent.get(request_id) if type(request_id) is int else None
            if forwarded is not None:  # an answer we cannot read: its request fails
                link.sent.pop(forwarded.target_id, None)
                await self._fail(forwarded, f"{link.name} answered with a message that does not parse: {error}")
                return
            await self._send(link, _error(None, _rt.PARSE_ERROR, "Parse error", {"error": str(error)}))
            return
        if type(message) is not dict or message.get("jsonrpc") != _JSONRPC:
            await self._invalid(link, message, "a JSON-RPC 2.0 message (an object with jsonrpc: 2.0)")
            return
        method = message.get("method", _rt.MISSING)
        if method is _rt.MISSING:
            await self._answer(link, message)
            return
        if type(method) is not str:
            await self._invalid(link, message, "a method name (a string)")
            return
        params = message.get("params")
        if "id" not in message:
            await self._notification(link, method, params)
            return
        request_id = message["id"]
        if not _usable_id(request_id) or (type(request_id) is str and len(request_id) > self._limits.max_id_length):
            await self._send(link, _error(None, _rt.INVALID_REQUEST, "Invalid request: a usable request id"))
            return
        await self._request(link, request_id, method, params)

    async def _invalid(self, link: _Link, message: Any, expected: str) -> None:
        request_id = message.get("id") if type(message) is dict else None
        forwarded = link.sent.get(request_id) if type(request_id) is int and "method" not in message else None
        if forwarded is not None:  # an answer that is no answer: its request fails
            await self._fail(forwarded, f"{link.name} answered with an invalid message: expected {expected}")
            return
        await self._send(link, _error(None, _rt.INVALID_REQUEST, "Invalid request", {"expected": expected}))

    def _successor(self, link: _Link) -> _Link | None:
        """Where a message from `link` goes downstream: the first component for the client, the
        next for a proxy's `proxy/successor`, None for the last (it has no successor)."""
        if link is self._client:
            return self._components[0]
        index = self._components.index(link)
        return self._components[index + 1] if link.proxy else None

    def _predecessor(self, link: _Link) -> _Link:
        index = self._components.index(link)
        return self._client if index == 0 else self._components[index - 1]

    def _downstream(self, link: _Link, method: Any, params: Any) -> tuple[_Link, str, Any] | str:
        """Where a message from `link` goes and as what (target, method, params), or why it cannot go."""
        if link is self._client:
            target = self._components[0]
        else:
            if method != PROXY_SUCCESSOR:
                predecessor = self._predecessor(link)
                if predecessor is self._client:
                    return predecessor, method, params
                return predecessor, PROXY_SUCCESSOR, _envelope(method, params)
            successor = self._successor(link)
            if successor is None:
                return f"{link.name} has no successor: it is the agent"
            if type(params) is not dict or type(params.get("method")) is not str:
                return "proxy/successor params: an object with a method (a string)"
            target, method, params = successor, params["method"], params.get("params")
            if method == CANCEL_REQUEST:
                return "$/cancel_request is never forwarded to another hop: send it on the hop of the request"
        if method == INITIALIZE and target.proxy:
            method = PROXY_INITIALIZE
        return target, method, params

    async def _notification(self, link: _Link, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST:
            request_id = params.get("requestId") if type(params) is dict else None
            forwarded = link.received.get((type(request_id), request_id))
            if forwarded is not None and not forwarded.target.ended:
                cancel = _notification(CANCEL_REQUEST, {"requestId": forwarded.target_id})
                await self._send(forwarded.target, cancel)
            return
        route = self._downstream(link, method, params)
        if isinstance(route, str):
            _log.warning("dropped notification %s from %s: %s", method, link.name, route)
            return
        target, method, params = route
        await self._send(target, _notification(method, params))

    async def _request(self, link: _Link, request_id: Any, method: str, params: Any) -> None:
        key = (type(request_id), request_id)
        if key in link.received:
            message = f"Invalid request: request id {request_id!r} is in use"
            await self._send(link, _error(request_id, _rt.INVALID_REQUEST, message))
            return
        route = self._downstream(link, method, params)
        if isinstance(route, str):
            code = _rt.METHOD_NOT_FOUND if "no successor" in route else _rt.INVALID_PARAMS
            await self._send(link, _error(request_id, code, route, {"method": method}))
            return
        while len(link.received) >= self._limits.max_concurrent_requests:
            link.room.clear()  # read no further until one is answered
            await link.room.wait()
        target, method, params = route
        if target.ended:
            message = f"{target.name} has ended"
            await self._send(link, _error(request_id, _rt.INTERNAL_ERROR, "Internal error", {"reason": message}))
            return
        target_id = target.next_id
        target.next_id += 1
        forwarded = _Forwarded(link, request_id, target, target_id, method)
        target.sent[target_id] = forwarded
        link.received[key] = forwarded
        if not await self._send(target, _request(target_id, method, params)):
            await self._fail(forwarded, f"{target.name} cannot be written to")

    async def _answer(self, link: _Link, message: dict[str, Any]) -> None:
        """A response from `link`: sent back, unchanged but for its id, to where its request came from."""
        request_id = message.get("id")
        forwarded = link.sent.pop(request_id, None) if type(request_id) is int else None
        if forwarded is None:
            _log.warning("dropped a response from %s to unknown request id %r", link.name, request_id)
            return
        forwarded.origin.received.pop((type(forwarded.origin_id), forwarded.origin_id), None)
        forwarded.origin.room.set()
        if ("result" in message) == ("error" in message):
            reason = f"{link.name} answered {forwarded.method} with a response without exactly one of result or error"
            data = {"reason": reason, "method": forwarded.method, "component": link.name}
            await self._send(forwarded.origin, _error(forwarded.origin_id, _rt.INTERNAL_ERROR, "Internal error", data))
            return
        answer = dict(message)
        answer["id"] = forwarded.origin_id
        await self._send(forwarded.origin, answer)


def _usable_id(request_id: Any) -> bool:
    return type(request_id) is str or (type(request_id) is int)


def _envelope(method: str, params: Any) -> dict[str, Any]:
    envelope: dict[str, Any] = {"method": method}
    if params is not None:
        envelope["params"] = params
    return envelope


def _request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": _JSONRPC, "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _notification(method: str, params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": _JSONRPC, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _error(request_id: Any, code: int, message: str, data: Any = _rt.UNDEFINED) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not _rt.UNDEFINED:
        error["data"] = data
    return {"jsonrpc": _JSONRPC, "id": request_id, "error": error}


@contextlib.asynccontextmanager
async def open_chain(
    commands: Sequence[Sequence[str]],
    *,
    options: ConnectionOptions = DEFAULT_OPTIONS,
    timeout: float = 5.0,
    stderr: Stderr = None,
) -> AsyncIterator[list[Transport]]:
    """Start each command (a proxy's, ..., the agent's: argv lists) in a session of its own and
    yield the transports over their stdin/stdout; on exit every transport is closed and every
    process group stopped as `spawn_process` says (in at most `timeout` seconds, in parallel)."""
    async with contextlib.AsyncExitStack() as stack:
        transports: list[Transport] = []
        for command in commands:
            if not command:
                raise ValueError("an empty command")
            process = await stack.enter_async_context(
                spawn_process(command[0], *command[1:], timeout=timeout, stderr=stderr)
            )
            assert process.stdin is not None and process.stdout is not None
            transport = StreamTransport(
                process.stdout, process.stdin, limits=options.limits, close_timeout=options.close_timeout
            )
            stack.push_async_callback(transport.close)
            transports.append(transport)
        yield transports


async def run_conductor(
    commands: Sequence[Sequence[str]],
    client: Transport | None = None,
    *,
    options: ConnectionOptions = DEFAULT_OPTIONS,
    timeout: float = 5.0,
    stderr: Stderr = None,
) -> str:
    """Run the chain of `commands` (argv lists, the agent's last) for `client` (by default this
    process's stdin/stdout) until either ends; the reason it ended."""
    if client is None:
        reader, writer = await stdio_streams()
        client = StreamTransport(reader, writer, limits=options.limits, close_timeout=options.close_timeout)
    names = [f"{shlex.join(command)} (component {index})" for index, command in enumerate(commands)]
    async with open_chain(commands, options=options, timeout=timeout, stderr=stderr) as transports:
        return await Conductor(client, transports, names=names, options=options).run()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m PACKAGE.conductor PROXY_COMMAND... AGENT_COMMAND`: each argument one command line."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name if __spec__ else __name__}",
        description="Run a chain of ACP proxies and an agent as one agent over stdio.",
    )
    parser.add_argument(
        "commands", nargs="+", metavar="COMMAND", help="a component's command line; the last, the agent"
    )
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to stop the components on exit (5)")
    arguments = parser.parse_args(argv)
    commands = [shlex.split(command) for command in arguments.commands]
    if not all(commands):
        parser.error("an empty command")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        reason = asyncio.run(run_conductor(commands, timeout=arguments.timeout))
        return 0 if reason == "client closed" else 1
    return 130


if __name__ == "__main__":
    sys.exit(main())
