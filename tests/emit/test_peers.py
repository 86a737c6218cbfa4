"""The context of connection.py: peers and their methods."""

from __future__ import annotations

import dataclasses

import pytest

from generator import static
from generator.emit.peers import (
    TRANSPORT_MODULES,
    connection_context,
    connection_names,
    left_out_names,
    peer,
    transport_names,
)
from generator.emit.pytypes import Queries
from generator.emit.render import render_package
from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.model import Method, Module, ObjectType
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA


def _with_methods(*methods: Method) -> Module:
    types = tuple(ObjectType(name, f"#/$defs/{name}", None, ()) for name in sorted({m.params for m in methods} | {"R"}))
    return Module("pkg", "schema.json", "0" * 64, types, tuple(t.name for t in types), methods=methods)


def test_an_interface_lists_its_sides_methods_by_python_name_with_the_params_doc():
    module = _with_methods(
        Method("session/prompt", "SESSION_PROMPT", "session_prompt", "agent", "request", "P1", "R"),
        Method("session/cancel", "SESSION_CANCEL", "session_cancel", "agent", "notification", "P2"),
        Method("session/update", "SESSION_UPDATE", "session_update", "client", "notification", "P3"),
    )
    agent = peer(module, Queries(module), "agent")
    assert (agent.interface, agent.connection) == ("Agent", "AgentSideConnection")
    assert [(m.python_name, m.kind, m.doc) for m in agent.methods] == [
        ("session_cancel", "notification", "session/cancel"),
        ("session_prompt", "request", "session/prompt"),
    ]


def test_two_methods_of_one_side_named_alike_are_an_error():
    module = _with_methods(
        Method("session/setMode", "SESSION_SET_MODE", "session_set_mode", "agent", "request", "P1", "R"),
        Method("session/set_mode", "SESSION_SET_MODE", "session_set_mode", "agent", "notification", "P2"),
    )
    with pytest.raises(
        GenerationError, match="'session/setMode' and 'session/set_mode' of side 'agent' are both named"
    ):
        peer(module, Queries(module), "agent")


def test_a_method_named_like_the_connection_api_is_an_error():
    module = _with_methods(Method("close", "CLOSE", "close", "client", "request", "P1", "R"))
    with pytest.raises(GenerationError, match="#/\\$defs/P1: method 'close' would be named close"):
        peer(module, Queries(module), "client")


def test_every_public_name_of_the_engine_and_the_interfaces_is_kept_from_the_schemas_methods():
    """A method named `send_request` (or any public attribute of `Connection`) would hide the
    engine's own method in the typed connection: the names are reserved."""
    from generator.emit.peers import CONNECTION_ATTRIBUTES
    from generator.runtime._connection import Connection

    public = {name for name in dir(Connection) if not name.startswith("_")}
    assert public <= CONNECTION_ATTRIBUTES
    assert {"on_connect", "ext_method", "ext_notification"} <= CONNECTION_ATTRIBUTES  # the interfaces'
    module = _with_methods(Method("send/request", "SEND_REQUEST", "send_request", "agent", "request", "P1", "R"))
    with pytest.raises(GenerationError, match="would be named send_request, a name the connection API uses"):
        peer(module, Queries(module), "agent")


def _v2(protocol_version: int | None = 2) -> Module:
    return dataclasses.replace(build_ir(V2_SCHEMA, "acp_v2", ROOT), protocol_version=protocol_version)


def _redocumented(module: Module, name: str, doc: str) -> Module:
    types = tuple(dataclasses.replace(t, doc=doc) if t.name == name else t for t in module.types)
    return dataclasses.replace(module, types=types)


