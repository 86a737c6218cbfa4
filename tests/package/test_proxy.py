"""acp_v2.proxy: `ForwardingAgent` and `ForwardingClient` over `ProxyLink`, run by the conductor.
In this process (the conductor's `Conductor` over in-memory transports, the proxies served with
`serve_proxy`, an agent of the test's): forwarding both ways, a proxy that changes what passes,
cancellation across three hops, extension methods, a flood under small limits; and as processes:
examples/proxy.py in front of examples/echo_agent.py and examples/mcp_agent.py (whose `add` it
serves). Every test ends with no task left (run_bounded)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from tests.support.helpers import ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
sys.path.insert(0, str(ROOT / "generated"))
try:
    conductor = importlib.import_module("acp_v2.conductor")
    proxy = importlib.import_module("acp_v2.proxy")
finally:
    sys.path.remove(str(ROOT / "generated"))
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="test-client", version="1"))
EXAMPLES = ROOT / "examples"


class Agent(acp.Agent):
    """Says each prompt back, then ends the turn; `_slow` waits until cancelled."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.cancelled = asyncio.Event()
        self.notes: list[Any] = []

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, params: Any) -> Any:
        return acp.InitializeResponse(
            protocol_version=params.protocol_version, info=acp.Implementation(name="agent", version="1")
        )

    async def session_new(self, params: Any) -> Any:
        return acp.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: Any) -> Any:
        text = " ".join(block.text for block in params.prompt)
        self.prompts.append(text)
        session = self.client.session(params.session_id)
        await session.say(text)
        await session.idle("end_turn")
        return acp.PromptResponse(message_id="m1")

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_slow":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        if method == "_ask_client":
            return await self.client.ext_method("_client/echo", params)
        return {"method": method, "params": params}

    async def ext_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))


class Client(acp.Client):
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update.to_dict())

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"client saw": method, "params": params}


class Shouting(proxy.ForwardingAgent):
    """A proxy that changes what passes: prompts upper-cased, its name in the agent's."""

    async def initialize(self, params: Any) -> Any:
        answer = await self.successor.initialize(params)
        answer.info.name = f"shouting>{answer.info.name}"
        return answer

    async def session_prompt(self, params: Any) -> Any:
        for block in params.prompt:
            block.text = block.text.upper()
        return await self.successor.session_prompt(params)


@contextlib.asynccontextmanager
async def in_process(
    proxies: Sequence[proxy.ForwardingAgent], agent: acp.Agent, client: acp.Client, limits: Any = None
) -> AsyncIterator[Any]:
    """A client's connection to a conductor running `proxies` and `agent`, all in this process."""
    limits = limits or acp.ConnectionLimits()
    options = acp.ConnectionOptions(limits=limits)
    client_end, conductor_end = acp.memory_transports(limits)
    components, serving = [], []
    for forwarding in proxies:
        mine, theirs = acp.memory_transports(limits)
        components.append(theirs)
        serving.append(asyncio.ensure_future(proxy.serve_proxy(forwarding, mine, options=options)))
    agent_end, theirs = acp.memory_transports(limits)
    components.append(theirs)
    agent_conn = acp.AgentSideConnection(agent, agent_end, options=options)
    running = asyncio.ensure_future(conductor.Conductor(conductor_end, components, options=options).run())
    conn = acp.ClientSideConnection(client, client_end, options=options)
    try:
        yield conn
    finally:
        await conn.close()
        assert await asyncio.wait_for(running, 5) == "client closed"
        await asyncio.wait_for(asyncio.gather(*serving), 5)
        await asyncio.wait_for(agent_conn.wait_closed(), 5)


@pytest.mark.async_timeout(30)
async def test_forwarding_proxies_pass_a_turn_through_unchanged_in_order() -> None:
    client = Client()
    async with in_process([proxy.ForwardingAgent(), proxy.ForwardingAgent()], Agent(), client) as conn:
        answer = await conn.initialize(INIT)
        assert answer.info.name == "agent"
        session = await conn.session_new(acp.NewSessionRequest(cwd="/"))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text="hi")])
        assert (await conn.session_prompt(prompt)).message_id == "m1"
        # The answer came after the updates the agent sent before it, across both proxies.
        assert [u["sessionUpdate"] for u in client.updates] == ["agent_message_chunk", "state_update"]


@pytest.mark.async_timeout(30)
async def test_a_proxy_changes_what_it_overrides() -> None:
    agent = Agent()
    async with in_process([Shouting()], agent, Client()) as conn:
        assert (await conn.initialize(INIT)).info.name == "shouting>agent"
        prompt = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="quiet")])
        await conn.session_prompt(prompt)
        assert agent.prompts == ["QUIET"]


@pytest.mark.async_timeout(30)
async def test_extension_methods_cross_the_proxy_both_ways() -> None:
    agent = Agent()
    async with in_process([proxy.ForwardingAgent()], agent, Client()) as conn:
        await conn.initialize(INIT)
        assert await conn.ext_method("_x/echo", {"a": [1]}) == {"method": "_x/echo", "params": {"a": [1]}}
        answer = await conn.ext_method("_ask_client", {"b": 2})
        assert answer == {"client saw": "_client/echo", "params": {"b": 2}}
        await conn.ext_notification("_x/note", {"c": 3})
        await conn.ext_method("_x/sync", {})  # after the notification, on the same path
        assert agent.notes == [("_x/note", {"c": 3})]
        with pytest.raises(acp.RequestError) as raised:
            await conn.send_request("no/such_method", {})
        assert raised.value.code == -32601  # the proxy's own connection answers it


