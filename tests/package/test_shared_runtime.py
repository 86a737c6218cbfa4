"""acp_v2 and acp_v1, generated together, share one runtime (generated/acp_runtime): the same
objects in both, so values and errors cross from one package to the other, while each decodes
and encodes its own types."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from tests.support.helpers import ROOT, import_package

acp_v2 = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")

# What both packages export from the runtime: absent values and errors, the codec's base,
# connection limits, options and errors, transports, observers and the router's error.
SHARED = (
    "UNDEFINED",
    "Undefined",
    "MaybeUndefined",
    "Model",
    "Salvage",
    "DecodeError",
    "ConnectionClosed",
    "ConnectionLimits",
    "ConnectionOptions",
    "DEFAULT_LIMITS",
    "DEFAULT_OPTIONS",
    "MessageTooLarge",
    "Transport",
    "StreamTransport",
    "MemoryTransport",
    "memory_transports",
    "WireObserver",
    "WireEvent",
    "LoggingObserver",
    "opentelemetry_observer",
    "ProtocolVersionMismatch",
)


@pytest.mark.parametrize("name", SHARED)
def test_a_runtime_name_is_one_object_in_both_packages(name):
    assert name in acp_v2.__all__ and name in acp_v1.__all__
    assert getattr(acp_v1, name) is getattr(acp_v2, name)
    value = getattr(acp_v2, name)
    if isinstance(value, type):
        assert value.__module__.startswith("acp_runtime.")


def test_each_package_has_its_own_request_error_on_one_shared_base():
    base = acp_v2.RequestError.__mro__[1]
    assert acp_v1.RequestError.__mro__[1] is base and base.__module__ == "acp_runtime._connection"
    assert acp_v1.RequestError is not acp_v2.RequestError  # each carries its package's error data types
    with pytest.raises(base):
        raise acp_v1.RequestError(-32000, "v1")


def test_the_router_and_its_routes_are_shared():
    route_v2 = acp_v2.Agent()._acp_route()
    route_v1 = acp_v1.Agent()._acp_route()
    assert type(route_v1) is type(route_v2)
    assert (route_v2.version, route_v1.version) == (2, 1)


def test_a_value_of_one_package_holds_the_others_absent_value():
    """The issue's example: a v1 type given v2's UNDEFINED encodes (it raised TypeError when each
    package had its own `Undefined`)."""
    implementation = acp_v1.Implementation(name="a", version="1", title=acp_v2.UNDEFINED)
    assert acp_v1.encode(implementation) == {"name": "a", "version": "1"}
    assert acp_v2.Implementation.from_dict({"name": "a", "version": "1"}).title is acp_v1.UNDEFINED


def test_a_decode_error_of_one_package_is_caught_by_the_others_class():
    with pytest.raises(acp_v2.DecodeError) as caught:
        acp_v1.decode("Implementation", {"name": 1, "version": "1"})
    assert caught.value.path == "$.name"
    with pytest.raises(acp_v1.DecodeError):
        acp_v2.NewSessionRequest.from_json("{")


async def test_a_closed_connection_of_one_package_is_caught_by_the_others_class():
    agent_end, client_end = acp_v1.memory_transports()
    conn = acp_v1.ClientSideConnection(acp_v1.Client(), client_end)
    await conn.close()
    with pytest.raises(acp_v2.ConnectionClosed):
        await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
    await agent_end.close()


def test_one_options_object_serves_both_packages():
    options = acp_v2.ConnectionOptions(strict=True, limits=acp_v1.ConnectionLimits(max_message_bytes=1 << 20))
    assert acp_v1.ConnectionOptions.checked(options) is options


def test_each_package_decodes_its_own_types_by_name():
    data = {"protocolVersion": 1, "clientCapabilities": {}}
    assert type(acp_v1.decode("InitializeRequest", data)) is acp_v1.InitializeRequest
    v2 = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}}
    assert type(acp_v2.decode("InitializeRequest", v2)) is acp_v2.InitializeRequest
    assert acp_v1.InitializeRequest.from_dict(data).to_dict() == data
    assert acp_v2.InitializeRequest.from_dict(v2).to_dict()["info"] == {"name": "c", "version": "1"}


def test_a_subclass_of_a_generated_class_decodes_with_its_package_in_a_fresh_interpreter():
    """Before either codec is imported, the first use of a class finds the codec of the package
    that defines it, also through a user's subclass (in a module of its own called `models`)."""
    program = (
        "import sys, types, json; sys.path.insert(0, sys.argv[1]); import acp_v1, acp_v2\n"
        "models = types.ModuleType('app.models'); sys.modules['app.models'] = models\n"
        "class Mine(acp_v1.Implementation): pass\n"
        "Mine.__module__ = 'app.models'\n"
        "print(json.dumps([type(Mine.from_dict({'name': 'n', 'version': '1'})).__name__,\n"
        "    acp_v2.Implementation(name='m', version='2').to_dict(), 'acp_v1._codec' in sys.modules]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program, str(ROOT / "generated")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["Mine", {"name": "m", "version": "2"}, True]


def test_the_runtimes_loggers_are_named_after_the_runtime_package(caplog):
    with caplog.at_level(logging.WARNING, logger="acp_runtime"):
        acp_v2.decode("ToolCallUpdate", {"toolCallId": "t", "kind": 5})
    assert [record.name for record in caplog.records] == ["acp_runtime"]
