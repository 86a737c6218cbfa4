"""IR → Python source, through the Jinja2 templates in `generator/templates/`.

The functions here answer questions about the IR for the templates (which
kind is this, does it encode as itself, in what order are aliases defined);
all emitted text lives in the templates.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from generator import naming
from generator.errors import GenerationError
from generator.ir import (
    Alias,
    AnyValue,
    Checked,
    EnumType,
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
    TypeExpr,
    UnionType,
)
from generator.naming import RPC_NAMES

TEMPLATES = Path(__file__).resolve().parent / "templates"
LINE_LENGTH = 120  # black's line length for the generated code (format.MODE)
# The two peers of a connection (x-side values); methods of SHARED_SIDE go both ways.
PEER_SIDES = ("agent", "client")
SHARED_SIDE = "protocol"
INITIALIZE_METHOD = "initialize"  # served first: earlier requests are refused
CANCEL_METHOD = "$/cancel_request"  # handled by the connection: cancels a request being served
# What the interfaces and connections define themselves: no method may take these names.
CONNECTION_ATTRIBUTES = frozenset({"on_connect", "ext_method", "ext_notification", "close", "wait_closed"})
# The error-code enum members the connection answers with.
USED_ERROR_CODES = frozenset(
    {"PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR", "REQUEST_CANCELLED"}
)
# What RequestError defines itself: no error-code constructor may take these names.
REQUEST_ERROR_ATTRIBUTES = frozenset({"code", "message", "data", "error", "response", "from_error"})
PRIMITIVE_NAMES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "none": "null"}


def python_literal(value: object) -> str:
    """A literal that evaluates to `value`; repr-safe for any schema text.
    Strings prefer double quotes, as black writes them."""
    if value == [] or value == {}:
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return f'"{text[1:-1]}"' if text.startswith("'") and '"' not in value else text
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(f"{python_literal(item)}, " for item in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(key)}: {python_literal(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"no Python literal for {type(value).__name__}")


def json_literal(text: str) -> str:
    """The Python literal of a JSON value kept as JSON text in the IR (`const`, `enum`)."""
    return python_literal(json.loads(text))


def _escape_character(character: str) -> str:
    if character in "\n\t" or character.isprintable():
        return character
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escape(text: str) -> str:
    """Escape backslashes, `\"\"\"`, tabs and unprintable characters."""
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').replace("\t", "\\t")
    return "".join(_escape_character(character) for character in escaped)


def string_block(text: str) -> str:
    """A triple-quoted literal of `text` for an attribute or alias doc."""
    escaped = _escape(text)
    if escaped.endswith('"'):
        escaped = escaped[:-1] + '\\"'
    return f'"""{escaped}"""'


def docstring(text: str, indent: int = 4) -> str:
    """A docstring of `text` laid out exactly as black lays it out (PEP 257
    indentation, padding, closing quotes), so black has nothing to change."""
    prefix = " " * indent
    body = _escape(text)
    lines = body.split("\n")
    if len(lines) > 1:
        margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
        rest = [prefix + line[margin:].rstrip() if line.strip() else "" for line in lines[1:]]
        if not lines[-1].strip():
            rest[-1] = prefix
        body = "\n".join([lines[0].strip(), *rest])
    else:
        body = body.strip()
    if body.startswith('"'):
        body = " " + body
    if body.endswith('"'):
        body += " "
    last = body.split("\n")
    if len(last) > 1 and len(last[-1]) + 3 > LINE_LENGTH:
        body += "\n" + prefix
    return f'"""{body}"""'


def natural_sorted(names: list[str]) -> list[str]:
    """`names` in ruff's natural order (code points, digit runs as numbers), as `__slots__` are kept."""
    return sorted(names, key=lambda name: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)])


def comment_safe(text: str) -> str:
    """Text that stays on one comment line."""
    return "".join(character if character.isprintable() else "?" for character in text)


def block(text: str, width: int) -> str:
    """A macro's statements placed at `width` spaces (the first line is placed by the caller)."""
    return jinja2.filters.do_indent(str(text).strip("\n"), width)


