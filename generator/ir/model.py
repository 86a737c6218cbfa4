"""The intermediate representation: every decision the generator makes.

Built by `build`, read by `render`; nothing after the IR looks at the schema.
All classes are frozen dataclasses, so the IR is hashable, comparable and
printable as JSON (`python -m generator ir`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from generator.config import EXTRAS
from generator.errors import SchemaWarning
from generator.ir.assertions import Checks

# --- type expressions: what a field, list item or alias holds ----------------


@dataclass(frozen=True)
class Primitive:
    """A JSON string, integer, number, boolean or null, with its validation bounds."""

    kind: str  # "str" | "int" | "float" | "bool" | "none"
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None
    format: str | None = None
    pattern: str | None = None  # a Python regular expression (from ECMA-262) the string must contain a match of


@dataclass(frozen=True)
class AnyValue:
    """Any JSON value (schema `{}` or `true`)."""


@dataclass(frozen=True)
class JsonObject:
    """A free-form JSON object: `dict[str, Any]`."""


@dataclass(frozen=True)
class MapOf:
    """A JSON object whose values all have one type: `dict[str, T]`."""

    value: TypeExpr


@dataclass(frozen=True)
class ListOf:
    item: TypeExpr
    min_items: int | None = None
    skip_invalid_items: bool = False


@dataclass(frozen=True)
class TupleOf:
    """A JSON array of exactly `len(items)` items, item i of type `items[i]`: `prefixItems`
    closed by `items: false` or `maxItems`, with `minItems` as many."""

    items: tuple[TypeExpr, ...]


@dataclass(frozen=True)
class Ref:
    """A named type of the module (object, enum, union or alias)."""

    name: str


@dataclass(frozen=True)
class Nullable:
    inner: TypeExpr


@dataclass(frozen=True)
class Checked:
    """A type with assertions the structural type does not express."""

    inner: TypeExpr
    checks: Checks


TypeExpr = Primitive | AnyValue | JsonObject | MapOf | ListOf | TupleOf | Ref | Nullable | Checked

# --- named types --------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """`x-method` / `x-side`: which JSON-RPC method this type belongs to."""

    method: str
    side: str


@dataclass(frozen=True)
class Field:
    """One property of an object.

    `flatten` fields have no wire name: they hold a union decoded from the
    same JSON object (the schema's `properties` plus `anyOf`/`oneOf`).
    """

    name: str
    wire_name: str
    type: TypeExpr
    required: bool
    nullable: bool
    doc: str | None
    default_on_error: bool = False
    default_on_null: bool = False
    flatten: bool = False


@dataclass(frozen=True)
class Tag:
    """The constant property that marks a variant of a tagged union."""

    key: str
    attribute: str
    value: str


@dataclass(frozen=True)
class Upsert:
    """How `merge` applies a patch of this type to stored state (attribute names).

    Omitted keeps, None clears, a value replaces; besides that:"""

    function: str  # the generated merge function
    identity: tuple[str, ...]  # must be equal in stored and patch
    start: tuple[tuple[str, object], ...]  # JSON value of an omitted field in a first report
    null_resets: tuple[str, ...]  # None means "back to the start value"
    empty_clears: tuple[str, ...]  # None and [] both mean []
    snapshot: tuple[str, ...]  # the patch's value replaces, absent included
    by_key: tuple[str, ...]  # free-form objects patched key by key (a None value removes the key)


@dataclass(frozen=True)
class ObjectType:
    name: str
    pointer: str
    doc: str | None
    fields: tuple[Field, ...]
    tag: Tag | None = None
    # Properties the schema does not declare are kept (JSON Schema allows them
    # unless `additionalProperties: false`) in `unknown_properties`.
    # "keep": in `unknown_properties`; "reject" (`additionalProperties: false`);
    # "flatten": a flattened union field takes them.
    keep_unknown: str = "keep"
    route: Route | None = None
    # A tagged variant that wraps an object subclasses it, adding only the tag.
    base: str | None = None
    upsert: Upsert | None = None
    checks: Checks | None = None


@dataclass(frozen=True)
class EnumMember:
    name: str
    value: str | int
    doc: str | None


@dataclass(frozen=True)
class EnumType:
    """String (or integer) constants. An open enum has an `other` type: values
    of it that are not members are kept as plain `str` (or `int`)."""

    name: str
    pointer: str
    doc: str | None
    members: tuple[EnumMember, ...]
    other: Primitive | None
    route: Route | None = None
    checks: Checks | None = None

    @property
    def open(self) -> bool:
        return self.other is not None

    @property
    def value_kind(self) -> str:
        return "int" if isinstance(self.members[0].value, int) else "str"


@dataclass(frozen=True)
class Variant:
    type: TypeExpr
    tag: str | None = None


@dataclass(frozen=True)
class UnionType:
    """A tagged union (`tag_key` set: one dict lookup on the tag) or an
    untagged one (variants tried in schema order). `fallback` is the open
    variant that keeps unknown tags with their whole payload. A tagged variant
    that rejects a value leaves it to the untagged ones. `exclusive` (`oneOf`):
    a value matching two variants is invalid."""

    name: str
    pointer: str
    doc: str | None
    variants: tuple[Variant, ...]
    tag_key: str | None = None
    fallback: str | None = None
    route: Route | None = None
    exclusive: bool = False
    checks: Checks | None = None


@dataclass(frozen=True)
class Alias:
    """A `$defs` name for another type, written as a plain type alias (`SessionId: TypeAlias
    = str`): a plain value is accepted wherever the alias is expected, as in the schema."""

    name: str
    pointer: str
    doc: str | None
    target: TypeExpr
    route: Route | None = None


NamedType = ObjectType | EnumType | UnionType | Alias


@dataclass(frozen=True)
class Method:
    """A JSON-RPC method: which side handles it and the types of its params and result.

    Found from the envelopes (`{id, method, params}`, `{method, params}`,
    `{id, result}`) that reference the types carrying `x-method`/`x-side`."""

    name: str  # the wire method, e.g. "session/prompt"
    constant: str  # SESSION_PROMPT
    python_name: str  # session_prompt: the method of the Agent/Client interfaces and connections
    side: str
    kind: str  # "request" | "notification"
    params: str
    result: str | None = None


@dataclass(frozen=True)
class Module:
    package: str
    schema_path: str
    schema_sha256: str
    types: tuple[NamedType, ...]
    public_names: tuple[tuple[str, str], ...]  # (`$defs` name, Python name), in schema order
    path_types: tuple[str, ...] = ()  # string aliases whose builders accept os.PathLike
    warnings: tuple[SchemaWarning, ...] = ()  # schema drift the generator noticed (see `generate --strict`)
    methods: tuple[Method, ...] = ()
    request_id: str | None = None  # the type of JSON-RPC ids (from the envelopes)
    rpc_error: str | None = None  # the type of JSON-RPC error objects
    batches: bool = False  # whether the document admits a JSON array of messages
    protocol_version: int | None = None  # the ACP version the package speaks (config), for routing
    # what the generated files' headers tell the reader to run (the project's commands, or as invoked)
    generate_command: str = "acp-codegen generate"
    check_command: str = "acp-codegen check"
    # the optional parts the package carries (config `extras`, in EXTRAS order): their modules and
    # entry points; the others are left out
    extras: tuple[str, ...] = EXTRAS

    def by_name(self) -> dict[str, NamedType]:
        return {named.name: named for named in self.types}

    @property
    def has_rpc(self) -> bool:
        """Whether the schema has JSON-RPC methods, their id type and their error type (rpc.py)."""
        return bool(self.methods and self.request_id and self.rpc_error)


IR_CLASS_KEY = "$class"
"""Where `to_json` writes a node's class: no field name starts with `$`."""


def to_json(node: object) -> object:
    """The IR as plain JSON data, each node's class name under `IR_CLASS_KEY`."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        data: dict[str, object] = {IR_CLASS_KEY: type(node).__name__}
        for item in dataclasses.fields(node):
            data[item.name] = to_json(getattr(node, item.name))
        return data
    if isinstance(node, tuple):
        return [to_json(item) for item in node]
    return node
