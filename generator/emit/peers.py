"""What connection.py needs beyond the package context: the two peers, their interfaces and
connections, the methods each serves, and the `RequestError` constructors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator import static
from generator.emit.contexts import PEER_SIDES, SHARED_SIDE, import_sort_key, rpc_code_enum, sort_key
from generator.emit.exprs import children
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.model import EnumType, Method, Module, ObjectType, Ref, TypeExpr, UnionType

INITIALIZE_METHOD = "initialize"  # served first: earlier requests are refused
CANCEL_METHOD = "$/cancel_request"  # handled by the connection: cancels a request being served
TURN_METHOD = "session/prompt"  # the request that starts a turn
TURN_CANCEL = "session/cancel"  # the notification that cancels a session's turn
TURN_END = "stopReason"  # in the answer to TURN_METHOD: the answer ends the turn
# What the interfaces and connections define themselves: no method may take these names.
CONNECTION_ATTRIBUTES = frozenset(
    {
        "on_connect",
        "ext_method",
        "ext_notification",
        "close",
        "wait_closed",
        "session",
        "send_request",
        "send_notification",
        "start_task",
        "add_observer",
        "remove_observer",
        "principal",
    }
)
# The error-code enum members the interfaces answer with (the engine in _connection.py
# answers the JSON-RPC errors by their numbers).
USED_ERROR_CODES = frozenset({"METHOD_NOT_FOUND"})
# What RequestError defines itself: no error-code constructor may take these names.
REQUEST_ERROR_ATTRIBUTES = frozenset(
    {"code", "message", "data", "error", "response", "from_error", "from_decode_error"}
)
UNSUPPORTED_PROTOCOL_VERSION = -32022  # the code the agent's connection answers an old `initialize` with
# How an error-data type's description names the code it is the data of:
# "Data for the `-32002` (Resource not found) error ...".
ERROR_DATA_CODE = re.compile(r"Data for the `(-?\d+)`")


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


@dataclass(frozen=True)
class ErrorDataParam:
    """A parameter of an error-data constructor: one property of the data type."""

    name: str
    annotation: str
    required: bool  # positional; the others are keyword-only and default to UNDEFINED


@dataclass(frozen=True)
class ErrorDataConstructor:
    """A `RequestError` class method for one error-data type of the schema (a variant of the
    error object's `data`): its code, and the data built from the properties it takes."""

    python_name: str
    member: str  # the error-code enum member of the code the data type is for
    data_type: str
    params: tuple[ErrorDataParam, ...]
    message: str
    doc: str
    names: tuple[str, ...]  # the models names its annotations use


@dataclass(frozen=True)
class VersionCheck:
    """How the agent's connection answers an `initialize` asking for a protocol version below
    the package's before the handler: the params type, its version property, the constructor;
    and how it checks the handler's answer: the result type and its version property."""

    params: str
    field: str  # the Python name of `protocolVersion`
    version: int
    constructor: str  # the -32022 error-data constructor, taking (requested, supported)
    result: str
    result_field: str  # the Python name of the result's `protocolVersion`


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


def _error_data_types(module: Module, queries: Queries) -> list[ObjectType]:
    """The object types among the variants of the error object's `data` (all of them, the
    error-data types the schema defines; none when `data` is any value)."""
    error = queries.types.get(module.rpc_error or "")
    if not isinstance(error, ObjectType):
        return []
    data = next((queries.resolve(item.type) for item in error.fields if item.wire_name == "data"), None)
    union = queries.types.get(data.name) if isinstance(data, Ref) else None
    variants = [queries.resolve(v.type) for v in union.variants] if isinstance(union, UnionType) else [data]
    return [
        named
        for variant in variants
        if isinstance(variant, Ref) and isinstance(named := queries.types[variant.name], ObjectType)
    ]


def _ref_names(expr: TypeExpr) -> set[str]:
    """The named types `expr` mentions."""
    names = {expr.name} if isinstance(expr, Ref) else set()
    for child in children(expr):
        names |= _ref_names(child)
    return names


def _error_data_constructors(
    module: Module, queries: Queries, codes: list[ErrorConstructor]
) -> list[ErrorDataConstructor]:
    """One constructor per error-data type (`SessionNotFoundErrorData` → `session_not_found`),
    for the code its description names; a data type whose description names no code of the
    error-code enum is an error, so that a schema update cannot lose one silently."""
    by_code = {}
    enum = queries.types.get(rpc_code_enum(module, queries) or "")
    if isinstance(enum, EnumType):
        by_code = {member.value: member.name for member in enum.members}
    messages = {c.member: c.message for c in codes}
    constructors = []
    for data_type in _error_data_types(module, queries):
        found = ERROR_DATA_CODE.search(data_type.doc or "")
        member = by_code.get(int(found.group(1))) if found else None
        if found is None or member is None:
            named = f"`{found.group(1)}`, not a code of the error-code enum" if found else "no code"
            raise GenerationError(
                data_type.pointer,
                f"error data type {data_type.name}: expected its description to name its error code"
                f' ("Data for the `-32002` ..."), found {named}',
            )
        fields = [item for item in data_type.fields if not item.flatten]
        clashes = sorted({item.name for item in fields} & {"cls", "message"})
        if clashes:
            message = f"error data type {data_type.name}: properties named {clashes} clash with its constructor"
            raise GenerationError(data_type.pointer, message)
        params = tuple(
            ErrorDataParam(item.name, queries.field(item).init_annotation, item.required)
            for item in sorted(fields, key=lambda item: not item.required)
        )
        names = {data_type.name}.union(*(_ref_names(item.type) for item in fields))
        name = naming.error_data_constructor_name(data_type.name)
        described = (data_type.doc or "").split("\n\n")[0]
        doc = f"`{member}` ({found.group(1)}), its data a `{data_type.name}` of the properties given."
        doc = f"{doc}\n\n{described}" if described else doc
        constructors.append(
            ErrorDataConstructor(name, member, data_type.name, params, messages[member], doc, tuple(sorted(names)))
        )
    return constructors


def _version_check(
    module: Module, queries: Queries, data_constructors: list[ErrorDataConstructor]
) -> VersionCheck | None:
    """The check of `initialize`'s `protocolVersion`, when the package speaks a version and
    its schema has a -32022 error-data type (v1 has neither the code nor the data: a v1 agent
    answers with the version it speaks and the client decides)."""
    enum = queries.types.get(rpc_code_enum(module, queries) or "")
    members = {member.name: member.value for member in enum.members} if isinstance(enum, EnumType) else {}
    constructor = next((c for c in data_constructors if members.get(c.member) == UNSUPPORTED_PROTOCOL_VERSION), None)
    initialize = next((m for m in module.methods if m.name == INITIALIZE_METHOD), None)
    if constructor is None or initialize is None or module.protocol_version is None:
        return None
    params = queries.types[initialize.params]
    field = (
        next((f.name for f in params.fields if f.wire_name == "protocolVersion"), None)
        if isinstance(params, ObjectType)
        else None
    )
    taken = [p.name for p in constructor.params if p.required]
    if field is None or taken != ["requested", "supported"]:
        found = (
            f"properties {taken} of {constructor.data_type}" if field else f"no protocolVersion in {initialize.params}"
        )
        raise GenerationError(
            params.pointer,
            f"the -32022 answer to initialize needs initialize params with a protocolVersion and error"
            f" data with the required properties ['requested', 'supported'], found {found}",
        )
    result = queries.types[initialize.result] if initialize.result else None
    result_field = (
        next((f.name for f in result.fields if f.wire_name == "protocolVersion" and f.required), None)
        if isinstance(result, ObjectType)
        else None
    )
    if initialize.result is None or result_field is None:
        raise GenerationError(
            params.pointer if result is None else result.pointer,
            f"the check of the agent's answer to initialize needs a result with a required protocolVersion,"
            f" found {'no result' if result is None else f'none in {initialize.result}'}",
        )
    return VersionCheck(
        initialize.params, field, module.protocol_version, constructor.python_name, initialize.result, result_field
    )


# The static module of the entry points (`run_agent`, `connect_http`...), copied in as transports.py.
TRANSPORTS_MODULE = "transports.py"


def has_connection(module: Module) -> bool:
    """Whether the schema has a connection: JSON-RPC envelopes, `$/cancel_request`, and agent
    and client methods."""
    sides = {method.side for method in module.methods}
    return module.has_rpc and CANCEL_METHOD in {method.name for method in module.methods} and set(PEER_SIDES) <= sides


def transport_names(module: Module) -> tuple[str, ...]:
    """The public names of transports.py (its `__all__`), or () when the schema has no connection."""
    if not has_connection(module):
        return ()
    return tuple(sorted(static.exported_names(static.source(TRANSPORTS_MODULE)), key=sort_key))


def connection_names(module: Module) -> tuple[str, ...]:
    """The public names of connection.py, or () when the schema has no connection: the
    package's connection names less those transports.py defines."""
    if not has_connection(module):
        return ()
    transports = set(transport_names(module))
    return tuple(sorted((name for name in naming.CONNECTION_NAMES if name not in transports), key=sort_key))


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
    error_constructors: list[ErrorConstructor]  # those no error-data constructor replaces
    error_data_constructors: list[ErrorDataConstructor]
    errors: dict[str, str]  # error-code member → RequestError constructor
    code_enum: str
    rpc_error: str | None
    request_id: str | None
    connection_imports: list[str]
    runtime_imports: list[str]  # what connection.py imports from _runtime
    version_check: VersionCheck | None
    turn_cancel: str | None  # the constant of TURN_CANCEL when a pending prompt runs its turn


def _turn_cancel(wires: dict[str, Method], queries: Queries) -> str | None:
    """The constant of `session/cancel` when a pending `session/prompt` is running its turn: its
    answer ends the turn (it carries `stopReason`, v1). None when the answer comes once the prompt
    is inserted (v2): a pending prompt is held, its turn not started, and `session/cancel` would
    cancel the turn running before it; withdrawing the request is all its cancellation needs."""
    prompt, cancel = wires.get(TURN_METHOD), wires.get(TURN_CANCEL)
    if prompt is None or cancel is None or prompt.result is None:
        return None
    answer = queries.types.get(prompt.result)
    if not isinstance(answer, ObjectType) or TURN_END not in {item.wire_name for item in answer.fields}:
        return None
    return cancel.constant


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
    data_constructors = _error_data_constructors(module, queries, constructors)
    for data_constructor in data_constructors:
        if data_constructor.python_name in REQUEST_ERROR_ATTRIBUTES:
            message = f"error data type {data_constructor.data_type} collides with RequestError.{data_constructor.python_name}"
            raise GenerationError(queries.types[data_constructor.data_type].pointer, message)
    # A code whose constructor takes the same name as a data type's (`unsupported_protocol_version`)
    # has one data shape: the typed constructor replaces the untyped one.
    replaced = {c.python_name for c in data_constructors}
    agent, client = (peer(module, queries, side) for side in PEER_SIDES)
    shared = [m for m in module.methods if m.side == SHARED_SIDE]
    names = {module.rpc_error, module.request_id, code_enum} | {
        m.params for peer in (agent, client) for m in peer.methods
    }
    names |= {m.result for peer in (agent, client) for m in peer.methods if m.result}
    names |= {name for c in data_constructors for name in c.names}
    return ConnectionContext(
        peers=[(agent, client), (client, agent)],
        shared_side=SHARED_SIDE,
        shared_methods=sorted(m.name for m in shared),
        cancel_method=CANCEL_METHOD,
        cancel_constant=cancel.constant,
        cancel_params=cancel.params,
        cancel_field=cancel_field,
        initialize=wires[INITIALIZE_METHOD].constant if INITIALIZE_METHOD in wires else None,
        method_constants=sorted({method.constant for method in module.methods}),
        error_constructors=[c for c in constructors if c.python_name not in replaced],
        error_data_constructors=data_constructors,
        errors={c.member: c.python_name for c in constructors if c.python_name not in replaced},
        code_enum=code_enum,
        rpc_error=module.rpc_error,
        request_id=module.request_id,
        connection_imports=sorted({name for name in names if name} | {cancel.params}, key=import_sort_key),
        runtime_imports=sorted({"UNDEFINED"} | _runtime_names(data_constructors), key=import_sort_key),
        version_check=_version_check(module, queries, data_constructors),
        turn_cancel=_turn_cancel(wires, queries),
    )


def _runtime_names(constructors: list[ErrorDataConstructor]) -> set[str]:
    """The `_runtime` names the constructors' annotations use."""
    annotations = [param.annotation for c in constructors for param in c.params]
    return {name for name in ("MaybeUndefined", "Undefined") if any(re.search(rf"\b{name}\b", a) for a in annotations)}