@pytest.mark.async_timeout(30)
async def test_cancelling_a_request_cancels_it_on_every_hop() -> None:
    agent = Agent()
    async with in_process([proxy.ForwardingAgent(), proxy.ForwardingAgent()], agent, Client()) as conn:
        await conn.initialize(INIT)
        slow = asyncio.ensure_future(conn.ext_method("_slow", {}))
        await asyncio.sleep(0.2)
        slow.cancel()
        await asyncio.wait_for(agent.cancelled.wait(), 5)  # across two proxies and the conductor
        with pytest.raises(asyncio.CancelledError):
            await slow
        assert await conn.ext_method("_x/after", {}) == {"method": "_x/after", "params": {}}


@pytest.mark.async_timeout(60)
async def test_a_flood_through_the_chain_is_answered_whole_within_small_limits() -> None:
    limits = acp.ConnectionLimits(max_concurrent_requests=4, max_queued_notifications=4)
    agent = Agent()
    async with in_process([proxy.ForwardingAgent()], agent, Client(), limits) as conn:
        await conn.initialize(INIT)
        notes = [conn.ext_notification("_n", {"i": i}) for i in range(300)]
        calls = [conn.ext_method("_x/n", {"i": i}) for i in range(300)]
        await asyncio.gather(*notes)
        answers = await asyncio.gather(*calls)
        assert [a["params"]["i"] for a in answers] == list(range(300))
        assert [n[1]["i"] for n in agent.notes] == list(range(300))


@pytest.mark.async_timeout(30)
async def test_an_agent_that_dies_mid_request_fails_it_and_ends_the_proxy() -> None:
    client_end, conductor_end = acp.memory_transports()
    proxy_end, proxy_theirs = acp.memory_transports()
    agent_end, agent_theirs = acp.memory_transports()
    serving = asyncio.ensure_future(proxy.serve_proxy(proxy.ForwardingAgent(), proxy_end))
    agent = Agent()
    agent_conn = acp.AgentSideConnection(agent, agent_end)
    chain = conductor.Conductor(conductor_end, [proxy_theirs, agent_theirs], names=["proxy", "agent"])
    running = asyncio.ensure_future(chain.run())
    async with acp.ClientSideConnection(Client(), client_end) as conn:
        await conn.initialize(INIT)
        slow = asyncio.ensure_future(conn.ext_method("_slow", {}))
        await asyncio.sleep(0.2)
        await agent_conn.close()  # the agent goes, its request unanswered
        with pytest.raises(acp.RequestError) as raised:
            await slow
        assert raised.value.code == -32603
        assert raised.value.data["reason"] == "agent exited"
        assert await asyncio.wait_for(running, 5) == "agent exited"
        await asyncio.wait_for(conn.wait_closed(), 5)
    await asyncio.wait_for(serving, 5)  # the proxy's link was closed: it returned


# --- examples/proxy.py as a process, in a chain the conductor runs ----------------------------


class PromptingClient(acp.Client):
    def __init__(self) -> None:
        self.said: list[str] = []
        self.idle = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        update = params.update
        if isinstance(update, acp.SessionUpdateAgentMessageChunk) and isinstance(update.content, acp.ContentBlockText):
            self.said.append(update.content.text)
        if isinstance(update, acp.SessionUpdateStateUpdate) and isinstance(update.state, acp.StateUpdateIdle):
            self.idle.set()

    async def session_request_permission(self, params: Any) -> Any:
        allow = next(option for option in params.options if option.kind == "allow_once")
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id=allow.option_id))


async def _chain_turn(agent: str, text: str) -> tuple[str, list[str]]:
    client = PromptingClient()
    components = [f"'{sys.executable}' '{EXAMPLES / 'proxy.py'}'", f"'{sys.executable}' '{EXAMPLES / agent}'"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    command = [sys.executable, "-m", "acp_v2.conductor", *components]
    async with acp.spawn_agent_process(client, *command, env=env) as (conn, process):
        name = (await conn.initialize(INIT)).info.name
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text=text)])
        await conn.session_prompt(prompt)
        await asyncio.wait_for(client.idle.wait(), 30)
    assert process.returncode == 0
    return name, client.said


@pytest.mark.async_timeout(60)
async def test_the_example_proxy_gives_an_mcp_agent_its_calc_tool() -> None:
    name, said = await _chain_turn("mcp_agent.py", "add 2 3")
    assert name == "mcp-agent"
    assert "".join(said) == "2 + 3 = 5.0"


@pytest.mark.async_timeout(60)
async def test_the_example_proxy_passes_an_echo_agents_turn_through() -> None:
    name, said = await _chain_turn("echo_agent.py", "through the proxy")
    assert name == "echo-agent"
    assert "".join(said) == "through the proxy"