def test_each_error_data_type_gets_a_constructor_for_the_code_its_description_names():
    module = _v2()
    context = connection_context(module, Queries(module))
    assert [
        (c.python_name, c.member, [(p.name, p.required) for p in c.params]) for c in context.error_data_constructors
    ] == [
        (
            "unsupported_protocol_version",
            "UNSUPPORTED_PROTOCOL_VERSION",
            [("requested", True), ("supported", True), ("meta", False)],
        ),
        ("session_not_found", "RESOURCE_NOT_FOUND", [("session_id", True), ("meta", False)]),
    ]
    # the typed constructor replaces the code's untyped one of the same name; the others stay
    assert "unsupported_protocol_version" not in [c.python_name for c in context.error_constructors]
    assert "resource_not_found" in [c.python_name for c in context.error_constructors]
    assert context.version_check is not None and context.version_check.version == 2
    # the agent's answer is checked too: the result type and its version property
    assert (context.version_check.result, context.version_check.result_field) == (
        "InitializeResponse",
        "protocol_version",
    )


def test_an_error_data_type_whose_description_names_no_code_fails_generation():
    module = _redocumented(_v2(), "SessionNotFoundErrorData", "Data for a missing session.")
    with pytest.raises(
        GenerationError,
        match=r"SessionNotFoundErrorData.*expected its description to name its error code.*found no code",
    ):
        connection_context(module, Queries(module))
    module = _redocumented(_v2(), "SessionNotFoundErrorData", "Data for the `-32999` error.")
    with pytest.raises(GenerationError, match=r"found `-32999`, not a code of the error-code enum"):
        connection_context(module, Queries(module))


def test_a_package_without_a_protocol_version_has_no_version_check():
    module = _v2(None)
    assert connection_context(module, Queries(module)).version_check is None


def test_the_entry_points_are_the_static_transports_modules_names_and_connection_py_has_the_rest():
    module = _v2()
    transports = transport_names(module)
    assert {"run_agent", "connect_http", "http_app", "connect_pair"} <= set(transports)
    assert not set(transports) & set(connection_names(module))
    assert set(transports) | set(connection_names(module)) == set(naming.CONNECTION_NAMES)


HTTP_NAMES = {"connect_http", "http_app", "open_http"}
WEBSOCKET_NAMES = {"connect_websocket", "open_websocket", "serve_websocket"}


def test_a_package_without_extras_lacks_their_names_and_knows_which_extra_brings_each():
    module = dataclasses.replace(_v2(), extras=())
    carried = set(transport_names(module)) | set(connection_names(module))
    assert left_out_names(module) == {
        **dict.fromkeys(HTTP_NAMES, "http"),
        **dict.fromkeys(WEBSOCKET_NAMES, "websocket"),
        "AffinityCookies": "http or websocket",
        "opentelemetry_observer": "otel",
    }
    assert not carried & set(left_out_names(module))
    assert carried | set(left_out_names(module)) == set(naming.CONNECTION_NAMES)
    assert {"run_agent", "connect_pair", "connect_negotiated"} <= set(transport_names(module))


def test_either_client_transport_keeps_the_affinity_cookies():
    module = dataclasses.replace(_v2(), extras=("websocket",))
    assert set(left_out_names(module)) == HTTP_NAMES | {"opentelemetry_observer"}
    assert "AffinityCookies" in connection_names(module) and set(transport_names(module)) >= WEBSOCKET_NAMES
    assert left_out_names(_v2()) == {}


@pytest.mark.parametrize("transports", sorted(TRANSPORT_MODULES))
def test_a_name_the_transports_take_from_connection_py_that_it_lacks_fails_generation_naming_it(
    transports, monkeypatch
):
    source = static.source

    def renamed(name: str) -> str:
        text = source(name)
        return (
            text.replace("from .connection import Agent,", "from .connection import Agent, AgentServer,")
            if name == transports
            else text
        )

    monkeypatch.setattr(static, "source", renamed)
    with pytest.raises(GenerationError, match=rf"{transports} imports \['AgentServer'\] from .connection"):
        render_package(_v2(), {"generator": "test", "black": "none"})