class Queries:
    """What the templates ask about the IR of one module."""

    def __init__(self, module: Module) -> None:
        self.types = module.by_name()
        self.path_types = module.path_types
        # Objects some tagged variant subclasses: their decoders take the class.
        self.bases = {named.base for named in module.types if isinstance(named, ObjectType) and named.base}

    @staticmethod
    def shares_object(named: NamedType) -> bool:
        """Whether the Python object of `named` may be another type's too: an alias
        or union evaluates to its annotation (`int | str`), while classes, enums
        and NewTypes are objects of their own."""
        return isinstance(named, UnionType) or (isinstance(named, Alias) and not named.newtype)

    def is_recursive(self, union: UnionType) -> bool:
        """Whether `union` can contain itself: trying its untagged variants in turn
        then repeats work at every level of nesting, unless each match is remembered."""
        seen: set[str] = set()
        pending = [union.name]
        while pending:
            for expr in _expressions(self.types[pending.pop()]):
                if isinstance(expr, Ref) and expr.name not in seen:
                    if expr.name == union.name:
                        return True
                    seen.add(expr.name)
                    pending.append(expr.name)
        return False

    def holds_models_only(self, union: UnionType) -> bool:
        """Whether every value of `union` is an object class instance (so it encodes itself)."""

        def is_model(expr: TypeExpr) -> bool:
            named = self.types.get(expr.name) if isinstance(expr, Ref) else None
            if isinstance(named, Alias):
                return is_model(named.target)
            if isinstance(named, UnionType):
                return self.holds_models_only(named)
            return isinstance(named, ObjectType)

        fallback = [Ref(union.fallback)] if union.fallback else []
        return all(is_model(expr) for expr in [variant.type for variant in union.variants] + fallback)

    def resolve(self, expr: TypeExpr) -> TypeExpr:
        """`expr` with references to aliases followed."""
        while isinstance(expr, Ref) and isinstance(self.types[expr.name], Alias):
            expr = self.types[expr.name].target  # type: ignore[union-attr]
        return expr

    def converts_as_is(self, expr: TypeExpr) -> bool:
        """Whether a builder stores what it is given for `expr` unchanged."""
        if isinstance(expr, Ref):
            named = self.types[expr.name]
            if isinstance(named, Alias):
                return expr.name not in self.path_types and self.converts_as_is(named.target)
            return True
        if isinstance(expr, (Nullable, Checked)):
            return self.converts_as_is(expr.inner)
        return not isinstance(expr, (ListOf, MapOf, JsonObject))

    def enum_member(self, expr: TypeExpr, value: object) -> str | None:
        """The member name of `value` when `expr` is an enum that has it."""
        expr = self.resolve(expr)
        named = self.types.get(expr.name) if isinstance(expr, Ref) else None
        if isinstance(named, EnumType):
            return next((member.name for member in named.members if member.value == value), None)
        return None

    @staticmethod
    def string_expectation(expr: Primitive) -> str:
        """What an error says a constrained string must be."""
        parts = [f"at least {expr.min_length} characters"] if expr.min_length else []
        parts += [f"matching {expr.pattern!r}"] if expr.pattern else []
        return "string " + " and ".join(parts)

    def is_single_check(self, expr: TypeExpr) -> bool:
        """Whether decoding `expr` is one `if` statement (which a guard can join)."""
        expr = self.resolve(expr)
        return isinstance(expr, AnyValue) or (isinstance(expr, Primitive) and expr.kind != "float")

    def describe(self, expr: TypeExpr) -> str:
        """What an error message says the schema expects."""
        if isinstance(expr, Primitive):
            return PRIMITIVE_NAMES[expr.kind]
        if isinstance(expr, AnyValue):
            return "any JSON value"
        if isinstance(expr, (JsonObject, MapOf)):
            return "object"
        if isinstance(expr, ListOf):
            return "array"
        if isinstance(expr, Nullable):
            return f"{self.describe(expr.inner)} or null"
        if isinstance(expr, Checked):
            return self.describe(expr.inner)
        return expr.name

    def helper_name(self, expr: TypeExpr) -> str:
        """A readable, deterministic name for the decoder of a list or map."""
        if isinstance(expr, Primitive):
            bounds = "" if expr.minimum is None and expr.maximum is None else f"_{expr.minimum}_{expr.maximum}"
            name = (expr.format or expr.kind) + bounds.replace("-", "m")
            name += f"_min{expr.min_length}" if expr.min_length else ""
            return name + (f"_re{hashlib.sha256(expr.pattern.encode()).hexdigest()[:8]}" if expr.pattern else "")
        if isinstance(expr, AnyValue):
            return "any"
        if isinstance(expr, JsonObject):
            return "object"
        if isinstance(expr, MapOf):
            return f"map_of_{self.helper_name(expr.value)}"
        if isinstance(expr, ListOf):
            suffix = (f"_min{expr.min_items}" if expr.min_items else "") + (
                "_skip_invalid" if expr.skip_invalid_items else ""
            )
            return f"list_of_{self.helper_name(expr.item)}{suffix}"
        if isinstance(expr, Nullable):
            return f"optional_{self.helper_name(expr.inner)}"
        if isinstance(expr, Checked):
            digest = hashlib.sha256(repr(expr.checks).encode()).hexdigest()[:8]
            return f"{self.helper_name(expr.inner)}_checked{digest}"
        return expr.name

    @staticmethod
    def wire_keys(obj: ObjectType) -> list[str]:
        keys = [item.wire_name for item in obj.fields if not item.flatten]
        return keys + ([obj.tag.key] if obj.tag else [])

    def untagged_descriptions(self, union: UnionType) -> list[str]:
        return [self.describe(variant.type) for variant in union.variants if variant.tag is None]

    @staticmethod
    def tag_expectation(union: UnionType) -> str:
        return "one of " + ", ".join(repr(variant.tag) for variant in union.variants if variant.tag is not None)


