"""One bundle of connection options (`ConnectionOptions`): what it refuses, and that every entry
point of the package takes it as `options=` and hands it, whole, to the connections and transports
it makes (acp_v2's `transports`, the same module in every package)."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.helpers import ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")

LIMITS = acp.ConnectionLimits(max_message_bytes=1234, max_buffered_bytes=5678, max_output_stall=9.5, max_id_length=77)
OPTIONS = acp.ConnectionOptions(limits=LIMITS, strict=True, on_salvage=lambda salvage: None, close_timeout=0.25)
# What an option once had a second spelling as, or was passed as on its own: gone from every entry point.
OLD_KEYWORDS = {
    "limits",
    "limit",
    "client_limits",
    "strict",
    "on_salvage",
    "close_timeout",
    "max_message_bytes",
    "max_buffered_bytes",
    "max_output_stall",
    "max_id_length",
}


# --- the options themselves --------------------------------------------------


def test_the_defaults_are_the_connections_defaults():
    assert acp.ConnectionOptions() == acp.DEFAULT_OPTIONS
    assert acp.DEFAULT_OPTIONS.limits is acp.DEFAULT_LIMITS
    assert (acp.DEFAULT_OPTIONS.strict, acp.DEFAULT_OPTIONS.on_salvage, acp.DEFAULT_OPTIONS.close_timeout) == (
        False,
        None,
        5.0,
    )


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("limits", {"max_message_bytes": 10}, TypeError),
        ("limits", None, TypeError),
        ("strict", 1, TypeError),
        ("strict", "yes", TypeError),
        ("on_salvage", "print", TypeError),
        ("close_timeout", 0, ValueError),
        ("close_timeout", -1.0, ValueError),
        ("close_timeout", math.nan, ValueError),
        ("close_timeout", "5", ValueError),
        ("close_timeout", True, ValueError),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(field, value, error):
    with pytest.raises(error, match=rf"^{field} must be .*{value!r}"):
        acp.ConnectionOptions(**{field: value})


def test_replacing_a_field_checks_it_too():
    import dataclasses

    with pytest.raises(ValueError, match="close_timeout"):
        dataclasses.replace(OPTIONS, close_timeout=-1)


# --- every entry point takes them --------------------------------------------


def _entry_points(package: Any) -> dict[str, Callable[..., Any]]:
    names = [*package.transports.__all__, "AgentSideConnection", "ClientSideConnection"]
    return {name: getattr(package, name) for name in names}


@pytest.mark.parametrize("package", [acp, acp_v1], ids=["acp_v2", "acp_v1"])
def test_every_entry_point_takes_options_and_no_second_spelling_of_one(package):
    for name, entry in _entry_points(package).items():
        parameters = inspect.signature(entry).parameters
        assert "options" in parameters, name
        assert parameters["options"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameters["options"].default is package.DEFAULT_OPTIONS, name
        assert not OLD_KEYWORDS & set(parameters) - {"client_options"}, f"{name}: {OLD_KEYWORDS & set(parameters)}"
    assert not hasattr(package, "DEFAULT_LIMIT")


# --- and passes them through -------------------------------------------------


class Stop(Exception):
    """Raised by a spy once the entry point has made what the test looks at."""


class Spies:
    """Stand-ins for what the entry points make, recording what each is given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.connections: list[Any] = []  # the options of each connection made
        self.transports: list[tuple[Any, Any]] = []  # (limits, close_timeout) of each StreamTransport
        self.routed: list[Any] = []  # the options of each connection routed or negotiated
        self.other: dict[str, Any] = {}
        module = acp.transports
        monkeypatch.setattr(module, "AgentSideConnection", self.connection)
        monkeypatch.setattr(module, "ClientSideConnection", self.connection)
        monkeypatch.setattr(module, "StreamTransport", self.stream_transport)
        monkeypatch.setattr(module, "stdio_streams", self.stdio_streams)
        monkeypatch.setattr(module, "spawn_process", self.spawn_process)
        monkeypatch.setattr(module, "memory_transports", self.memory_transports)
        monkeypatch.setattr(module, "_router", SimpleNamespace(serve=self.serve, negotiate=self.negotiate))
        monkeypatch.setattr(
            importlib.import_module("acp_runtime._websocket"), "open_websocket", self.opened("websocket")
        )
        monkeypatch.setattr(
            importlib.import_module("acp_runtime._websocket"), "serve_transports", self.serve_transports
        )
        monkeypatch.setattr(importlib.import_module("acp_runtime._http_client"), "open_http", self.opened("http"))
        monkeypatch.setattr(importlib.import_module("acp_runtime._http_server"), "AcpHttpApp", self.http_app)

    def connection(self, handler: Any, transport: Any, *, options: Any) -> Any:
        self.connections.append(options)
        raise Stop

    def stream_transport(self, reader: Any, writer: Any, *, limits: Any, close_timeout: Any) -> Any:
        self.transports.append((limits, close_timeout))
        return SimpleNamespace(close=_nothing)

    async def stdio_streams(self) -> tuple[Any, Any]:
        return None, None

    @contextlib.asynccontextmanager
    async def spawn_process(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self.other["spawn_process"] = kwargs
        yield SimpleNamespace(stdin=object(), stdout=object())

    def memory_transports(self, limits: Any, other_limits: Any) -> tuple[Any, Any]:
        self.other["memory_transports"] = (limits, other_limits)
        return object(), object()

    async def serve(self, transport: Any, routes: Any, options: Any) -> None:
        self.routed.append(options)
        raise Stop

    async def negotiate(self, transport: Any, params: Any, route: Any, routes: Any, options: Any) -> Any:
        self.routed.append(options)
        raise Stop

    def opened(self, kind: str) -> Callable[..., Any]:
        @contextlib.asynccontextmanager
        async def open_transport(url: str, **kwargs: Any) -> AsyncIterator[Any]:
            self.other[kind] = kwargs
            yield object()

        return open_transport

    @contextlib.asynccontextmanager
    async def serve_transports(self, handle: Callable[[Any], Awaitable[None]], **kwargs: Any) -> AsyncIterator[Any]:
        self.other["serve_transports"] = kwargs
        with contextlib.suppress(Stop):
            await handle(object())  # a connection arrives
        yield object()

    def http_app(self, handle: Callable[[Any], Awaitable[None]], **kwargs: Any) -> Any:
        self.other["http_app"] = kwargs
        return handle


async def _nothing() -> None:
    pass


async def _until_stop(entered: Any) -> None:
    with contextlib.suppress(Stop):
        async with entered:
            pass


def _limit_keywords(limits: Any, *names: str) -> dict[str, Any]:
    return {name: getattr(limits, name) for name in names}


ENTRY_POINTS: dict[str, Callable[[Spies], Awaitable[None]]] = {}


def case(name: str) -> Callable[[Callable[[Spies], Awaitable[None]]], Callable[[Spies], Awaitable[None]]]:
    def register(drive: Callable[[Spies], Awaitable[None]]) -> Callable[[Spies], Awaitable[None]]:
        ENTRY_POINTS[name] = drive
        return drive

    return register


@case("run_agent")
async def _run_agent(spies: Spies) -> None:
    with contextlib.suppress(Stop):
        await acp.run_agent(acp.Agent(), options=OPTIONS)
    with contextlib.suppress(Stop):
        await acp.run_agent(acp.Agent(), acp_v1.Agent(), options=OPTIONS)  # routed
    assert spies.connections == [OPTIONS] and spies.routed == [OPTIONS]
    assert spies.transports == [(LIMITS, OPTIONS.close_timeout)] * 2


@case("serve_agent")
async def _serve_agent(spies: Spies) -> None:
    with contextlib.suppress(Stop):
        await acp.serve_agent(object(), acp.Agent(), acp_v1.Agent(), options=OPTIONS)
    assert spies.routed == [OPTIONS]


@case("connect_negotiated")
async def _connect_negotiated(spies: Spies) -> None:
    with contextlib.suppress(Stop):
        await acp.connect_negotiated(acp.Client(), object(), None, acp_v1.Client(), options=OPTIONS)
    assert spies.routed == [OPTIONS]


@case("connect_to_agent")
async def _connect_to_agent(spies: Spies) -> None:
    with contextlib.suppress(Stop):
        acp.connect_to_agent(acp.Client(), None, None, options=OPTIONS)
    assert spies.connections == [OPTIONS] and spies.transports == [(LIMITS, OPTIONS.close_timeout)]


@case("connect_to_client")
async def _connect_to_client(spies: Spies) -> None:
    with contextlib.suppress(Stop):
        acp.connect_to_client(acp.Agent(), None, None, options=OPTIONS)
    assert spies.connections == [OPTIONS] and spies.transports == [(LIMITS, OPTIONS.close_timeout)]


@case("connect_pair")
async def _connect_pair(spies: Spies) -> None:
    await _until_stop(acp.connect_pair(acp.Agent(), acp.Client(), options=OPTIONS))
    assert spies.connections == [OPTIONS] and spies.other["memory_transports"] == (LIMITS, LIMITS)


@case("open_websocket")
async def _open_websocket(spies: Spies) -> None:
    async with acp.open_websocket("ws://127.0.0.1:1/acp", options=OPTIONS):
        pass
    assert spies.other["websocket"]["max_message_bytes"] == LIMITS.max_message_bytes


@case("connect_websocket")
async def _connect_websocket(spies: Spies) -> None:
    await _until_stop(acp.connect_websocket(acp.Client(), "ws://127.0.0.1:1/acp", options=OPTIONS))
    assert spies.connections == [OPTIONS]
    assert spies.other["websocket"]["max_message_bytes"] == LIMITS.max_message_bytes


@case("serve_websocket")
async def _serve_websocket(spies: Spies) -> None:
    async with acp.serve_websocket(acp.Agent, options=OPTIONS):
        pass
    assert spies.routed == [OPTIONS]
    server = spies.other["serve_transports"]
    assert server["max_message_bytes"] == LIMITS.max_message_bytes
    assert server["max_output_stall"] == LIMITS.max_output_stall


@case("open_http")
async def _open_http(spies: Spies) -> None:
    async with acp.open_http("http://127.0.0.1:1/acp", options=OPTIONS):
        pass
    assert spies.other["http"]["max_message_bytes"] == LIMITS.max_message_bytes


@case("connect_http")
async def _connect_http(spies: Spies) -> None:
    await _until_stop(acp.connect_http(acp.Client(), "http://127.0.0.1:1/acp", options=OPTIONS))
    assert spies.connections == [OPTIONS]
    assert spies.other["http"]["max_message_bytes"] == LIMITS.max_message_bytes


@case("http_app")
async def _http_app(spies: Spies) -> None:
    handle = acp.http_app(acp.Agent, options=OPTIONS)
    with contextlib.suppress(Stop):
        await handle(object())  # a connection arrives
    assert spies.routed == [OPTIONS]
    limits = ("max_message_bytes", "max_buffered_bytes", "max_output_stall", "max_id_length")
    server = spies.other["http_app"]
    assert {name: server[name] for name in limits} == _limit_keywords(LIMITS, *limits)


@case("spawn_agent_process")
async def _spawn_agent_process(spies: Spies) -> None:
    await _until_stop(acp.spawn_agent_process(acp.Client(), "agent", timeout=3.0, options=OPTIONS))
    assert spies.connections == [OPTIONS] and spies.transports == [(LIMITS, 1.5)]


@case("open_agent_process")
async def _open_agent_process(spies: Spies) -> None:
    async with acp.open_agent_process("agent", timeout=3.0, options=OPTIONS):
        pass
    assert spies.transports == [(LIMITS, 1.5)]


@case("spawn_client_process")
async def _spawn_client_process(spies: Spies) -> None:
    await _until_stop(acp.spawn_client_process(acp.Agent(), "client", timeout=3.0, options=OPTIONS))
    assert spies.connections == [OPTIONS] and spies.transports == [(LIMITS, 1.5)]
    assert spies.other["spawn_process"]["limit"] == LIMITS.max_message_bytes + 1


def test_every_entry_point_has_a_pass_through_case():
    assert set(ENTRY_POINTS) == set(acp.transports.__all__)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
async def test_an_entry_point_hands_its_options_whole_to_what_it_makes(name, monkeypatch):
    await ENTRY_POINTS[name](Spies(monkeypatch))


async def test_connect_pair_gives_the_client_its_own_options_when_they_differ(monkeypatch):
    spies = Spies(monkeypatch)
    client_options = acp.ConnectionOptions(limits=acp.ConnectionLimits(max_message_bytes=99))
    monkeypatch.setattr(
        acp.transports, "AgentSideConnection", lambda agent, end, *, options: spies.connections.append(options)
    )
    await _until_stop(acp.connect_pair(acp.Agent(), acp.Client(), options=OPTIONS, client_options=client_options))
    assert spies.connections == [OPTIONS, client_options]
    assert spies.other["memory_transports"] == (LIMITS, client_options.limits)


async def test_a_connection_reads_its_options(monkeypatch):
    seen: list[Any] = []
    options = acp.ConnectionOptions(strict=True, on_salvage=seen.append)
    agent_end, client_end = acp.memory_transports()
    conn = acp.ClientSideConnection(acp.Client(), client_end, options=options)
    assert conn.options is options
    await conn.close()
    await agent_end.close()


@pytest.mark.parametrize("wrong", [acp.DEFAULT_LIMITS, {"strict": True}, None])
def test_what_is_not_options_is_refused_before_anything_is_made(wrong, monkeypatch):
    spies = Spies(monkeypatch)
    with pytest.raises(TypeError, match=r"^options must be a ConnectionOptions"):
        acp.connect_to_client(acp.Agent(), None, None, options=wrong)
    with pytest.raises(TypeError, match=r"^options must be a ConnectionOptions"):
        acp.ClientSideConnection(acp.Client(), object(), options=wrong)
    assert spies.connections == [] and spies.transports == []


async def test_a_routed_connection_takes_the_options_of_the_package_that_routed_it():
    """`acp_v2.serve_agent` hands acp_v2's options to acp_v1's connection when v1 is selected."""
    agent_end, client_end = acp.memory_transports()
    options = acp.ConnectionOptions(strict=True, close_timeout=1.5)
    conn = acp_v1.ClientSideConnection(acp_v1.Client(), client_end, options=options)
    assert conn.options is options
    await conn.close()
    await agent_end.close()
    # The limits of another package generated with it are limits too.
    assert acp_v1.ConnectionOptions(limits=acp.ConnectionLimits(max_message_bytes=5)).limits.max_message_bytes == 5
