"""generator/runtime/conductor.py's routing on its own, over in-memory transports: the test plays
the client and every component with raw JSON-RPC messages. (tests/package/test_conductor.py runs
`python -m acp_v2.conductor` with real processes.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from generator.runtime import conductor
from generator.runtime._connection import ConnectionLimits, ConnectionOptions
from generator.runtime._memory import MemoryTransport, memory_transports


class Peer:
    """The test's end of one of the conductor's links."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end

    async def send(self, message: dict[str, Any]) -> None:
        await self.end.send(json.dumps({"jsonrpc": "2.0", **message}).encode())

    async def receive(self) -> dict[str, Any]:
        data = await asyncio.wait_for(self.end.receive(), 5)
        assert data is not None, "the conductor closed the link"
        message: dict[str, Any] = json.loads(data)
        assert message.pop("jsonrpc") == "2.0"
        return message

    async def nothing(self) -> None:
        """Nothing arrives for a moment."""
        receiving = asyncio.ensure_future(self.end.receive())
        done, _ = await asyncio.wait([receiving], timeout=0.1)
        receiving.cancel()
        assert not done, receiving.result()


@asynccontextmanager
async def conducting(components: int, limits: ConnectionLimits | None = None) -> AsyncIterator[list[Peer]]:
    """The client's peer, then one per component (the last the agent); the conductor runs meanwhile."""
    limits = limits or ConnectionLimits()
    client_end, conductor_client = memory_transports(limits)
    pairs = [memory_transports(limits) for _ in range(components)]
    chain = conductor.Conductor(
        conductor_client, [theirs for _, theirs in pairs], options=ConnectionOptions(limits=limits)
    )
    running = asyncio.ensure_future(chain.run())
    try:
        yield [Peer(client_end), *(Peer(mine) for mine, _ in pairs)]
    finally:
        await client_end.close()
        assert await asyncio.wait_for(running, 5) == "client closed"


