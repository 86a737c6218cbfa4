"""JSON-RPC: each type's route (`x-method`, `x-side`), and the methods the schema's
envelopes make of them (which type is a method's request, response or notification)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.errors import UNROUTED_METHOD, GenerationError, SchemaWarning
from generator.ir import naming
from generator.ir.model import Method, NamedType, Route
from generator.schema.load import Node, Schema, unescape

DEFS_PREFIX = "#/$defs/"
# JSON-RPC envelopes, by shape: (payload property, the id it needs or None for none, role).
ENVELOPE_ROLES = (("params", "id", "request"), ("params", None, "notification"), ("result", "id", "response"))


def route(node: Node) -> Route | None:
    """The JSON-RPC method and side a `$defs` type declares, if any."""
    method, side = node.value("x-method"), node.value("x-side")
    if method is None and side is None:
        return None
    if not isinstance(method, str) or not isinstance(side, str):
        raise GenerationError(node.pointer, "x-method and x-side must both be strings")
    return Route(method=method, side=side)


def methods(
    schema: Schema, types: dict[str, NamedType], python_names: dict[str, str]
) -> tuple[tuple[Method, ...], list[SchemaWarning]]:
    """The JSON-RPC methods, and a warning for each `x-method` type no envelope carries."""
    roles: dict[str, str] = {}
    for node in (schema.root, *schema.definitions.values()):
        for role, name in envelope_members(node):
            roles.setdefault(python_names.get(name, name), role)
    by_route: dict[tuple[str, str], dict[str, str]] = {}
    unrouted = []
    for named in types.values():
        if named.route is None:
            continue
        if named.name not in roles:
            text = f"{named.name} ({named.pointer}): has x-method but no JSON-RPC envelope carries it"
            unrouted.append(SchemaWarning(UNROUTED_METHOD, named.name, text))
            continue
        by_route.setdefault((named.route.side, named.route.method), {})[roles[named.name]] = named.name
    found = []
    names = sorted({method for _, method in by_route})
    constants = dict(zip(names, naming.member_names(names), strict=True))
    for (side, method), members in by_route.items():
        constant, python_name = constants[method], naming.method_name(method)
        if "request" in members:
            if "response" not in members:
                raise GenerationError(types[members["request"]].pointer, f"request {method!r} has no response type")
            found.append(
                Method(method, constant, python_name, side, "request", members["request"], members["response"])
            )
        if "notification" in members:
            found.append(Method(method, constant, python_name, side, "notification", members["notification"]))
    return tuple(found), unrouted


def envelope_members(node: Node) -> Iterator[tuple[str, str]]:
    """(role, `$defs` name) for every type a JSON-RPC envelope in `node` carries."""
    properties = dict(node.properties())
    for payload, identity, role in ENVELOPE_ROLES:
        has_identity = identity in properties if identity else "id" not in properties
        if payload in properties and has_identity and ("method" in properties) == (payload == "params"):
            yield from ((role, name) for name in refs(properties[payload]))
            break
    for keyword in ("anyOf", "oneOf", "allOf"):
        for child in node.children(keyword):
            if not child.ref:
                yield from envelope_members(child)


def refs(node: Node) -> Iterator[str]:
    """The `$defs` names a payload schema may hold, through anyOf/oneOf/allOf."""
    if node.ref:
        yield unescape(node.ref[len(DEFS_PREFIX) :])
    for keyword in ("anyOf", "oneOf", "allOf"):
        for child in node.children(keyword):
            yield from refs(child)


def envelope_type(schema: Schema, key: str, envelope: set[str]) -> str | None:
    """The `$defs` type of property `key` of the first envelope with exactly the properties `envelope`."""
    for node in schema.definitions.values():
        for variant in node.children("anyOf") or [node]:
            properties = dict(variant.properties())
            if set(properties) == envelope:
                names = list(refs(properties[key]))
                return names[0] if len(names) == 1 else None
    return None


def accepts_batches(schema: Schema) -> bool:
    """Whether the document's root schema admits JSON-RPC batches (an array)."""
    return any("array" in node.types for node in (schema.root, *schema.root.children("anyOf")))