def sort_key(name: str) -> tuple[int, list[str | int]]:
    """isort/ruff order: CONSTANTS, then Classes, then other names; digits compared as numbers."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def import_sort_key(name: str) -> tuple[int, list[str | int]]:
    """isort's order inside `from x import (...)`: by type, then case-insensitively."""
    group, parts = sort_key(name)
    return group, [part.lower() if isinstance(part, str) else part for part in parts]


def _expressions(named: NamedType) -> Iterator[TypeExpr]:
    if isinstance(named, ObjectType):
        roots: list[TypeExpr] = [item.type for item in named.fields]
    elif isinstance(named, UnionType):
        roots = [variant.type for variant in named.variants]
    elif isinstance(named, Alias):
        roots = [named.target]
    else:
        roots = []
    stack = list(reversed(roots))
    while stack:
        expr = stack.pop()
        yield expr
        if isinstance(expr, ListOf):
            stack.append(expr.item)
        elif isinstance(expr, MapOf):
            stack.append(expr.value)
        elif isinstance(expr, (Nullable, Checked)):
            stack.append(expr.inner)


def containers(module: Module, queries: Queries) -> list[ListOf | MapOf]:
    """Every list and map type, once each, in order of first use."""
    found: dict[str, ListOf | MapOf] = {}
    for named in module.types:
        for expr in _expressions(named):
            if isinstance(expr, (ListOf, MapOf)):
                name = queries.helper_name(expr)
                if found.setdefault(name, expr) != expr:
                    raise GenerationError(named.pointer, f"two different container types are both named {name}")
    return list(found.values())


def definition_order(module: Module) -> list[Alias | UnionType]:
    """Aliases and unions ordered so each is defined after those it names."""
    types = module.by_name()
    pending = [named for named in module.types if isinstance(named, (Alias, UnionType))]
    ordered: list[Alias | UnionType] = []
    placed: set[str] = set()
    visiting: list[str] = []

    def place(named: Alias | UnionType) -> None:
        if named.name in placed:
            return
        if named.name in visiting:
            cycle = " → ".join([*visiting[visiting.index(named.name) :], named.name])
            raise GenerationError(named.pointer, f"aliases and unions that contain each other directly: {cycle}")
        visiting.append(named.name)
        for expr in _expressions(named):
            target = types.get(expr.name) if isinstance(expr, Ref) else None
            if isinstance(target, (Alias, UnionType)):
                place(target)
        visiting.pop()
        placed.add(named.name)
        ordered.append(named)

    for named in pending:
        place(named)
    return ordered