async def test_the_client_initializes_a_lone_agent_plainly_and_ids_are_the_conductors() -> None:
    async with conducting(1) as (client, agent):
        await client.send({"id": "init", "method": "initialize", "params": {"protocolVersion": 2}})
        assert await agent.receive() == {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
        await agent.send({"id": 0, "result": {"protocolVersion": 2}, "extra": True})
        assert await client.receive() == {"id": "init", "result": {"protocolVersion": 2}, "extra": True}


async def test_proxy_initialize_and_successor_envelopes_both_ways() -> None:
    async with conducting(2) as (client, proxy, agent):
        await client.send({"id": 1, "method": "initialize", "params": {"protocolVersion": 2}})
        assert await proxy.receive() == {"id": 0, "method": "proxy/initialize", "params": {"protocolVersion": 2}}
        envelope = {"method": "initialize", "params": {"protocolVersion": 2}, "_meta": {"hop": "local"}}
        await proxy.send({"id": "p1", "method": "proxy/successor", "params": envelope})
        assert await agent.receive() == {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
        await agent.send({"id": 0, "error": {"code": -32022, "message": "no", "data": [1]}})
        assert await proxy.receive() == {"id": "p1", "error": {"code": -32022, "message": "no", "data": [1]}}
        # The agent's request goes to the proxy wrapped, the proxy's answer back unchanged.
        await agent.send({"id": 9, "method": "session/request_permission", "params": {"sessionId": "s"}})
        wrapped = {"method": "session/request_permission", "params": {"sessionId": "s"}}
        assert await proxy.receive() == {"id": 1, "method": "proxy/successor", "params": wrapped}  # 0: proxy/initialize
        await proxy.send({"id": 1, "result": {"outcome": {"outcome": "cancelled"}}})
        assert await agent.receive() == {"id": 9, "result": {"outcome": {"outcome": "cancelled"}}}
        # A notification of the agent, wrapped; the proxy's own plain one goes to the client.
        await agent.send({"method": "session/update", "params": {"n": 1}})
        assert await proxy.receive() == {
            "method": "proxy/successor",
            "params": {"method": "session/update", "params": {"n": 1}},
        }
        await proxy.send({"method": "session/update", "params": {"n": 1}})
        assert await client.receive() == {"method": "session/update", "params": {"n": 1}}
        # A wrapped notification without params has none.
        await proxy.send({"method": "proxy/successor", "params": {"method": "_x/ping"}})
        assert await agent.receive() == {"method": "_x/ping"}


async def test_cancellation_is_translated_hop_by_hop_and_never_forwarded_wrapped() -> None:
    async with conducting(2) as (client, proxy, agent):
        await client.send({"id": "c", "method": "session/prompt", "params": {}})
        assert (await proxy.receive())["id"] == 0
        await client.send({"method": "$/cancel_request", "params": {"requestId": "c"}})
        assert await proxy.receive() == {"method": "$/cancel_request", "params": {"requestId": 0}}
        await proxy.send({"id": 5, "method": "proxy/successor", "params": {"method": "session/prompt", "params": {}}})
        assert (await agent.receive())["id"] == 0
        await proxy.send({"method": "$/cancel_request", "params": {"requestId": 5}})
        assert await agent.receive() == {"method": "$/cancel_request", "params": {"requestId": 0}}
        wrapped_cancel = {"method": "$/cancel_request", "params": {"requestId": 0}}
        await proxy.send({"method": "proxy/successor", "params": wrapped_cancel})
        await agent.nothing()
        await agent.send({"id": 0, "error": {"code": -32800, "message": "Request cancelled"}})
        assert await proxy.receive() == {"id": 5, "error": {"code": -32800, "message": "Request cancelled"}}
        # Cancelling a request that is no longer pending reaches nobody.
        await proxy.send({"method": "$/cancel_request", "params": {"requestId": 5}})
        await agent.nothing()


async def test_what_cannot_be_routed_is_answered_by_the_conductor() -> None:
    async with conducting(2) as (client, proxy, agent):
        await agent.send({"id": 1, "method": "proxy/successor", "params": {"method": "x"}})
        answer = await agent.receive()
        assert answer["id"] == 1 and answer["error"]["code"] == -32601
        await proxy.send({"id": 2, "method": "proxy/successor", "params": {"params": {}}})
        answer = await proxy.receive()
        assert answer["id"] == 2 and answer["error"]["code"] == -32602
        await proxy.send({"id": 3, "method": "proxy/successor", "params": {"method": "x"}})
        await proxy.send({"id": 3, "method": "proxy/successor", "params": {"method": "y"}})
        assert (await agent.receive())["method"] == "x"
        answer = await proxy.receive()
        assert answer["id"] == 3 and answer["error"]["code"] == -32600  # id 3 is in use
        await client.end.send(b"[1, 2")
        assert (await client.receive())["error"]["code"] == -32700
        await client.end.send(b"[]")
        assert (await client.receive())["error"]["code"] == -32600
        await agent.send({"id": 77, "result": {}})  # an answer to nothing: dropped
        await client.nothing()
        await agent.send({"id": 0, "result": {}, "error": {"code": 1, "message": "both"}})
        answer = await proxy.receive()
        assert answer["id"] == 3 and answer["error"]["code"] == -32603


async def test_a_link_at_its_request_limit_is_read_no_further_until_one_is_answered() -> None:
    async with conducting(1, ConnectionLimits(max_concurrent_requests=2)) as (client, agent):
        for request_id in range(3):
            await client.send({"id": request_id, "method": "_slow", "params": {}})
        first, second = await agent.receive(), await agent.receive()
        await agent.nothing()
        await agent.send({"id": first["id"], "result": 1})
        assert await client.receive() == {"id": 0, "result": 1}
        assert (await agent.receive())["id"] == 2
        await agent.send({"id": second["id"], "result": 2})
        assert await client.receive() == {"id": 1, "result": 2}


async def test_a_component_that_exits_fails_what_is_pending_and_ends_the_chain() -> None:
    limits = ConnectionLimits()
    client_end, conductor_client = memory_transports(limits)
    (proxy_end, proxy_theirs), (agent_end, agent_theirs) = memory_transports(limits), memory_transports(limits)
    chain = conductor.Conductor(
        conductor_client, [proxy_theirs, agent_theirs], names=["p", "a"], options=ConnectionOptions(limits=limits)
    )
    running = asyncio.ensure_future(chain.run())
    client, proxy = Peer(client_end), Peer(proxy_end)
    await client.send({"id": 1, "method": "session/prompt", "params": {}})
    await proxy.receive()
    await proxy.send({"id": 1, "method": "proxy/successor", "params": {"method": "session/prompt"}})
    await Peer(agent_end).receive()
    await agent_end.close()  # the agent exits
    assert await asyncio.wait_for(running, 5) == "a exited"
    answer = await client.receive()
    assert answer["id"] == 1 and answer["error"]["code"] == -32603
    assert answer["error"]["data"] == {"reason": "a exited", "method": "session/prompt", "component": "p"}
    assert await client_end.receive() is None  # the client's stream is closed
    await client_end.close()
    await proxy_end.close()


async def test_a_message_whose_routing_fails_is_answered_and_the_rest_are_routed() -> None:
    limits = ConnectionLimits()
    client_end, conductor_client = memory_transports(limits)
    agent_end, agent_theirs = memory_transports(limits)
    chain = conductor.Conductor(conductor_client, [agent_theirs], options=ConnectionOptions(limits=limits))
    route = chain._route

    async def failing(link: Any, data: bytes) -> None:
        if b"deep" in data:
            raise RecursionError("maximum recursion depth exceeded")  # as a deep message's encoding can
        await route(link, data)

    chain._route = failing  # type: ignore[method-assign]
    running = asyncio.ensure_future(chain.run())
    client, agent = Peer(client_end), Peer(agent_end)
    await client.send({"id": 5, "method": "_deep", "params": {}})
    assert await client.receive() == {"id": 5, "error": {"code": -32603, "message": "Internal error"}}
    await client.send({"method": "_deep", "params": {}})  # a notification: nobody to answer
    await client.send({"id": 6, "method": "_fine", "params": {}})
    assert await agent.receive() == {"id": 0, "method": "_fine", "params": {}}
    await client_end.close()
    assert await asyncio.wait_for(running, 5) == "client closed"
    await agent_end.close()
