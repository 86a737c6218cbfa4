"""The one place that interprets JSON Schema: schema nodes → IR."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from generator import naming
from generator.config import SchemaOptions, UpsertRule
from generator.errors import GenerationError
from generator.ir import (
    Alias,
    AnyValue,
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
    TypeExpr,
    UnionType,
    Upsert,
    Variant,
)
from generator.load import Node, Schema

# Keywords that never change what is valid.
ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "contentEncoding", "contentMediaType",
     "deprecated", "readOnly", "writeOnly", "$comment", "$schema", "discriminator"}
)
# Keywords whose validation rules the generated code implements.
VALIDATION = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "$ref", "allOf",
     "anyOf", "oneOf", "const", "enum", "format", "minimum", "maximum", "minItems", "minLength", "pattern"}
)
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
        start=tuple(zip(attributes("start", rule.start), rule.start.values())),
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
        yield _unescape(node.ref[len(DEFS_PREFIX) :])
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
    constants = dict(zip(names, naming.member_names(names)))
    for (side, method), members in by_route.items():
        constant, python_name = constants[method], naming.method_name(method)
        if "request" in members:
            if "response" not in members:
                raise GenerationError(types[members["request"]].pointer, f"request {method!r} has no response type")
            methods.append(Method(method, constant, python_name, side, "request", members["request"], members["response"]))
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


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


class _Builder:
    def __init__(self, schema: Schema) -> None:
        self.definitions = schema.definitions
        self.types: dict[str, NamedType] = {}
        self.claimed: dict[str, str] = {}  # Python name → JSON pointer of its owner
        self.building: set[str] = set()
        self.python_names = {name: naming.type_name(name) for name in self.definitions}
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
        if {"anyOf", "oneOf"} <= node.keywords:
            raise GenerationError(f"{node.pointer}/oneOf", "anyOf and oneOf on one schema are not supported")
        for keyword in sorted(node.keywords):
            if keyword in ANNOTATIONS or keyword in VALIDATION or keyword.startswith("x-"):
                continue
            if keyword == "not" and allow_not:
                continue
            if keyword == "unevaluatedProperties" and node.value(keyword) is True:
                continue
            raise GenerationError(
                f"{node.pointer}/{keyword}",
                f"unsupported keyword {keyword!r}: it changes what is valid and acp-codegen does not implement it",
            )

    def resolve_ref(self, node: Node) -> str:
        ref = node.ref or ""
        name = _unescape(ref[len(DEFS_PREFIX) :]) if ref.startswith(DEFS_PREFIX) else None
        if name is None or name not in self.definitions:
            raise GenerationError(f"{node.pointer}/$ref", f"dangling $ref {ref!r}: no such definition")
        stray = node.keywords - ANNOTATIONS - {"$ref"} - {k for k in node.keywords if k.startswith("x-")}
        if stray:
            raise GenerationError(node.pointer, f"$ref beside validation keywords {sorted(stray)} is not supported")
        return name

    # --- named types --------------------------------------------------------

    def define(self, name: str, node: Node, route: Route | None = None) -> Ref:
        """Turn `node` into the named type `name`."""
        name = self.invent(node.pointer, name)
        self.check_keywords(node)
        enum = self.enum_members(node)
        if enum is not None:
            members, other = enum
            return self.register(EnumType(name, node.pointer, node.description, members, other, route))
        if self.is_object(node):
            fields = self.object_fields(name, node)
            return self.register(self.object_type(name, node, fields, route=route))
        variants = node.children("anyOf") or node.children("oneOf")
        if variants and not [v for v in variants if self.is_null(v)]:
            return self.union(name, node, variants, route)
        target = self.expr(node, name + "Value")
        return self.register(Alias(name, node.pointer, node.description, target, route))

    def object_type(
        self, name: str, node: Node, fields: list[Field], *, tag: Tag | None = None, route: Route | None = None
    ) -> ObjectType:
        flattened = any(item.flatten for item in fields)
        extra = node.child("additionalProperties")
        if extra is not None and not isinstance(extra.schema, bool):
            raise GenerationError(extra.pointer, "typed additionalProperties beside properties is not supported")
        closed = extra is not None and extra.schema is False
        if flattened and closed:
            raise GenerationError(node.pointer, "additionalProperties: false beside anyOf/oneOf is not supported")
        unknown = "flatten" if flattened else "reject" if closed else "keep"
        self.check_attribute_names(node, fields, tag)
        return ObjectType(name, node.pointer, node.description, tuple(fields), tag, unknown, route)

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
    def is_object(node: Node) -> bool:
        if node.properties():
            return True
        has_parts = bool(node.children("allOf")) and bool(node.children("anyOf") or node.children("oneOf"))
        return node.types == ("object",) and (has_parts or len(node.children("allOf")) > 1)

    @staticmethod
    def is_null(node: Node) -> bool:
        return node.types == ("null",)

    def enum_members(self, node: Node) -> tuple[tuple[EnumMember, ...], Primitive | None] | None:
        """Constants as an enum; a last variant of the same type without a
        const (`{"type": "string"}`) makes it open."""
        if node.properties():
            return None
        if node.value("const") is not None:
            if not self.is_const(node):
                raise GenerationError(f"{node.pointer}/const", "only string or integer constants are supported")
            return self.members(node, [node]), None
        values = node.value("enum")
        if values:
            if not all(isinstance(value, str) for value in values) or node.types not in ((), ("string",)):
                raise GenerationError(f"{node.pointer}/enum", "only enums of strings are supported")
            return self.named_members(f"{node.pointer}/enum", values, values, [None] * len(values)), None
        variants = node.children("anyOf") or node.children("oneOf")
        return self.enum_members_of(node, variants) if variants else None

    def enum_members_of(
        self, node: Node, variants: list[Node]
    ) -> tuple[tuple[EnumMember, ...], Primitive | None] | None:
        *known, last = variants
        kinds = {v.types for v in variants}
        is_open = bool(known) and len(kinds) == 1 and last.value("const") is None and last.types in (
            ("string",), ("integer",)
        ) and last.keywords <= {"type", "title", "description", "format"}
        constants = known if is_open else variants
        if not constants or not all(self.is_const(v) for v in constants) or len(kinds) != 1:
            return None
        members = self.members(node, constants)
        other = self.primitive(last, PRIMITIVE_KINDS[last.types[0]]) if is_open else None
        return members, other

    @staticmethod
    def is_const(node: Node) -> bool:
        value = node.value("const")
        kind = "string" if isinstance(value, str) else "integer" if type(value) is int else None
        return kind is not None and node.types in ((), (kind,)) and node.keywords <= {
            "type", "const", "title", "description", "format"
        }

    def members(self, node: Node, constants: list[Node]) -> tuple[EnumMember, ...]:
        """Members are named by their value; integers by their title (`Parse error` → PARSE_ERROR)."""
        values = [constant.value("const") for constant in constants]
        labels = [value if isinstance(value, str) else c.title or str(value) for c, value in zip(constants, values)]
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
        return tuple(EnumMember(name, value, doc) for name, value, doc in zip(names, values, docs))

    def object_fields(self, owner: str, node: Node, skip: frozenset[str] = frozenset()) -> list[Field]:
        """Fields from `properties`, then from each `allOf` part, then a flattened `anyOf`/`oneOf`."""
        required = set(node.required)
        fields: list[Field] = []
        variants = node.children("anyOf") or node.children("oneOf")
        tag_key = self.tag_key(variants) if variants else None
        for wire_name, child in node.properties():
            if wire_name in skip or wire_name == tag_key:  # the flattened union owns its tag
                continue
            fields.append(self.field(owner, wire_name, child, wire_name in required))
        for part in node.children("allOf"):
            known = {item.wire_name for item in fields} | skip
            fields.extend(item for item in self.part_fields(owner, part) if item.wire_name not in known)
        declared = {item.wire_name for item in fields} | skip | ({tag_key} if tag_key else set())
        for key in node.required:
            if key not in declared:
                raise GenerationError(f"{node.pointer}/required", f"required property {key!r} is not declared")
        if variants:
            fields.append(self.flattened(owner, node, variants, tag_key))
        return fields

    def part_fields(self, owner: str, part: Node) -> list[Field]:
        self.check_keywords(part)
        if part.ref:
            target = self.definition(self.resolve_ref(part))
            if isinstance(target, UnionType):
                return [self.flatten_field(target.tag_key, Ref(target.name))]
            if not isinstance(target, ObjectType):
                raise GenerationError(part.pointer, f"allOf part {target.name} is not an object or a union")
            return list(target.fields)
        if self.is_object(part) or part.types == ("object",):
            return self.object_fields(owner, part)
        raise GenerationError(part.pointer, "an allOf part must be a $ref to an object or an inline object")

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

    def flattened(self, owner: str, node: Node, variants: list[Node], tag_key: str | None) -> Field:
        """The union part of an object that has both `properties` and `anyOf`/`oneOf`."""
        name = naming.class_name(owner, tag_key or "variant")
        union = self.union(name, node, variants, None, pointer=f"{variants[0].pointer.rsplit('/', 1)[0]}")
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

    @staticmethod
    def const_keys(variant: Node) -> list[str]:
        return [key for key, child in variant.properties() if isinstance(child.value("const"), str) and key in variant.required]

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
        """The open variant: a `not` clause and a plain string tag."""
        tag = dict(variant.properties()).get(tag_key)
        return "not" in variant.keywords and tag is not None and tag.value("const") is None and tag.types == ("string",)

    def union(
        self, name: str, node: Node, variants: list[Node], route: Route | None, pointer: str | None = None
    ) -> Ref:
        """Tagged variants dispatch on `tag_key`; an open fallback takes unknown tags;
        the remaining (untagged) variants are tried in schema order."""
        pointer = pointer or node.pointer
        name = self.invent(pointer, name)
        tag_key = self.tag_key(variants)
        untagged = [
            variant
            for variant in variants
            if tag_key is None or not (tag_key in self.const_keys(variant) or self.is_fallback(variant, tag_key))
        ]
        hints = naming.variant_names(name, [self.variant_words(variant) for variant in untagged])
        hint_of = {variant.pointer: hint for variant, hint in zip(untagged, hints)}
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
                    fields = self.object_fields(variant_name, variant, skip=frozenset({tag_key}))
                else:
                    fields = list(self.types[target].fields)  # type: ignore[union-attr]
                obj = self.object_type(variant_name, variant, fields, tag=tag)
                obj = replace(obj, doc=variant.description or self.wrapped_doc(variant), base=target)
                choices.append(Variant(self.register(obj), tag=value))
            elif tag_key is not None and self.is_fallback(variant, tag_key):
                if fallback_name is not None:
                    raise GenerationError(variant.pointer, f"a second open fallback variant (first: {fallback_name})")
                self.check_keywords(variant, allow_not=True)
                fallback_name = self.invent(variant.pointer, naming.class_name(name, variant.title or "other"))
                fields = self.object_fields(fallback_name, variant)
                self.register(self.object_type(fallback_name, variant, fields))
            else:
                tag = dict(variant.properties()).get(tag_key) if tag_key is not None else None
                if tag is not None and tag.types != ("null",):
                    raise GenerationError(variant.pointer, f"variant declares the tag {tag_key!r} without a const")
                choices.append(Variant(self.expr(variant, hint_of[variant.pointer])))
        return self.register(
            UnionType(name, pointer, node.description, tuple(choices), tag_key, fallback_name, route)
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
        target = self.definition(self.resolve_ref(parts[0]))
        if not isinstance(target, ObjectType) or tag_key in {item.wire_name for item in target.fields}:
            return None
        return target.name

    def wrapped_doc(self, variant: Node) -> str | None:
        for part in variant.children("allOf"):
            if part.ref:
                return self.definitions[self.resolve_ref(part)].description
        return None

    # --- type expressions ---------------------------------------------------

    def expr(self, node: Node, hint: str, *, allow_not: bool = False) -> TypeExpr:
        """What a property, item or alias holds; `hint` names inline named types."""
        self.check_keywords(node, allow_not=allow_not)
        if node.is_true:
            return AnyValue()
        if node.schema is False:
            raise GenerationError(node.pointer, "the schema `false` (nothing is valid) is not supported")
        if node.ref:
            return Ref(self.python_names[self.resolve_ref(node)])
        parts = node.children("allOf")
        if parts and not self.is_object(node):
            if len(parts) > 1:
                raise GenerationError(f"{node.pointer}/allOf", "allOf with several parts is only supported on objects")
            return self.expr(parts[0], hint)
        variants = node.children("anyOf") or node.children("oneOf")
        if variants and not node.properties():
            rest = [v for v in variants if not self.is_null(v)]
            if len(rest) == len(variants):
                return self.define(hint, node)
            inner = self.expr(rest[0], hint) if len(rest) == 1 else self.define_union_of(hint, node, rest)
            return Nullable(inner)
        types = node.types
        nullable = "null" in types and len(types) > 1
        types = tuple(t for t in types if t != "null") if nullable else types
        if len(types) > 1:
            raise GenerationError(f"{node.pointer}/type", f"a type list {list(types)} is not supported")
        expr = self.single_type(node, types[0] if types else None, hint)
        return Nullable(expr) if nullable else expr

    def define_union_of(self, name: str, node: Node, variants: list[Node]) -> Ref:
        name = self.invent(node.pointer, name)
        enum = self.enum_members_of(node, variants)
        if enum is not None:
            return self.register(EnumType(name, node.pointer, node.description, enum[0], enum[1]))
        return self.union(name, node, variants, None)

    def single_type(self, node: Node, json_type: str | None, hint: str) -> TypeExpr:
        if node.value("const") is not None or node.value("enum"):
            return self.define(hint, node)
        if self.is_object(node) or (json_type == "object" and node.children("allOf")):
            return self.define(hint, node)
        if json_type is None:
            if node.keywords - ANNOTATIONS - {k for k in node.keywords if k.startswith("x-")}:
                raise GenerationError(node.pointer, "a schema without `type` must be `{}` or use $ref/allOf/anyOf")
            return AnyValue()
        if json_type in PRIMITIVE_KINDS:
            return self.primitive(node, PRIMITIVE_KINDS[json_type])
        if json_type == "array":
            items = node.child("items")
            if items is None:
                raise GenerationError(node.pointer, "an array needs `items`")
            return ListOf(
                self.expr(items, hint + "Item"),
                min_items=node.value("minItems"),
                skip_invalid_items=node.value("x-deserialize-skip-invalid-items") is True,
            )
        if json_type == "object":
            values = node.child("additionalProperties")
            if values is None or values.schema is True or values.is_true:
                return JsonObject()
            return MapOf(self.expr(values, hint + "Value"))
        raise GenerationError(f"{node.pointer}/type", f"unknown type {json_type!r}")

    def primitive(self, node: Node, kind: str) -> Primitive:
        minimum, maximum = _number(node.value("minimum")), _number(node.value("maximum"))
        form = node.value("format")
        if kind == "int" and form is not None:
            if form not in INTEGER_FORMATS:
                raise GenerationError(f"{node.pointer}/format", f"unknown integer format {form!r}")
            low, high = INTEGER_FORMATS[form]
            minimum = low if minimum is None else max(low, minimum)
            maximum = high if maximum is None else min(high, maximum)
        if kind == "int":
            minimum = None if minimum is None else int(minimum)
            maximum = None if maximum is None else int(maximum)
        bounds = (minimum, maximum) if kind in ("int", "float") else (None, None)
        if kind not in ("int", "float") and (minimum is not None or maximum is not None):
            raise GenerationError(node.pointer, f"minimum/maximum on a {kind} is not supported")
        min_length = node.value("minLength") if kind == "str" else None
        if kind != "str" and node.value("minLength") is not None:
            raise GenerationError(node.pointer, "minLength on a non-string is not supported")
        pattern = node.value("pattern")
        if pattern is not None:
            if kind != "str" or not isinstance(pattern, str):
                raise GenerationError(f"{node.pointer}/pattern", "pattern needs a string schema and a string")
            try:
                re.compile(pattern)
            except re.error as error:
                raise GenerationError(f"{node.pointer}/pattern", f"not a regular expression Python accepts: {error}") from None
        return Primitive(kind, bounds[0], bounds[1], min_length, form if isinstance(form, str) else None, pattern)


def _number(value: object) -> int | float | None:
    """datamodel-code-generator wraps bounds in UnionIntFloat; unwrap it."""
    if value is None:
        return None
    inner = getattr(value, "value", value)
    if isinstance(inner, bool) or not isinstance(inner, (int, float)):
        raise GenerationError("", f"a bound must be a number, found {inner!r}")
    return inner