def class_order(module: Module) -> list[ObjectType]:
    """Object classes, each after its base."""
    objects = [named for named in module.types if isinstance(named, ObjectType)]
    position = {obj.name: index for index, obj in enumerate(objects)}
    for obj in objects:
        if obj.base is not None and position[obj.base] > position[obj.name]:
            raise GenerationError(obj.pointer, f"{obj.name} is built before its base {obj.base}")
    return objects


def rpc_context(module: Module, queries: Queries, context: dict[str, Any]) -> dict[str, Any]:
    """What rpc.py.jinja needs: routes grouped by side, method constants, imports."""
    methods = sorted(module.methods, key=lambda method: (method.side, method.name))
    sides = sorted({method.side for method in methods})
    code_enum = rpc_code_enum(module, queries)
    not_found = queries.enum_member(Ref(code_enum), -32601) if code_enum else None
    names = (
        {module.request_id, module.rpc_error} | {m.params for m in methods} | {m.result for m in methods if m.result}
    )

    def by_side(kind: str) -> list[tuple[str, list[Method]]]:
        """(side, its methods of `kind`), every side included."""
        return [(side, [m for m in methods if m.side == side and m.kind == kind]) for side in sides]

    if code_enum and not_found:
        names.add(code_enum)
    return {
        **context,
        "requests_by_side": by_side("request"),
        "shared_sides": [side for side in sides if side == SHARED_SIDE],
        "notifications_by_side": by_side("notification"),
        "method_constants": sorted({(m.constant, m.name) for m in methods}),
        "rpc_imports": sorted(names, key=import_sort_key),
        "request_id": module.request_id,
        "rpc_error": module.rpc_error,
        # The error code enum and its member for -32601 ("method not found"), when the schema has one.
        "code_enum": code_enum if not_found else None,
        "not_found_member": not_found,
    }


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept in memory for the process (keyed by template source),
    so rendering many schemas in one process compiles each template once."""

    def __init__(self) -> None:
        self.compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.compiled[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


def environment(queries: Queries) -> jinja2.Environment:
    env = jinja2.Environment(
        bytecode_cache=_COMPILED,
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(
        py=python_literal,
        json_literal=json_literal,
        docstring=docstring,
        string_block=string_block,
        comment_safe=comment_safe,
        block=block,
    )

    def py_type(expr: TypeExpr) -> str:
        macros: Any = env.get_template("macros/types.jinja").module  # macros are attributes made at run time
        return str(macros.py_type(expr))

    env.filters["py_type"] = py_type
    env.filters["natural_sorted"] = natural_sorted
    env.globals.update(
        kind=lambda node: type(node).__name__,
        fits=lambda line: len(line) <= LINE_LENGTH,
        types=queries.types,
        bases=queries.bases,
        path_types=queries.path_types,
        converts_as_is=queries.converts_as_is,
        enum_member=queries.enum_member,
        string_expectation=queries.string_expectation,
        shares_object=queries.shares_object,
        is_recursive=queries.is_recursive,
        holds_models_only=queries.holds_models_only,
        resolve=queries.resolve,
        is_single_check=queries.is_single_check,
        describe=queries.describe,
        helper_name=queries.helper_name,
        wire_keys=queries.wire_keys,
        untagged_descriptions=queries.untagged_descriptions,
        tag_expectation=queries.tag_expectation,
    )
    return env


def upsert_context(objects: list[ObjectType], queries: Queries) -> dict[str, Any]:
    """What upserts.py.jinja needs: the upsert types, their variant subclasses, imports."""
    upserts = [obj for obj in objects if obj.upsert]
    variants = {obj.name: [other.name for other in objects if other.base == obj.name] for obj in upserts}
    enums = set()
    for obj in upserts:
        start = dict(obj.upsert.start)  # type: ignore[union-attr]
        for item in obj.fields:
            if item.name in start and queries.enum_member(item.type, start[item.name]):
                enums.add(queries.resolve(item.type).name)  # type: ignore[union-attr]
    names = {obj.name for obj in upserts} | {name for subclasses in variants.values() for name in subclasses} | enums
    return {
        "upserts": upserts,
        "upsert_variants": variants,
        "upsert_imports": sorted(names, key=import_sort_key),
        "merge_functions": sorted(obj.upsert.function for obj in upserts),  # type: ignore[union-attr]
    }


def base_context(module: Module, queries: Queries, versions: dict[str, str]) -> dict[str, Any]:
    """What every template may use: the module, its types in definition order, the public names."""
    objects = class_order(module)
    aliases_and_unions = definition_order(module)
    rpc = bool(module.methods and module.request_id and module.rpc_error)
    defs_names = {python: name for name, python in module.public_names}
    connection = connection_names(module)
    upserts = upsert_context(objects, queries)
    merge_functions = upserts["merge_functions"]
    names = [named.name for named in module.types]
    runtime_names = ["DecodeError", "MaybeUndefined", "Model", "Salvage", "UNDEFINED", "Undefined", "decode", "encode"]
    return {
        **upserts,
        "module": module,
        "versions": versions,
        "objects": objects,
        "enums": [named for named in module.types if isinstance(named, EnumType)],
        "aliases_and_unions": aliases_and_unions,
        # `decode` takes a `$defs` type by its `$defs` name, an inline one by its Python name.
        "decoder_keys": [(defs_names.get(name, name), name) for name in names],
        "exported": sorted(names, key=sort_key),
        "imported": sorted(names, key=import_sort_key),
        "public": sorted(
            runtime_names
            + names
            + (["merge", *merge_functions] if merge_functions else [])
            + (list(RPC_NAMES) if rpc else [])
            + list(connection),
            key=sort_key,
        ),
        "builders": any(not obj.base for obj in objects),
        "rpc": rpc,
        "rpc_exported": sorted(RPC_NAMES, key=sort_key),
        "rpc_imported": sorted(RPC_NAMES, key=import_sort_key),
        "connection_exported": list(connection),
        "connection_imported": sorted(connection, key=import_sort_key),
        "uses": {
            "field": any(obj.keep_unknown == "keep" and not obj.base for obj in objects),
            "ClassVar": any(obj.tag for obj in objects),
            "Literal": any(obj.tag for obj in objects),
            "Final": True,
            "NewType": any(isinstance(t, Alias) and t.newtype for t in aliases_and_unions),
            "TypeAlias": any(not (isinstance(t, Alias) and t.newtype) for t in aliases_and_unions),
        },
    }


def _macros(env: jinja2.Environment, name: str) -> Any:
    return env.get_template(f"macros/{name}.jinja").module  # macros are attributes made at run time


def names_in_code(units: list[str], candidates: list[str]) -> list[str]:
    """The `candidates` that `units` (Python source) use as names, outside strings and
    comments, in import order: what a module of those units imports."""
    found = set()
    for unit in units:
        tokens = tokenize.generate_tokens(io.StringIO(unit).readline)
        found |= {token.string for token in tokens if token.type == tokenize.NAME}
    return sorted(found.intersection(candidates), key=import_sort_key)


def model_units(env: jinja2.Environment, context: dict[str, Any]) -> list[str]:
    """models.py as top-level units: enums and classes in schema order, then aliases and
    unions in definition order, then `decode` and `encode`."""
    objects, enums, unions, aliases = (_macros(env, name) for name in ("object", "enum", "union", "alias"))
    built = [o.name for o in context["objects"] if not o.base]
    builder_imports = sorted(
        [naming.builder_name(name) for name in built] + [naming.builder_typevar_name(name) for name in built],
        key=import_sort_key,
    )
    models: Any = env.get_template("models.py.jinja").make_module({**context, "builder_imports": builder_imports})
    units = [models.head()]
    units += [
        enums.enum_class(t) if isinstance(t, EnumType) else objects.object_class(t)
        for t in context["module"].types
        if isinstance(t, (EnumType, ObjectType))
    ]
    units += [
        aliases.alias_definition(t) if isinstance(t, Alias) else unions.union_alias(t)
        for t in context["aliases_and_unions"]
    ]
    units.append(models.tail())
    return [str(unit) for unit in units]


def builder_units(env: jinja2.Environment, context: dict[str, Any]) -> list[str]:
    """_builders.py as top-level units: the head with every TypeVar, then each class's builder."""
    builders = _macros(env, "builder")
    units = [str(builders.builder_class(o)) for o in context["objects"] if not o.base]
    # Each TypeVar names its class in a string (`bound="ToolCallUpdate"`), which tokens do not show.
    built = [o.name for o in context["objects"] if not o.base]
    imports = sorted(set(names_in_code(units, context["imported"])).union(built), key=import_sort_key)
    builders_module: Any = env.get_template("builders.py.jinja").make_module(
        {**context, "builders_module_imports": imports}
    )
    return [str(builders_module.head()), *units]


