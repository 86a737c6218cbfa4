"""What connection.py needs beyond the package context: the two peers, their interfaces and
connections, the methods each serves, and the `RequestError` constructors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.emit.contexts import PEER_SIDES, SHARED_SIDE, import_sort_key, rpc_code_enum, sort_key
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.model import EnumType, Method, Module, ObjectType, Ref

INITIALIZE_METHOD = "initialize"  # served first: earlier requests are refused
CANCEL_METHOD = "$/cancel_request"  # handled by the connection: cancels a request being served
# What the interfaces and connections define themselves: no method may take these names.
CONNECTION_ATTRIBUTES = frozenset(
    {
        "on_connect",
        "ext_method",
        "ext_notification",
        "close",
        "wait_closed",
        "send_request",
        "send_notification",
        "start_task",
        "add_observer",
        "remove_observer",
    }
)
# The error-code enum members the interfaces answer with (the engine in _connection.py
# answers the JSON-RPC errors by their numbers).
USED_ERROR_CODES = frozenset({"METHOD_NOT_FOUND"})
# What RequestError defines itself: no error-code constructor may take these names.
REQUEST_ERROR_ATTRIBUTES = frozenset(
    {"code", "message", "data", "error", "response", "from_error", "from_decode_error"}
)


@dataclass(frozen=True)
class PeerMethod:
    """A method of an interface (served) or a connection (sent to the peer)."""

    wire: str
    constant: str
    python_name: str
    kind: str  # "request" | "notification"
    params: str
    result: str | None
    doc: str  # the wire method, then the params type's description


@dataclass(frozen=True)
class Peer:
    """One side of a connection: its interface class, its connection class, the methods it serves."""

    side: str
    interface: str  # Agent
    connection: str  # AgentSideConnection: serves an Agent, calls the other side
    methods: tuple[PeerMethod, ...]


@dataclass(frozen=True)
class ErrorConstructor:
    """A `RequestError` class method for one member of the error-code enum."""

    python_name: str
    member: str
    message: str
    doc: str


def _method_doc(method: Method, queries: Queries) -> str:
    """`session/prompt: <the params type's description>`."""
    doc = queries.types[method.params].doc
    return f"{method.name}: {doc}" if doc else method.name


def peer(module: Module, queries: Queries, side: str) -> Peer:
    """The interface of `side`; two of its methods with one Python name are an error."""
    methods = [m for m in module.methods if m.side == side]
    seen: dict[str, Method] = {}
    for method in methods:
        pointer, name = queries.types[method.params].pointer, method.python_name
        if name in CONNECTION_ATTRIBUTES:
            raise GenerationError(
                pointer, f"method {method.name!r} would be named {name}, a name the connection API uses"
            )
        other = seen.setdefault(name, method)
        if other is not method:
            raise GenerationError(
                pointer, f"methods {other.name!r} and {method.name!r} of side {side!r} are both named {name}"
            )
    return Peer(
        side=side,
        interface=naming.class_name(side),
        connection=naming.class_name(side, "side", "connection"),
        methods=tuple(
            PeerMethod(m.name, m.constant, m.python_name, m.kind, m.params, m.result, _method_doc(m, queries))
            for m in sorted(methods, key=lambda method: method.python_name)
        ),
    )


def _error_constructors(module: Module, queries: Queries) -> list[ErrorConstructor]:
    """One constructor per member of the error-code enum; the message is the member's
    bold title (`**Invalid params**: ...`) or its name in words."""
    enum = queries.types.get(rpc_code_enum(module, queries) or "")
    if not isinstance(enum, EnumType):
        return []
    constructors = []
    for member in enum.members:
        title = re.match(r"\*\*(.+?)\*\*:?\s*", member.doc or "")
        message = title.group(1) if title else member.name.replace("_", " ").capitalize()
        doc = (member.doc or "")[title.end() :] if title else member.doc or message
        constructors.append(ErrorConstructor(naming.error_constructor_name(member.name), member.name, message, doc))
    return constructors


def connection_names(module: Module) -> tuple[str, ...]:
    """The public names of connection.py, or () when the schema has no connection
    (no JSON-RPC envelopes, no `$/cancel_request`, or no agent or client methods)."""
    sides = {method.side for method in module.methods}
    if (
        not module.has_rpc
        or CANCEL_METHOD not in {method.name for method in module.methods}
        or not set(PEER_SIDES) <= sides
    ):
        return ()
    return tuple(sorted(naming.CONNECTION_NAMES, key=sort_key))


@dataclass(frozen=True)
class ConnectionContext:
    """What connection.py needs beyond the package context."""

    peers: list[tuple[Peer, Peer]]  # (the side served, the other side), for each side
    shared_side: str
    shared_methods: list[str]
    cancel_method: str
    cancel_constant: str
    cancel_params: str
    cancel_field: str  # the property of the cancel params that holds the request id
    initialize: str | None  # the constant of `initialize`, served first
    method_constants: list[str]  # every method of the schema, which `send_request` refuses
    error_constructors: list[ErrorConstructor]
    errors: dict[str, str]  # error-code member → RequestError constructor
    code_enum: str
    rpc_error: str | None
    request_id: str | None
    connection_imports: list[str]


def connection_context(module: Module, queries: Queries) -> ConnectionContext:
    """What connection.py.jinja needs."""
    wires = {method.name: method for method in module.methods}
    cancel = wires[CANCEL_METHOD]
    cancel_type = queries.types[cancel.params]
    assert isinstance(cancel_type, ObjectType)
    cancel_field = next((item.name for item in cancel_type.fields if item.type == Ref(module.request_id or "")), None)
    if cancel_field is None:
        raise GenerationError(
            cancel_type.pointer, f"{CANCEL_METHOD} params have no property of type {module.request_id}"
        )
    code_enum = rpc_code_enum(module, queries)
    constructors = _error_constructors(module, queries)
    error_pointer = queries.types[module.rpc_error or ""].pointer
    if code_enum is None or not {c.member for c in constructors} >= USED_ERROR_CODES:
        raise GenerationError(
            error_pointer, f"the error code needs an enum with the members {sorted(USED_ERROR_CODES)}"
        )
    for constructor in constructors:
        if constructor.python_name in REQUEST_ERROR_ATTRIBUTES:
            message = f"member {constructor.member} collides with RequestError.{constructor.python_name}"
            raise GenerationError(queries.types[code_enum].pointer, message)
    agent, client = (peer(module, queries, side) for side in PEER_SIDES)
    shared = [m for m in module.methods if m.side == SHARED_SIDE]
    names = {module.rpc_error, module.request_id, code_enum} | {
        m.params for peer in (agent, client) for m in peer.methods
    }
    names |= {m.result for peer in (agent, client) for m in peer.methods if m.result}
    return ConnectionContext(
        peers=[(agent, client), (client, agent)],
        shared_side=SHARED_SIDE,
        shared_methods=sorted(m.name for m in shared),
        cancel_method=CANCEL_METHOD,
        cancel_constant=cancel.constant,
        cancel_params=cancel.params,
        cancel_field=cancel_field,
        initialize=wires[INITIALIZE_METHOD].constant if INITIALIZE_METHOD in wires else None,
        method_constants=sorted(method.constant for method in module.methods),
        error_constructors=constructors,
        errors={c.member: c.python_name for c in constructors},
        code_enum=code_enum,
        rpc_error=module.rpc_error,
        request_id=module.request_id,
        connection_imports=sorted({name for name in names if name} | {cancel.params}, key=import_sort_key),
    )
