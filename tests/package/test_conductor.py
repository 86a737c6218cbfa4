"""`python -m acp_v2.conductor`: a chain of proxies and an agent run as one agent over stdio. The
proxies here are tests/support/raw_proxy.py, written against the wire alone; the agent is
examples/echo_agent.py. The client is the package's own, started on the conductor."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import ROOT, import_package

pytestmark = pytest.mark.async_timeout(60)
acp = import_package(ROOT / "generated", "acp_v2")
RAW_PROXY = [sys.executable, str(ROOT / "tests" / "support" / "raw_proxy.py")]
ECHO_AGENT = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="test-client", version="1"))


class AllowingClient(acp.Client):
    """Allows every permission request and records the updates of each turn."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.idle: asyncio.Queue[str] = asyncio.Queue()
        self.permissions = 0

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update.to_dict())
        if isinstance(params.update, acp.SessionUpdateStateUpdate) and isinstance(
            params.update.state, acp.StateUpdateIdle
        ):
            self.idle.put_nowait(params.update.state.stop_reason.stop_reason)

    async def session_request_permission(self, params: Any) -> Any:
        self.permissions += 1
        allow = next(option for option in params.options if option.kind == "allow_once")
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id=allow.option_id))

    def said(self) -> str:
        return "".join(u["content"]["text"] for u in self.updates if u["sessionUpdate"] == "agent_message_chunk")


def _command(argv: list[str]) -> str:
    return " ".join(f"'{arg}'" for arg in argv)


def _with_marker(marker: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "generated"), "ACP_CHAIN_TEST": marker}


def _marked(marker: str) -> list[int]:
    """The processes whose environment carries `marker` (the conductor passes its own on)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if f"ACP_CHAIN_TEST={marker}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


@contextlib.asynccontextmanager
async def chain(*components: list[str]) -> AsyncIterator[tuple[Any, AllowingClient, Any]]:
    """A client connected to a conductor running `components`; afterwards no process of the chain remains."""
    client, marker = AllowingClient(), uuid.uuid4().hex
    command = [sys.executable, "-m", "acp_v2.conductor", *(_command(c) for c in components)]
    async with acp.spawn_agent_process(client, *command, env=_with_marker(marker)) as (conn, process):
        yield conn, client, process
    assert _marked(marker) == []


async def _turn(conn: Any, client: AllowingClient, text: str) -> str:
    session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
    prompt = [acp.ContentBlockText(text=text)]
    await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
    assert await asyncio.wait_for(client.idle.get(), 20) == "end_turn"
    return client.said()


async def test_a_proxy_fronts_the_agent_and_a_turn_crosses_it_both_ways() -> None:
    async with chain(RAW_PROXY, ECHO_AGENT) as (conn, client, process):
        answer = await conn.initialize(INIT)
        assert answer.info.name == "raw-proxy>echo-agent"  # proxy/initialize reached the proxy
        assert answer.protocol_version == 2
        assert "hello proxy" in await _turn(conn, client, "hello proxy")
        assert client.permissions == 1  # the agent's request crossed the proxy upstream
    assert process.returncode == 0


async def test_the_agent_alone_gets_a_plain_initialize() -> None:
    async with chain(ECHO_AGENT) as (conn, client, process):
        assert (await conn.initialize(INIT)).info.name == "echo-agent"
        assert "alone" in await _turn(conn, client, "alone")
    assert process.returncode == 0


async def test_two_proxies_each_initialize_their_successor() -> None:
    async with chain(RAW_PROXY, RAW_PROXY, ECHO_AGENT) as (conn, client, _process):
        assert (await conn.initialize(INIT)).info.name == "raw-proxy>raw-proxy>echo-agent"
        assert "two hops" in await _turn(conn, client, "two hops")


async def test_errors_come_back_unchanged_through_the_chain() -> None:
    async with chain(RAW_PROXY, ECHO_AGENT) as (conn, _client, _process):
        await conn.initialize(INIT)
        with pytest.raises(acp.RequestError) as raised:
            await conn.send_request("_no/such_method", {})
        assert raised.value.code == -32601  # the agent's answer
        assert raised.value.data == {"method": "_no/such_method"}


async def test_a_proxy_that_answers_garbage_fails_the_request_it_answered() -> None:
    async with chain([*RAW_PROXY, "--garbage"], ECHO_AGENT) as (conn, _client, _process):
        await conn.initialize(INIT)
        with pytest.raises(acp.RequestError) as raised:
            await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        assert raised.value.code == -32603
        assert "does not parse" in raised.value.data["reason"]


async def test_a_component_that_dies_mid_turn_ends_the_chain_with_errors() -> None:
    async with chain([*RAW_PROXY, "--die"], ECHO_AGENT) as (conn, _client, process):
        await conn.initialize(INIT)
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text="x")])
        with pytest.raises((acp.RequestError, acp.ConnectionClosed)) as raised:
            await conn.session_prompt(prompt)
        if isinstance(raised.value, acp.RequestError):
            assert raised.value.code == -32603
            assert "exited" in raised.value.data["reason"]
        await asyncio.wait_for(conn.wait_closed(), 10)  # the conductor closed its stdout
        assert await asyncio.wait_for(process.wait(), 10) == 1