def codec_units(env: jinja2.Environment, module: Module, queries: Queries, context: dict[str, Any]) -> list[str]:
    """_codec.py as top-level units: container decoders, then the codec of each enum,
    class, alias and union, then the tables of `decode`."""
    objects, enums, unions, aliases, decoders = (
        _macros(env, name) for name in ("object", "enum", "union", "alias", "decode")
    )
    codec: Any = env.get_template("codec.py.jinja").make_module(context)
    units = [decoders.container_decoder(t) for t in containers(module, queries)]
    units += [enums.enum_codec(e) for e in context["enums"]]
    units += [objects.object_codec(o) for o in context["objects"]]
    units += [
        aliases.alias_codec(t) if isinstance(t, Alias) else unions.union_codec(t) for t in context["aliases_and_unions"]
    ]
    units.append(codec.tail())
    body = [str(unit) for unit in units]
    imports = names_in_code(body, context["imported"])
    codec_module: Any = env.get_template("codec.py.jinja").make_module({**context, "codec_imports": imports})
    return [str(codec_module.head()), *body]


def render_package(module: Module, versions: dict[str, str]) -> dict[str, list[str]]:
    """File name → the file's unformatted source, as a list of top-level units
    (formatted one by one, joined by two blank lines)."""
    queries = Queries(module)
    env = environment(queries)
    context = base_context(module, queries, versions)
    files = {
        "__init__.py": [env.get_template("init.py.jinja").render(context)],
        "_runtime.py": [env.get_template("runtime.py.jinja").render(context)],
        "models.py": model_units(env, context),
        "_codec.py": codec_units(env, module, queries, context),
        "py.typed": [],
    }
    if context["builders"]:
        files["_builders.py"] = builder_units(env, context)
    if context["upserts"]:
        files["upserts.py"] = [env.get_template("upserts.py.jinja").render(context)]
    if context["rpc"]:
        files["rpc.py"] = [env.get_template("rpc.py.jinja").render(rpc_context(module, queries, context))]
    if context["connection_exported"]:
        template = env.get_template("connection.py.jinja")
        files["connection.py"] = [template.render(connection_context(module, queries, context))]
    return files


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


