"""generator/runtime/_proxy.py on its own: `ProxyLink` splits a proxy's connection to its
conductor into its upstream and downstream transports; the test plays the conductor on one end
and the proxy's two connections on the other, with raw JSON-RPC messages."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from generator.runtime._connection import ConnectionClosed, ConnectionLimits, MessageTooLarge
from generator.runtime._memory import MemoryTransport, memory_transports
from generator.runtime._proxy import ProxyLink, ProxySide


async def send(end: MemoryTransport | ProxySide, message: dict[str, Any]) -> None:
    await end.send(json.dumps({"jsonrpc": "2.0", **message}).encode())


async def receive(end: MemoryTransport | ProxySide) -> dict[str, Any]:
    data = await asyncio.wait_for(end.receive(), 5)
    assert data is not None, "the stream ended"
    message: dict[str, Any] = json.loads(data)
    assert message.pop("jsonrpc") == "2.0"
    return message


@asynccontextmanager
async def linked(limits: ConnectionLimits | None = None) -> AsyncIterator[tuple[MemoryTransport, ProxyLink]]:
    """The conductor's end, and the proxy's link over the other end."""
    conductor, proxy = memory_transports(ConnectionLimits(), limits)
    link = ProxyLink(proxy)
    try:
        yield conductor, link
    finally:
        await conductor.close()
        await link.upstream.close()
        await link.downstream.close()


async def test_the_predecessors_messages_arrive_upstream_with_proxy_initialize_read_as_initialize() -> None:
    async with linked() as (conductor, link):
        await send(conductor, {"id": 0, "method": "proxy/initialize", "params": {"protocolVersion": 2}})
        assert await receive(link.upstream) == {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
        await send(link.upstream, {"id": 0, "result": {"protocolVersion": 2}})
        assert await receive(conductor) == {"id": 0, "result": {"protocolVersion": 2}}
        await send(conductor, {"method": "session/cancel", "params": {"sessionId": "s"}})
        assert await receive(link.upstream) == {"method": "session/cancel", "params": {"sessionId": "s"}}


async def test_the_successors_messages_arrive_downstream_unwrapped_and_answers_go_back_plain() -> None:
    async with linked() as (conductor, link):
        envelope = {"method": "session/update", "params": {"n": 1}, "_meta": {"hop": 1}}
        await send(conductor, {"id": 4, "method": "proxy/successor", "params": envelope})
        assert await receive(link.downstream) == {"id": 4, "method": "session/update", "params": {"n": 1}}
        await send(link.downstream, {"id": 4, "error": {"code": -32601, "message": "no"}})
        assert await receive(conductor) == {"id": 4, "error": {"code": -32601, "message": "no"}}
        await send(conductor, {"method": "proxy/successor", "params": {"method": "_x/ping", "params": None}})
        assert await receive(link.downstream) == {"method": "_x/ping"}


async def test_both_sides_requests_get_ids_of_the_link_and_their_answers_the_sides_ids() -> None:
    async with linked() as (conductor, link):
        await send(link.downstream, {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}})
        await send(link.upstream, {"id": 0, "method": "session/request_permission", "params": {}})
        await send(link.downstream, {"method": "session/cancel", "params": {"sessionId": "s"}})
        wrapped = {"method": "initialize", "params": {"protocolVersion": 2}}
        assert await receive(conductor) == {"id": 0, "method": "proxy/successor", "params": wrapped}
        assert await receive(conductor) == {"id": 1, "method": "session/request_permission", "params": {}}
        wrapped = {"method": "session/cancel", "params": {"sessionId": "s"}}
        assert await receive(conductor) == {"method": "proxy/successor", "params": wrapped}
        await send(conductor, {"id": 1, "result": {"outcome": "x"}})
        await send(conductor, {"id": 0, "result": {"protocolVersion": 2}})
        assert await receive(link.upstream) == {"id": 0, "result": {"outcome": "x"}}
        assert await receive(link.downstream) == {"id": 0, "result": {"protocolVersion": 2}}


async def test_cancellations_name_the_request_on_the_link_and_are_never_wrapped() -> None:
    async with linked() as (conductor, link):
        await send(link.downstream, {"id": 7, "method": "session/prompt", "params": {}})
        assert (await receive(conductor))["id"] == 0
        await send(link.downstream, {"method": "$/cancel_request", "params": {"requestId": 7}})
        assert await receive(conductor) == {"method": "$/cancel_request", "params": {"requestId": 0}}
        # The conductor cancels a request it sent: the side serving it hears of it.
        await send(conductor, {"id": 3, "method": "proxy/successor", "params": {"method": "x/y", "params": {}}})
        await receive(link.downstream)
        await send(conductor, {"method": "$/cancel_request", "params": {"requestId": 3}})
        assert await receive(link.downstream) == {"method": "$/cancel_request", "params": {"requestId": 3}}
        await send(conductor, {"method": "$/cancel_request", "params": {"requestId": 99}})  # no such request
        await send(conductor, {"method": "session/cancel", "params": {}})
        assert (await receive(link.upstream))["method"] == "session/cancel"  # and nothing before it


async def test_what_does_not_read_as_a_message_goes_upstream_for_its_connection_to_answer() -> None:
    async with linked(ConnectionLimits(max_message_bytes=100)) as (conductor, link):
        await conductor.send(b"{not json")
        assert await link.upstream.receive() == b"{not json"
        await conductor.send(b"[1]")
        assert await link.upstream.receive() == b"[1]"
        await conductor.send(b"x" * 200)
        with pytest.raises(MessageTooLarge):
            await link.upstream.receive()
        await send(conductor, {"id": 1, "method": "proxy/successor", "params": {"params": {}}})
        answer = await receive(conductor)
        assert answer["id"] == 1 and answer["error"]["code"] == -32602


async def test_the_end_of_the_conductors_stream_ends_both_sides_and_both_closes_close_it() -> None:
    conductor, proxy = memory_transports()
    link = ProxyLink(proxy)
    await send(conductor, {"method": "session/cancel", "params": {}})
    await conductor.close()
    assert (await receive(link.upstream))["method"] == "session/cancel"
    assert await link.upstream.receive() is None
    assert await link.downstream.receive() is None
    assert await link.upstream.receive() is None  # and stays ended
    await link.upstream.close()
    await link.downstream.close()
    with pytest.raises(ConnectionClosed):
        await send(link.downstream, {"method": "x"})


async def test_a_message_whose_routing_fails_goes_upstream_for_its_connection_to_answer() -> None:
    async with linked() as (conductor, link):
        route = link._route

        async def failing(data: bytes) -> None:
            if b"deep" in data:
                raise RecursionError("maximum recursion depth exceeded")  # as a deep message's encoding can
            await route(data)

        link._route = failing  # type: ignore[method-assign]
        await send(conductor, {"id": 1, "method": "proxy/successor", "params": {"method": "_deep"}})
        assert (await receive(link.upstream))["method"] == "proxy/successor"  # its connection refuses it
        await send(conductor, {"id": 2, "method": "proxy/successor", "params": {"method": "_fine"}})
        assert await receive(link.downstream) == {"id": 2, "method": "_fine"}
