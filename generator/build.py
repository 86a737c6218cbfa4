"""The one place that interprets JSON Schema: schema nodes → IR."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from generator import keywords, naming
from generator.config import SchemaOptions, UpsertRule
from generator.errors import GenerationError
from generator.ir import (
    Alias,
    AnyValue,
    Checked,
    Checks,
    EnumMember,
    EnumType,
    Field,
    JsonObject,
    ListOf,
    MapOf,
    Method,
    Module,
    NamedType,
    Nullable,
    ObjectType,
    Primitive,
    Ref,
    Route,
    Tag,
    TupleOf,
    TypeExpr,
    UnionType,
    Upsert,
    Variant,
)
from generator.load import Node, Schema, escape, unescape

# Bounds implied by integer formats (the schema's serde/schemars vocabulary).
INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "int": (-(2**63), 2**63 - 1),
}
PRIMITIVE_KINDS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "none"}
DEFS_PREFIX = "#/$defs/"
CONFIG = "pyproject.toml [tool.acp-codegen]"
# A type description that speaks of these is an upsert, or says why not (`not-upserts`).
UPSERT_WORDS = re.compile(r"patch semantics|\bupsert", re.IGNORECASE)
# JSON-RPC envelopes, by shape: (payload property, the id it needs or None for none, role).
ENVELOPE_ROLES = (("params", "id", "request"), ("params", None, "notification"), ("result", "id", "response"))


def build_module(schema: Schema, package: str, schema_path: str, options: SchemaOptions | None = None) -> Module:
    options = options or SchemaOptions()
    builder = _Builder(schema)
    types = {named.name: named for named in builder.build()}
    python = builder.python_names  # `$defs` name → Python name; the config speaks `$defs` names
    merge_owners: dict[str, str] = {}  # merge function → `$defs` name
    for name, rule in options.upserts.items():
        named = _with_upsert(types.get(python.get(name, name)), name, rule)
        function = naming.merge_function_name(named.name)
        if merge_owners.setdefault(function, name) != name:
            raise GenerationError(
                f"{CONFIG} upserts.{name}", f"its merge function {function} is also that of {merge_owners[function]}"
            )
        types[named.name] = named
    methods, unrouted = _methods(schema, types, python)
    for name in options.path_types:
        if not isinstance(types.get(python.get(name, name)), Alias):
            raise GenerationError(f"{CONFIG}: path-types", f"{name} is not an alias in the schema")
    return Module(
        package=package,
        schema_path=schema_path,
        schema_sha256=schema.sha256,
        types=tuple(types.values()),
        public_names=tuple(python.items()),
        path_types=tuple(python.get(name, name) for name in options.path_types),
        warnings=tuple(_upsert_drift(types, schema, options, python)) + tuple(unrouted),
        methods=methods,
        request_id=_python_name(python, _envelope_type(schema, "id", {"id", "method", "params"})),
        rpc_error=_python_name(python, _envelope_type(schema, "error", {"id", "error"})),
        batches=any("array" in node.types for node in (schema.root, *schema.root.children("anyOf"))),
    )


def _with_upsert(named: NamedType | None, name: str, rule: UpsertRule) -> ObjectType:
    """`named` with the merge rules of its `[tool.acp-codegen.upserts]` row."""
    where = f"{CONFIG} upserts.{name}"
    if not isinstance(named, ObjectType) or named.base is not None:
        raise GenerationError(where, f"{name} is not an object type of the schema")
    by_wire = {item.wire_name: item for item in named.fields if not item.flatten}

    def attributes(key: str, wire_names: Iterable[str]) -> tuple[str, ...]:
        wire_names = list(wire_names)
        for wire_name in wire_names:
            if wire_name not in by_wire:
                raise GenerationError(f"{where}.{key}", f"{name} has no property {wire_name!r}")
        return tuple(by_wire[wire_name].name for wire_name in wire_names)

    identity = attributes("identity", rule.identity)
    for wire_name in rule.identity:
        if not by_wire[wire_name].required:
            raise GenerationError(f"{where}.identity", f"identity property {wire_name!r} is not required")
    snapshot = attributes("snapshot", rule.snapshot)
    for wire_name, value in rule.start.items():
        if not (value == [] or value == {} or isinstance(value, (str, int, float, bool))):
            raise GenerationError(f"{where}.start.{wire_name}", "a start value must be a scalar, [] or {}")
    for wire_name in rule.null_resets:
        if wire_name not in rule.start:
            raise GenerationError(f"{where}.null-resets", f"{wire_name!r} resets to its start value, but has none")
    upsert = Upsert(
        function=naming.merge_function_name(named.name),
        identity=identity,
        start=tuple(zip(attributes("start", rule.start), rule.start.values(), strict=True)),
        null_resets=attributes("null-resets", rule.null_resets),
        empty_clears=attributes("empty-clears", rule.empty_clears),
        snapshot=snapshot,
        by_key=tuple(
            item.name for item in by_wire.values() if isinstance(item.type, JsonObject) and item.name not in snapshot
        ),
    )
    return replace(named, upsert=upsert)


def _envelope_members(node: Node) -> Iterator[tuple[str, str]]:
    """(role, `$defs` name) for every type a JSON-RPC envelope in `node` carries."""
    properties = dict(node.properties())
    for payload, identity, role in ENVELOPE_ROLES:
        has_identity = identity in properties if identity else "id" not in properties
        if payload in properties and has_identity and ("method" in properties) == (payload == "params"):
            yield from ((role, name) for name in _refs(properties[payload]))
            break
    for keyword in ("anyOf", "oneOf", "allOf"):
        for child in node.children(keyword):
            if not child.ref:
                yield from _envelope_members(child)


def _refs(node: Node) -> Iterator[str]:
    """The `$defs` names a payload schema may hold, through anyOf/oneOf/allOf."""
    if node.ref:
        yield unescape(node.ref[len(DEFS_PREFIX) :])
    for keyword in ("anyOf", "oneOf", "allOf"):
        for child in node.children(keyword):
            yield from _refs(child)


def _envelope_type(schema: Schema, key: str, envelope: set[str]) -> str | None:
    """The `$defs` type of property `key` of the first envelope with exactly the properties `envelope`."""
    for node in schema.definitions.values():
        for variant in node.children("anyOf") or [node]:
            properties = dict(variant.properties())
            if set(properties) == envelope:
                names = list(_refs(properties[key]))
                return names[0] if len(names) == 1 else None
    return None


def _python_name(python_names: dict[str, str], name: str | None) -> str | None:
    return None if name is None else python_names.get(name, name)


def _methods(
    schema: Schema, types: dict[str, NamedType], python_names: dict[str, str]
) -> tuple[tuple[Method, ...], list[str]]:
    """The JSON-RPC methods, and a warning for each `x-method` type no envelope carries."""
    roles: dict[str, str] = {}
    for node in (schema.root, *schema.definitions.values()):
        for role, name in _envelope_members(node):
            roles.setdefault(python_names.get(name, name), role)
    by_route: dict[tuple[str, str], dict[str, str]] = {}
    unrouted = []
    for named in types.values():
        if named.route is None:
            continue
        if named.name not in roles:
            unrouted.append(f"{named.name} ({named.pointer}): has x-method but no JSON-RPC envelope carries it")
            continue
        by_route.setdefault((named.route.side, named.route.method), {})[roles[named.name]] = named.name
    methods = []
    names = sorted({method for _, method in by_route})
    constants = dict(zip(names, naming.member_names(names), strict=True))
    for (side, method), members in by_route.items():
        constant, python_name = constants[method], naming.method_name(method)
        if "request" in members:
            if "response" not in members:
                raise GenerationError(types[members["request"]].pointer, f"request {method!r} has no response type")
            methods.append(
                Method(method, constant, python_name, side, "request", members["request"], members["response"])
            )
        if "notification" in members:
            methods.append(Method(method, constant, python_name, side, "notification", members["notification"]))
    return tuple(methods), unrouted


def _upsert_drift(
    types: dict[str, NamedType], schema: Schema, options: SchemaOptions, python_names: dict[str, str]
) -> list[str]:
    """`$defs` objects whose description speaks of upserts but have no merge rules."""
    return [
        f"{name} ({schema.definitions[name].pointer}): its description mentions upserts or patch semantics, "
        f"but it is not in [tool.acp-codegen.upserts] (or not-upserts)"
        for name, python in python_names.items()
        if isinstance(types[python], ObjectType)
        and UPSERT_WORDS.search(types[python].doc or "")
        and name not in options.upserts
        and name not in options.not_upserts
    ]


class _Builder:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.definitions = schema.definitions
        self.definition_at = {node.pointer: name for name, node in schema.definitions.items()}
        self.types: dict[str, NamedType] = {}
        self.claimed: dict[str, str] = {}  # Python name → JSON pointer of its owner
        self.building: set[str] = set()
        self.python_names = {name: naming.type_name(name) for name in self.definitions}
        self.referenced: dict[str, str] = {}  # pointer of a `$ref` target outside `$defs` → its type
        self.pending: list[tuple[str, Node]] = []
        for name, node in self.definitions.items():
            self.claim(self.python_names[name], node.pointer)

    # --- bookkeeping --------------------------------------------------------

    def claim(self, name: str, pointer: str) -> None:
        if name in self.claimed and self.claimed[name] != pointer:
            raise GenerationError(
                pointer, f"the Python name {name} is also produced by {self.claimed[name]}; rename one of them"
            )
        self.claimed[name] = pointer

    def is_free(self, name: str) -> bool:
        """Whether a made-up type may take `name` (builder classes included)."""
        owner = name.removesuffix("Builder")
        return not (
            name in self.claimed
            or name in naming.RESERVED_TYPE_NAMES
            or naming.builder_name(name) in self.claimed
            or (naming.builder_name(owner) == name and owner in self.claimed)
        )

    def invent(self, pointer: str, *candidates: str) -> str:
        """The name of the inline type at `pointer`, made up by the generator: the first
        candidate it already has or that is free, else the first one numbered."""
        for candidate in candidates:
            if self.claimed.get(candidate) == pointer:
                return candidate
        for candidate in itertools.chain(candidates, naming.numbered(candidates[0])):
            if self.is_free(candidate):
                self.claimed[candidate] = pointer
                return candidate
        raise AssertionError("naming.numbered never ends")

    def register(self, named: NamedType) -> Ref:
        self.claim(named.name, named.pointer)
        self.types[named.name] = named
        return Ref(named.name)

    def build(self) -> tuple[NamedType, ...]:
        for name in self.definitions:
            self.definition(name)
        while self.pending:
            name, node = self.pending.pop(0)
            self.define(name, node)
        self.check_alias_cycles()
        self.check_module_names()
        return tuple(self.types.values())

    def definition(self, name: str) -> NamedType:
        python = self.python_names[name]
        if python not in self.types:
            node = self.definitions[name]
            if name in self.building:
                raise GenerationError(node.pointer, f"{name} includes itself through allOf")
            self.building.add(name)
            self.define(python, node, route=self.route(node))
            self.building.discard(name)
        return self.types[python]

    def route(self, node: Node) -> Route | None:
        method, side = node.value("x-method"), node.value("x-side")
        if method is None and side is None:
            return None
        if not isinstance(method, str) or not isinstance(side, str):
            raise GenerationError(node.pointer, "x-method and x-side must both be strings")
        return Route(method=method, side=side)

    def check_alias_cycles(self) -> None:
        for named in self.types.values():
            seen = [named.name]
            target = named.target if isinstance(named, Alias) else None
            while isinstance(target, Ref) and isinstance(self.types[target.name], Alias):
                if target.name in seen:
                    raise GenerationError(named.pointer, f"alias cycle: {' → '.join([*seen, target.name])}")
                seen.append(target.name)
                target = self.types[target.name].target  # type: ignore[union-attr]

    def check_module_names(self) -> None:
        """No two types define the same name in models.py (`Foo`'s builder and a `FooBuilder`...)."""
        owners: dict[str, NamedType] = {}
        for named in self.types.values():
            has_builder = isinstance(named, ObjectType) and named.base is None
            for name in naming.module_names(named.name, has_builder=has_builder):
                other = owners.setdefault(name, named)
                if other is not named:
                    raise GenerationError(
                        named.pointer, f"the Python name {name} is also produced by {other.pointer}; rename one of them"
                    )

    # --- checks -------------------------------------------------------------

    def check_keywords(self, node: Node, *, allow_not: bool = False) -> None:
        if {"anyOf", "oneOf"} <= node.keywords and node.properties():
            raise GenerationError(f"{node.pointer}/oneOf", "anyOf and oneOf beside properties are not supported")
        for keyword in sorted(node.keywords):
            if keyword == "$id" and node.pointer == "#":
                continue
            reason = None if keyword == "not" and allow_not else keywords.refusal(node, keyword)
            if reason is not None:
                raise GenerationError(f"{node.pointer}/{escape(keyword)}", reason)

    def resolve_ref(self, node: Node) -> str:
        """The type a `$ref` names: a `$defs` entry, or any other schema of the document."""
        target = self.schema.resolve(f"{node.pointer}/$ref", node.ref or "")
        if target.pointer in self.definition_at:
            return self.definition_at[target.pointer]
        if target.pointer not in self.referenced:
            tokens = [unescape(token) for token in target.pointer[2:].split("/") if token]
            name = self.invent(target.pointer, naming.class_name("Ref", *tokens))
            self.referenced[target.pointer] = name
            self.pending.append((name, target))
        return self.referenced[target.pointer]

    def ref_name(self, node: Node) -> str:
        """The Python name of the type a `$ref` names."""
        name = self.resolve_ref(node)
        return self.python_names[name] if name in self.definitions else name

    def named(self, node: Node, hint: str) -> str:
        """A named type for a subschema that is only checked (allOf beside a type, not, if...)."""
        expr = self.expr(node, hint)
        if isinstance(expr, Ref):
            return expr.name
        return self.register(Alias(hint, node.pointer, None, expr)).name

    def checks(
        self, node: Node, used: Iterable[str], hint: str, *, also: Iterable[Node] = (), required: Iterable[str] = ()
    ) -> Checks | None:
        """The keywords of `node` its structural type did not take (`used`), as run-time checks."""
        return keywords.checks(node, frozenset(used), hint, self.named, self.target, also=also, required=required)

    def target(self, node: Node) -> Node:
        """The schema a `$ref` names."""
        return self.schema.resolve(f"{node.pointer}/$ref", node.ref or "")

    def checked(
        self, expr: TypeExpr, node: Node, used: Iterable[str], hint: str, also: Iterable[Node] = ()
    ) -> TypeExpr:
        checks = self.checks(node, used, hint, also=also)
        return expr if checks is None else Checked(expr, checks)

    # --- named types --------------------------------------------------------

    def define(self, name: str, node: Node, route: Route | None = None, *, union_with_null: bool = False) -> Ref:
        """Turn `node` into the named type `name`."""
        name = self.invent(node.pointer, name)
        self.check_keywords(node)
        enum = self.enum_members(node)
        if enum is not None:
            members, other, used = enum
            checks = self.checks(node, used, name)
            return self.register(EnumType(name, node.pointer, node.description, members, other, route, checks))
        if self.is_object(node):
            fields, also, required = self.object_fields(name, node)
            return self.register(self.object_type(name, node, fields, route=route, also=also, required=required))
        keyword, variants = self.variants(node)
        if variants and (union_with_null or not [v for v in variants if self.is_null(v)]):
            return self.union(name, node, variants, route, exclusive=keyword == "oneOf", used={keyword})
        target = self.expr(node, name + "Value")
        return self.register(Alias(name, node.pointer, node.description, target, route))

    def object_type(
        self,
        name: str,
        node: Node,
        fields: list[Field],
        *,
        tag: Tag | None = None,
        route: Route | None = None,
        also: Iterable[Node] = (),
        required: Iterable[str] = (),
        allow_not: bool = False,
    ) -> ObjectType:
        flattened = any(item.flatten for item in fields)
        used = {"type", "properties", "required", "allOf", "anyOf", "oneOf"} | ({"not"} if allow_not else set())
        extra = node.child("additionalProperties")
        closed = False
        if extra is not None and isinstance(extra.schema, bool) and not node.value("patternProperties"):
            used.add("additionalProperties")
            closed = extra.schema is False
        if flattened and closed:
            raise GenerationError(node.pointer, "additionalProperties: false beside anyOf/oneOf is not supported")
        unknown = "flatten" if flattened else "reject" if closed else "keep"
        self.check_attribute_names(node, fields, tag)
        checks = self.checks(node, used, name, also=also, required=required)
        return ObjectType(name, node.pointer, node.description, tuple(fields), tag, unknown, route, checks=checks)

    @staticmethod
    def check_attribute_names(node: Node, fields: list[Field], tag: Tag | None) -> None:
        """Two properties (the tag and a flattened union included) must not share an attribute."""
        pointers = {wire_name: child.pointer for wire_name, child in node.properties()}
        seen: dict[str, str] = {}
        named = [(item.name, item.wire_name) for item in fields] + ([(tag.attribute, tag.key)] if tag else [])
        for name, wire_name in named:
            if name in seen:
                first, second = (pointers.get(key, node.pointer) for key in (seen[name], wire_name))
                raise GenerationError(
                    second, f"properties {seen[name]!r} and {wire_name!r} both map to {name} (the first at {first})"
                )
            seen[name] = wire_name

    @staticmethod
    def variants(node: Node) -> tuple[str, list[Node]]:
        """`anyOf` (or else `oneOf`) and its subschemas; a second one is checked beside."""
        for keyword in ("anyOf", "oneOf"):
            if keyword in node.keywords:
                return keyword, node.children(keyword)
        return "", []

    @staticmethod
    def is_object(node: Node) -> bool:
        if "object" not in node.types:
            return False
        if node.properties():
            return True
        has_parts = bool(node.children("allOf")) and bool(node.children("anyOf") or node.children("oneOf"))
        return node.types == ("object",) and (has_parts or len(node.children("allOf")) > 1)

    @staticmethod
    def is_null(node: Node) -> bool:
        return node.types == ("null",) and node.keywords <= keywords.ANNOTATIONS | {"type"}

    def enum_members(self, node: Node) -> tuple[tuple[EnumMember, ...], Primitive | None, set[str]] | None:
        """Constants as an enum; a last variant of the same type without a
        const (`{"type": "string"}`) makes it open. None: not an enum of strings or integers."""
        if node.properties():
            return None
        if "const" in node.keywords:
            if not self.is_const(node):
                return None
            return self.members(node, [node]), None, {"const", "type"}
        values = node.value("enum")
        if "enum" in node.keywords:
            if not isinstance(values, list) or not values or not all(isinstance(value, str) for value in values):
                return None
            if node.types not in ((), ("string",)) or "const" in node.keywords:
                return None
            unique = list(dict.fromkeys(values))
            members = self.named_members(f"{node.pointer}/enum", unique, unique, [None] * len(unique))
            return members, None, {"enum", "type"}
        keyword, variants = self.variants(node)
        enum = self.enum_members_of(node, variants, exclusive=keyword == "oneOf") if variants else None
        return None if enum is None else (*enum, {keyword})

    def enum_members_of(
        self, node: Node, variants: list[Node], *, exclusive: bool = False
    ) -> tuple[tuple[EnumMember, ...], Primitive | None] | None:
        *known, last = variants
        kinds = {v.types for v in variants}
        is_open = (
            bool(known)
            and len(kinds) == 1
            and last.value("const") is None
            and last.types in (("string",), ("integer",))
            and last.keywords <= {"type", "title", "description", "format"}
        )
        constants = known if is_open else variants
        if not constants or not all(self.is_const(v) for v in constants) or len(kinds) != 1:
            return None
        values = [v.value("const") for v in constants]
        if len(set(values)) != len(values) and exclusive:
            return None  # a constant listed twice in a oneOf matches two variants: not an enum
        first: dict[object, Node] = {}
        for constant in constants:
            first.setdefault(constant.value("const"), constant)
        members = self.members(node, list(first.values()))
        other = self.primitive(last, PRIMITIVE_KINDS[last.types[0]])[0] if is_open else None
        return members, other

    @staticmethod
    def is_const(node: Node) -> bool:
        value = node.value("const")
        kind = "string" if isinstance(value, str) else "integer" if type(value) is int else None
        return (
            kind is not None
            and node.types in ((), (kind,))
            and node.keywords <= {"type", "const", "title", "description", "format"}
        )

    def members(self, node: Node, constants: list[Node]) -> tuple[EnumMember, ...]:
        """Members are named by their value; integers by their title (`Parse error` → PARSE_ERROR)."""
        values = [constant.value("const") for constant in constants]
        labels = [
            value if isinstance(value, str) else c.title or str(value)
            for c, value in zip(constants, values, strict=True)
        ]
        return self.named_members(node.pointer, labels, values, [constant.description for constant in constants])

    @staticmethod
    def named_members(
        pointer: str, labels: list[str], values: list[str | int], docs: list[str | None]
    ) -> tuple[EnumMember, ...]:
        """Members named by their labels; two labels that no name tells apart are an error."""
        names = naming.member_names(labels)
        for index, name in enumerate(names):
            if names.index(name) != index:
                first, second = values[names.index(name)], values[index]
                raise GenerationError(pointer, f"enum values {first!r} and {second!r} both map to the member {name}")
        return tuple(EnumMember(name, value, doc) for name, value, doc in zip(names, values, docs, strict=True))

    def object_fields(
        self, owner: str, node: Node, skip: frozenset[str] = frozenset()
    ) -> tuple[list[Field], list[Node], list[str]]:
        """Fields from `properties`, then from each `allOf` part that merges
        exactly, then a flattened `anyOf`/`oneOf`; also the parts that are only
        checked and the required keys no field declares."""
        required = set(node.required)
        fields: list[Field] = []
        keyword, variants = self.variants(node)
        tag_key = self.tag_key(variants) if variants else None
        for wire_name, child in node.properties():
            if wire_name in skip or wire_name == tag_key:  # the flattened union owns its tag
                continue
            fields.append(self.field(owner, wire_name, child, wire_name in required))
        checked_parts = []
        for part in node.children("allOf"):
            merged = self.part_fields(owner, part)
            by_wire = {item.wire_name: item for item in fields}
            if merged is None or any(by_wire.get(item.wire_name, item) != item for item in merged):
                checked_parts.append(part)
                continue
            fields.extend(item for item in merged if item.wire_name not in by_wire and item.wire_name not in skip)
        declared = {item.wire_name for item in fields} | skip | ({tag_key} if tag_key else set())
        undeclared = [key for key in node.required if key not in declared]
        if variants:
            fields.append(self.flattened(owner, node, variants, tag_key, exclusive=keyword == "oneOf"))
        return fields, checked_parts, undeclared

    def part_fields(self, owner: str, part: Node) -> list[Field] | None:
        """The fields an `allOf` part adds, or None when it cannot be merged exactly (then it is checked)."""
        self.check_keywords(part)
        if part.ref:
            if part.keywords - keywords.ANNOTATIONS - {"$ref"} - {k for k in part.keywords if k.startswith("x-")}:
                return None
            target = self.definition(self.resolve_ref(part)) if self.resolve_ref(part) in self.definitions else None
            if isinstance(target, UnionType) and target.checks is None:
                return [self.flatten_field(target.tag_key, Ref(target.name))]
            if not isinstance(target, ObjectType) or target.keep_unknown == "reject" or target.checks or target.tag:
                return None
            return list(target.fields)
        mergeable = {"type", "properties", "required"} | keywords.ANNOTATIONS
        if part.types == ("object",) and part.keywords <= mergeable:
            fields, checked, undeclared = self.object_fields(owner, part)
            return None if checked or undeclared else fields
        return None

    def field(self, owner: str, wire_name: str, node: Node, required: bool) -> Field:
        expr = self.expr(node, naming.class_name(owner, wire_name))
        nullable = isinstance(expr, Nullable)
        if isinstance(expr, Nullable):
            expr = expr.inner
        default_on_error = node.value("x-deserialize-default-on-error") is True
        if default_on_error and required and not isinstance(expr, ListOf):
            raise GenerationError(
                node.pointer, "x-deserialize-default-on-error on a required property needs an array type (default [])"
            )
        return Field(
            name=naming.attribute_name(wire_name),
            wire_name=wire_name,
            type=expr,
            required=required,
            nullable=nullable,
            doc=node.description,
            default_on_error=default_on_error,
            default_on_null=node.value("x-deserialize-default-on-null") is True,
        )

    def flattened(self, owner: str, node: Node, variants: list[Node], tag_key: str | None, *, exclusive: bool) -> Field:
        """The union part of an object that has both `properties` and `anyOf`/`oneOf`."""
        name = naming.class_name(owner, tag_key or "variant")
        pointer = variants[0].pointer.rsplit("/", 1)[0]
        union = self.union(name, node, variants, None, pointer=pointer, exclusive=exclusive, used=None)
        return self.flatten_field(tag_key, union)

    @staticmethod
    def flatten_field(tag_key: str | None, union: Ref) -> Field:
        return Field(
            name=naming.attribute_name(tag_key or "variant"),
            wire_name="",
            type=union,
            required=True,
            nullable=False,
            doc=None,
            flatten=True,
        )

    # --- unions -------------------------------------------------------------

    def const_keys(self, variant: Node) -> list[str]:
        """Required properties a variant fixes to a string (and says nothing else about)."""
        return [
            key
            for key, child in variant.properties()
            if isinstance(child.value("const"), str) and self.is_const(child) and key in variant.required
        ]

    def tag_key(self, variants: list[Node]) -> str | None:
        """The property that tagged variants fix with a `const`, if any."""
        shared: list[str] | None = None
        for variant in variants:
            keys = self.const_keys(variant)
            if keys:
                shared = keys if shared is None else [key for key in shared if key in keys]
        return shared[0] if shared else None

    @staticmethod
    def is_fallback(variant: Node, tag_key: str) -> bool:
        """The open variant: a `not` clause and a required plain string tag."""
        tag = dict(variant.properties()).get(tag_key)
        return (
            "not" in variant.keywords
            and tag_key in variant.required
            and tag is not None
            and tag.value("const") is None
            and tag.types == ("string",)
        )

    def excludes_exactly(self, variant: Node, tag_key: str, tags: set[str]) -> bool:
        """Whether the fallback's `not` rejects exactly the known tags, which tag
        dispatch already does (otherwise the `not` is checked like any other)."""
        negated = variant.child("not")
        if negated is None or negated.keywords - keywords.ANNOTATIONS - {"anyOf"}:
            return False
        excluded = set()
        for part in negated.children("anyOf"):
            meaningful = part.keywords - keywords.ANNOTATIONS
            if meaningful - {"type", "properties", "required"} or part.types not in ((), ("object",)):
                return False
            if [key for key, _ in part.properties()] != [tag_key] or part.required not in ((), (tag_key,)):
                return False
            tag = dict(part.properties())[tag_key]
            if not (self.is_const(tag) and isinstance(tag.value("const"), str)):
                return False
            excluded.add(tag.value("const"))
        return excluded == tags

    def union(
        self,
        name: str,
        node: Node,
        variants: list[Node],
        route: Route | None,
        pointer: str | None = None,
        *,
        exclusive: bool,
        used: set[str] | None,
    ) -> Ref:
        """Tagged variants dispatch on `tag_key`; an open fallback takes unknown tags
        (when its `not` excludes exactly the known ones; otherwise it is untagged);
        the remaining (untagged) variants are tried in schema order. `used`: the
        keywords the union takes from `node` (None: `node` is an object that owns the rest)."""
        pointer = pointer or node.pointer
        name = self.invent(pointer, name)
        tag_key = self.tag_key(variants)
        untagged = [
            variant
            for variant in variants
            if tag_key is None or not (tag_key in self.const_keys(variant) or self.is_fallback(variant, tag_key))
        ]
        hints = naming.variant_names(name, [self.variant_words(variant) for variant in untagged])
        hint_of = {variant.pointer: hint for variant, hint in zip(untagged, hints, strict=True)}
        tags = {dict(v.properties())[tag_key].value("const") for v in variants if tag_key in self.const_keys(v)}
        choices: list[Variant] = []
        fallback_name = None
        seen: dict[str, str] = {}
        for variant in variants:
            if tag_key is not None and tag_key in self.const_keys(variant):
                self.check_keywords(variant)
                value = dict(variant.properties())[tag_key].value("const")
                if value in seen:
                    raise GenerationError(variant.pointer, f"tag {tag_key}={value!r} is also used by {seen[value]}")
                seen[value] = variant.pointer
                target = self.wrapped_target(variant, tag_key)
                variant_name = self.invent(
                    variant.pointer, naming.class_name(name, value), naming.class_name(name, value, "variant")
                )
                tag = Tag(tag_key, naming.attribute_name(tag_key), value)
                if target is None:
                    fields, also, required = self.object_fields(variant_name, variant, skip=frozenset({tag_key}))
                else:
                    fields, also, required = list(self.types[target].fields), [], []  # type: ignore[union-attr]
                obj = self.object_type(variant_name, variant, fields, tag=tag, also=also, required=required)
                obj = replace(obj, doc=variant.description or self.wrapped_doc(variant), base=target)
                choices.append(Variant(self.register(obj), tag=value))
            elif tag_key is not None and self.is_fallback(variant, tag_key):
                if fallback_name is not None:
                    raise GenerationError(variant.pointer, f"a second open fallback variant (first: {fallback_name})")
                self.check_keywords(variant, allow_not=True)
                other_name = self.invent(variant.pointer, naming.class_name(name, variant.title or "other"))
                fields, also, required = self.object_fields(other_name, variant)
                exact = self.excludes_exactly(variant, tag_key, tags)
                other = self.register(
                    self.object_type(other_name, variant, fields, also=also, required=required, allow_not=exact)
                )
                if exact:
                    fallback_name = other_name
                else:  # its `not` is checked, and it is tried like an untagged variant
                    choices.append(Variant(other))
            else:
                tag_schema = dict(variant.properties()).get(tag_key) if tag_key is not None else None
                if tag_schema is not None and tag_schema.types != ("null",):
                    raise GenerationError(variant.pointer, f"variant declares the tag {tag_key!r} without a const")
                choices.append(Variant(self.expr(variant, hint_of[variant.pointer])))
        checks = None if used is None else self.checks(node, used, name)
        return self.register(
            UnionType(name, pointer, node.description, tuple(choices), tag_key, fallback_name, route, exclusive, checks)
        )

    @staticmethod
    def variant_words(variant: Node) -> list[tuple[str, ...] | None]:
        """What an untagged variant may be named after, most telling first: its title,
        its constant, its required keys, its property names, its JSON type."""
        const = variant.value("const")
        keys = tuple(key for key, _ in variant.properties())
        return [
            (variant.title,) if variant.title else None,
            (const,) if isinstance(const, str) else None,
            ("with", *variant.required) if variant.required else None,
            ("with", *keys) if keys else None,
            variant.types or None,
            ("variant",),
        ]

    def wrapped_target(self, variant: Node, tag_key: str | None) -> str | None:
        """The object a tagged variant wraps when it adds nothing but its tag."""
        parts = variant.children("allOf")
        if tag_key is None or len(parts) != 1 or not parts[0].ref:
            return None
        if [key for key, _ in variant.properties()] != [tag_key]:
            return None
        if variant.keywords - {"type", "properties", "required", "allOf"} - keywords.ANNOTATIONS:
            return None
        name = self.resolve_ref(parts[0])
        target = self.definition(name) if name in self.definitions else None
        if not isinstance(target, ObjectType) or tag_key in {item.wire_name for item in target.fields}:
            return None
        if target.keep_unknown == "reject" or target.checks or target.tag:
            return None
        return target.name

    def wrapped_doc(self, variant: Node) -> str | None:
        for part in variant.children("allOf"):
            if part.ref:
                return self.schema.resolve(part.pointer, part.ref).description
        return None

    # --- type expressions ---------------------------------------------------

    def expr(self, node: Node, hint: str, *, allow_not: bool = False) -> TypeExpr:
        """What a property, item or alias holds; `hint` names inline named types."""
        self.check_keywords(node, allow_not=allow_not)
        if node.schema is False:
            return Checked(AnyValue(), Checks(valid=False))
        meaningful = {key for key in node.keywords - keywords.ANNOTATIONS if not key.startswith("x-")} - {
            "$id",
            "$schema",
        }
        if node.schema is True or not meaningful:
            return AnyValue()
        if node.ref:
            return self.checked(Ref(self.ref_name(node)), node, {"$ref"}, hint)
        if self.enum_members(node) is not None or self.is_object(node):
            return self.define(hint, node)
        keyword, variants = self.variants(node)
        if variants:
            rest = [v for v in variants if not self.is_null(v)]
            if len(rest) == len(variants):
                return self.define(hint, node)
            if not rest:
                if keyword == "oneOf" and len(variants) > 1:
                    return self.define(hint, node, union_with_null=True)
                return self.checked(Primitive("none"), node, {keyword}, hint)
            inner = self.expr(rest[0], hint) if len(rest) == 1 else self.define_union_of(hint, node, rest, keyword)
            if keyword == "oneOf" and (len(variants) - len(rest) > 1 or self.accepts_null(inner)):
                return self.define(hint, node, union_with_null=True)
            return self.checked(inner if isinstance(inner, Nullable) else Nullable(inner), node, {keyword}, hint)
        parts = node.children("allOf")
        if parts:
            first = self.expr(parts[0], naming.class_name(hint, "all", "0"))
            return self.checked(first, node, {"allOf"}, hint, also=parts[1:])
        types = node.types
        nullable = "null" in types and len(types) == 2
        types = tuple(t for t in types if t != "null") if nullable else types
        if len(types) != 1:
            return self.checked(AnyValue(), node, set(), hint)
        expr, used = self.single_type(node, types[0], hint)
        return self.checked(Nullable(expr) if nullable else expr, node, used | {"type"}, hint)

    def accepts_null(self, expr: TypeExpr) -> bool:
        """Whether `expr` may decode `null` (conservatively: True when unsure)."""
        if isinstance(expr, Ref):
            named = self.types.get(expr.name)
            if isinstance(named, Alias):
                return self.accepts_null(named.target)
            return not isinstance(named, (ObjectType, EnumType))
        if isinstance(expr, Checked):
            return self.accepts_null(expr.inner)
        if isinstance(expr, Primitive):
            return expr.kind == "none"
        return isinstance(expr, (Nullable, AnyValue))

    def define_union_of(self, name: str, node: Node, variants: list[Node], keyword: str) -> Ref:
        name = self.invent(node.pointer, name)
        enum = self.enum_members_of(node, variants, exclusive=keyword == "oneOf")
        if enum is not None:
            return self.register(EnumType(name, node.pointer, node.description, enum[0], enum[1]))
        return self.union(name, node, variants, None, exclusive=keyword == "oneOf", used=None)

    def single_type(self, node: Node, json_type: str, hint: str) -> tuple[TypeExpr, set[str]]:
        """The structural type of a node with one `type`, and the keywords it enforces."""
        if json_type in PRIMITIVE_KINDS:
            return self.primitive(node, PRIMITIVE_KINDS[json_type])
        if json_type == "array":
            if "prefixItems" in node.keywords:
                return self.array_of_prefix_items(node, hint)
            items = node.child("items")
            min_items = keywords.count(node, "minItems")
            return ListOf(
                AnyValue() if items is None else self.expr(items, hint + "Item"),
                min_items=min_items,
                skip_invalid_items=node.value("x-deserialize-skip-invalid-items") is True,
            ), {"items", "minItems"}
        if json_type == "object":
            values = node.child("additionalProperties")
            if node.value("patternProperties") is not None:
                return JsonObject(), set()
            if values is None or values.is_true:
                return JsonObject(), {"additionalProperties"}
            return MapOf(self.expr(values, hint + "Value")), {"additionalProperties"}
        raise GenerationError(f"{node.pointer}/type", f"unknown type {json_type!r}")

    def array_of_prefix_items(self, node: Node, hint: str) -> tuple[TypeExpr, set[str]]:
        """A tuple when `prefixItems` fixes the length (`minItems` as many, and `items: false`
        or `maxItems` as many); otherwise any list, the keywords left to the checks."""
        prefix = node.children("prefixItems")
        most = keywords.count(node, "maxItems")
        closed = (node.value("items") is False and (most is None or most >= len(prefix))) or most == len(prefix)
        if keywords.count(node, "minItems") != len(prefix) or not closed:
            return ListOf(AnyValue()), set()
        items = [self.expr(item, naming.class_name(hint, "item", str(index))) for index, item in enumerate(prefix)]
        return TupleOf(tuple(items)), {"prefixItems", "items", "minItems", "maxItems"}

    def primitive(self, node: Node, kind: str) -> tuple[Primitive, set[str]]:
        """A primitive with the bounds it enforces itself; the keywords it took."""
        used: set[str] = set()
        minimum = maximum = None
        if kind in ("int", "float"):
            minimum, maximum = keywords.number(node, "minimum"), keywords.number(node, "maximum")
            used |= {"minimum", "maximum"}
        form = node.value("format")
        if kind == "int" and form is not None:
            if form not in INTEGER_FORMATS:
                raise GenerationError(f"{node.pointer}/format", f"unknown integer format {form!r}")
            low, high = INTEGER_FORMATS[form]
            minimum = low if minimum is None else max(low, math.ceil(minimum))
            maximum = high if maximum is None else min(high, math.floor(maximum))
        if kind == "int":
            minimum = None if minimum is None else math.ceil(minimum)
            maximum = None if maximum is None else math.floor(maximum)
        min_length = pattern = None
        if kind == "str":
            min_length = keywords.count(node, "minLength")
            if node.value("pattern") is not None:
                pattern = keywords.python_pattern(f"{node.pointer}/pattern", node.value("pattern"))
            used |= {"minLength", "pattern"}
        return Primitive(kind, minimum, maximum, min_length, form if isinstance(form, str) else None, pattern), used