def rpc_code_enum(module: Module, queries: Queries) -> str | None:
    """The enum of the error object's `code`, when the schema has one."""
    error = queries.types.get(module.rpc_error or "")
    if not isinstance(error, ObjectType):
        return None
    code = next((queries.resolve(item.type) for item in error.fields if item.wire_name == "code"), None)
    return code.name if isinstance(code, Ref) and isinstance(queries.types[code.name], EnumType) else None


def connection_names(module: Module) -> tuple[str, ...]:
    """The public names of connection.py, or () when the schema has no connection
    (no JSON-RPC envelopes, no `$/cancel_request`, or no agent or client methods)."""
    rpc = bool(module.methods and module.request_id and module.rpc_error)
    sides = {method.side for method in module.methods}
    if not rpc or CANCEL_METHOD not in {method.name for method in module.methods} or not set(PEER_SIDES) <= sides:
        return ()
    return tuple(sorted(naming.CONNECTION_NAMES, key=sort_key))


def connection_context(module: Module, queries: Queries, context: dict[str, Any]) -> dict[str, Any]:
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
    return {
        **context,
        "peers": [(agent, client), (client, agent)],
        "shared_side": SHARED_SIDE,
        "shared_methods": sorted(m.name for m in shared),
        "cancel_method": CANCEL_METHOD,
        "cancel_constant": cancel.constant,
        "cancel_params": cancel.params,
        "cancel_field": cancel_field,
        "initialize": wires[INITIALIZE_METHOD].constant if INITIALIZE_METHOD in wires else None,
        "error_constructors": constructors,
        "errors": {c.member: c.python_name for c in constructors},
        "code_enum": code_enum,
        "rpc_error": module.rpc_error,
        "request_id": module.request_id,
        "connection_imports": sorted(names | {cancel.params}, key=import_sort_key),
    }
