"""IR → Python source, through the Jinja2 templates in `templates/`.

The templates lay out text; what they print about each type comes from `pytypes`
(type expressions) and `pynamed` (named types), what the rpc, connection and upserts
modules need from `contexts`, and literals and docstrings from `literals`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from generator import runtime, static
from generator.emit.contexts import (
    PackageContext,
    UpsertContext,
    import_sort_key,
    names_in_code,
    rpc_context,
    sort_key,
    upsert_context,
    variables,
)
from generator.emit.exprs import expressions, helper_name
from generator.emit.helpers import helper_names, helpers_context
from generator.emit.imports import check_imports, imported_names
from generator.emit.layout import annotation_operands, bracket_layout
from generator.emit.literals import comment_safe, docstring, json_literal, python_literal, string_block
from generator.emit.peers import TRANSPORTS_MODULE, connection_context, connection_names, transport_names
from generator.emit.pynamed import NamedQueries
from generator.emit.pytypes import Queries
from generator.emit.relink import relink
from generator.emit.session import session_context
from generator.emit.units import LINE_LENGTH, split_units
from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.model import Alias, EnumType, Module, ObjectType, Ref, TypeExpr, UnionType
from generator.ir.naming import RPC_NAMES, SESSION_NAMES


def _templates() -> Path:
    """The templates: `generator/templates/` in an installed wheel (pyproject.toml maps the
    top-level `templates/` there), else the source tree's top-level `templates/`."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"


TEMPLATES = _templates()


def natural_sorted(names: list[str]) -> list[str]:
    """`names` in ruff's natural order (code points, digit runs as numbers), as `__slots__` are kept."""
    return sorted(names, key=lambda name: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)])


def block(text: str, width: int) -> str:
    """A macro's statements placed at `width` spaces (the first line is placed by the caller)."""
    return jinja2.filters.do_indent(str(text).strip("\n"), width)


def containers(module: Module, queries: Queries) -> list[TypeExpr]:
    """Every type expression with a decoder function of its own (lists, maps), once each, in order of first use."""
    found: dict[str, TypeExpr] = {}
    for named in module.types:
        for expr in expressions(named):
            if queries.container(expr) is not None:
                name = helper_name(expr)
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
        for expr in expressions(named):
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
    """The templates' environment: literals as filters, and the views of `pytypes` and
    `pynamed` as filters (`t | decoding`) and functions (`is_recursive(u)`)."""
    env = jinja2.Environment(
        bytecode_cache=_COMPILED,
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    named = NamedQueries(queries)
    env.filters.update(
        py=python_literal,
        json_literal=json_literal,
        docstring=docstring,
        string_block=string_block,
        comment_safe=comment_safe,
        block=block,
        natural_sorted=natural_sorted,
        py_type=queries.annotation,
        field=queries.field,
        decoding=queries.decoding,
        encoding=queries.encoding,
        container=queries.container,
        is_named=queries.is_named,
        enum_member=queries.enum_member,
        enum_codec=named.enum_codec,
    )
    env.globals.update(
        fits=lambda line: len(line) <= LINE_LENGTH,
        bracket_layout=bracket_layout,
        annotation_operands=annotation_operands,
        bases=named.bases,
        shares_object=named.shares_object,
        is_recursive=named.is_recursive,
        variant_decoder=named.variant_decoder,
        holds_models_only=named.holds_models_only,
        wire_keys=named.wire_keys,
        unproven_keys=named.unproven_keys,
        proven_keys=named.proven_keys,
        variant_proven_keys=named.variant_proven_keys,
        required_only_path=named.required_only_path,
        untagged_descriptions=named.untagged_descriptions,
        tag_expectation=named.tag_expectation,
    )
    return env


def base_context(
    module: Module,
    queries: Queries,
    versions: dict[str, str],
    objects: list[ObjectType],
    upserts: UpsertContext,
    session: bool,
) -> PackageContext:
    """What every template may use: the module, its types in definition order (`objects` in
    class order), the public names (the merge functions of `upserts`, the session names if
    the package has `session`)."""
    aliases_and_unions = definition_order(module)
    rpc = module.has_rpc
    defs_names = {python: name for name, python in module.public_names}
    connection = connection_names(module)
    transports = transport_names(module)
    merge_functions = upserts.merge_functions
    names = [named.name for named in module.types]
    runtime_names = ["DecodeError", "MaybeUndefined", "Model", "Salvage", "UNDEFINED", "Undefined", "decode", "encode"]
    return PackageContext(
        module=module,
        versions=versions,
        objects=objects,
        enums=[named for named in module.types if isinstance(named, EnumType)],
        aliases_and_unions=aliases_and_unions,
        # `decode` takes a `$defs` type by its `$defs` name, an inline one by its Python name.
        decoder_keys=[(defs_names.get(name, name), name) for name in names],
        exported=sorted(names, key=sort_key),
        imported=sorted(names, key=import_sort_key),
        public=public_groups(
            module,
            connection=[*connection, *transports],
            helpers=list(helper_names(module)),
            session=list(SESSION_NAMES) if session else [],
            upserts=["merge", *merge_functions] if merge_functions else [],
            runtime=runtime_names,
            rpc=list(RPC_NAMES) if rpc else [],
        ),
        builders=any(not obj.base for obj in objects),
        rpc=rpc,
        rpc_imported=sorted(RPC_NAMES, key=import_sort_key),
        connection_exported=list(connection),
        connection_imported=sorted(connection, key=import_sort_key),
        transports_imported=sorted(transports, key=import_sort_key),
        session_exported=list(SESSION_NAMES) if session else [],
        helpers_exported=list(helper_names(module)),
        uses={
            "field": any(obj.keep_unknown == "keep" and not obj.base for obj in objects),
            "ClassVar": any(obj.tag for obj in objects),
            "Literal": any(obj.tag or any(queries.closed_enum(item.type) for item in obj.fields) for obj in objects),
            "Final": True,
            "TypeAlias": bool(aliases_and_unions),
        },
    )


def public_groups(
    module: Module,
    *,
    connection: list[str],
    helpers: list[str],
    session: list[str],
    upserts: list[str],
    runtime: list[str],
    rpc: list[str],
) -> list[tuple[str, list[str]]]:
    """The names `__init__` re-exports, in groups a reader takes in order (what to start from
    first), each with the comment that introduces it; empty groups left out."""
    messages = {name for method in module.methods for name in (method.params, method.result) if name}
    types = [named.name for named in module.types]
    groups = [
        ("Agents and clients: the interfaces to implement, their connections and transports", connection),
        ("An agent's helpers: what it says in a session, in its own words", helpers),
        ("A client's view of a session: its updates folded into one state", session),
        ("Upserts: merge a patch into what was reported before", upserts),
        ("What every type uses: absent values, decoding errors, the codec", runtime),
        ("The params and results of every JSON-RPC method", [name for name in types if name in messages]),
        ("Every other type of the schema (also in `.models`)", [name for name in types if name not in messages]),
        ("JSON-RPC messages, routes and method names (also in `.rpc`)", rpc),
    ]
    return [(comment, sorted(names, key=sort_key)) for comment, names in groups if names]


def _macros(env: jinja2.Environment, name: str) -> Any:
    return env.get_template(f"macros/{name}.jinja").module  # macros are attributes made at run time


def model_units(env: jinja2.Environment, context: PackageContext, base: dict[str, Any]) -> list[str]:
    """models.py as top-level units: enums and classes in schema order, then aliases and
    unions in definition order (`decode` and `encode` are imported from `_decode`)."""
    objects, enums, unions, aliases = (_macros(env, name) for name in ("object", "enum", "union", "alias"))
    built = [o.name for o in context.objects if not o.base]
    builder_imports = sorted(
        [naming.builder_name(name) for name in built] + [naming.builder_typevar_name(name) for name in built],
        key=import_sort_key,
    )
    units = [
        enums.enum_class(t) if isinstance(t, EnumType) else objects.object_class(t)
        for t in context.module.types
        if isinstance(t, (EnumType, ObjectType))
    ]
    units += [
        aliases.alias_definition(t) if isinstance(t, Alias) else unions.union_alias(t)
        for t in context.aliases_and_unions
    ]
    body = [str(unit) for unit in units]
    # the head imports what the rest uses: a module of its own, made once the rest is rendered
    with_imports: Any = env.get_template("models.py.jinja").make_module(
        {
            **base,
            "builder_imports": builder_imports,
            "uses_runtime_module": bool(names_in_code(body, ["_rt"])),
            **_standard_imports(body),
        }
    )
    return [str(with_imports.head()), *body]


def _standard_imports(units: list[str]) -> dict[str, list[str]]:
    """The modules (`import os`) and the `collections.abc` names that `units` use, of those
    the signatures of constructors and builders may need: what their module's head imports."""
    return {
        "module_imports": names_in_code(units, ["builtins", "os"]),
        "abc_imports": names_in_code(units, ["Iterable", "Mapping"]),
    }


def builder_units(env: jinja2.Environment, context: PackageContext, base: dict[str, Any]) -> list[str]:
    """_builders.py as top-level units: the head with every TypeVar, then each class's builder."""
    builders = _macros(env, "builder")
    built = [o for o in context.objects if not o.base]
    units = [str(builders.builder_class(o)) for o in built]
    # Each TypeVar names its class in a string (`bound="ToolCallUpdate"`), which tokens do not show.
    imports = sorted(set(names_in_code(units, context.imported)).union(o.name for o in built), key=import_sort_key)
    builders_module: Any = env.get_template("builders.py.jinja").make_module(
        {**base, "builders_module_imports": imports, **_standard_imports(units)}
    )
    return [str(builders_module.head()), *units]


def codec_units(env: jinja2.Environment, queries: Queries, context: PackageContext, base: dict[str, Any]) -> list[str]:
    """_codec.py as top-level units: container decoders, then the codec of each enum,
    class, alias and union, then the tables of `decode`."""
    objects, enums, unions, aliases, decoders = (
        _macros(env, name) for name in ("object", "enum", "union", "alias", "decode")
    )
    codec: Any = env.get_template("codec.py.jinja").make_module(base)
    units = [decoders.container_decoder(t) for t in containers(context.module, queries)]
    units += [enums.enum_codec(e) for e in context.enums]
    units += [objects.object_codec(o) for o in context.objects]
    units += [
        aliases.alias_codec(t) if isinstance(t, Alias) else unions.union_codec(t) for t in context.aliases_and_unions
    ]
    units.append(codec.tail())
    body = [str(unit) for unit in units]
    imports = names_in_code(body, context.imported)
    codec_module: Any = env.get_template("codec.py.jinja").make_module({**base, "codec_imports": imports})
    return [str(codec_module.head()), *body]


# The static module of `decode` and `encode`, which models.py re-exports.
DECODE_MODULE = "_decode.py"
# The static module of the JSON-RPC messages and functions, copied in as rpc.py over the schema's
# method names, routes and id and error types, which templates/routes.py.jinja renders into _routes.py.
RPC_MODULE = "rpc.py"
# The static module of MCP over ACP, copied in as mcp.py: a package whose schema has every name it
# imports from `.models` (the typed `mcp/message` messages) gets MCP over ACP.
MCP_MODULE = "mcp.py"


PROXY_METHODS = frozenset({"proxy/initialize", "proxy/successor"})
"""The methods of proxy chains: a package whose schema has them gets the conductor."""
# The static module of `serve_proxy` and `run_proxy`, which proxy.py re-exports: checked against
# the names of connection.py and of proxy.py (their `__all__`) it imports.
SERVE_PROXY_MODULE = "_serve_proxy.py"


def proxy_units(env: jinja2.Environment, module: Module, queries: Queries, base: dict[str, Any]) -> list[str]:
    """proxy.py: the forwarding agent and client, one method for each of the two peers' methods."""
    connection = connection_context(module, queries)
    agent, client = connection.peers[0]
    names = {m.params for m in (*agent.methods, *client.methods)} | {
        m.result for m in (*agent.methods, *client.methods) if m.result
    }
    context = {**base, "peers": connection.peers, "proxy_imports": sorted(names, key=import_sort_key)}
    return split_units(env.get_template("proxy.py.jinja").render(context))


def static_units(env: jinja2.Environment, name: str, base: dict[str, Any], source: str | None = None) -> list[str]:
    """The units of the static module `name` of `generator/runtime/` (or the text `source`),
    copied in under the header."""
    header = _macros(env, "header").header(base["module"], base["versions"])
    return split_units(f"{header}\n{runtime.source(name) if source is None else source}")


def render_package(module: Module, versions: dict[str, str]) -> dict[str, list[str]]:
    """File name → the file's unformatted source, as a list of top-level units
    (formatted one by one, joined by two blank lines): the units the macros render
    for models, codec and builders, and `units.split_units` of a template that
    renders a whole file."""
    queries = Queries(module)
    env = environment(queries)
    objects = class_order(module)
    upserts = upsert_context(objects, queries)
    session = session_context(module, objects) if upserts.upserts else None
    context = base_context(module, queries, versions, objects, upserts, session is not None)
    base = variables(context, upserts)
    files = {
        "_runtime.py": static_units(env, "_runtime.py", base),
        DECODE_MODULE: static_units(env, DECODE_MODULE, base, static.source(DECODE_MODULE)),
        "models.py": model_units(env, context, base),
        "_codec.py": codec_units(env, queries, context, base),
        "py.typed": [],
    }
    if context.builders:
        files["_builders.py"] = builder_units(env, context, base)
    if upserts.upserts:
        files["upserts.py"] = split_units(env.get_template("upserts.py.jinja").render(base))
    if session is not None:
        files["_session.py"] = static_units(env, "_session.py", base)
        files["session.py"] = split_units(
            env.get_template("session.py.jinja").render(variables(context, upserts, session))
        )
    if context.rpc:
        files["_jsonrpc.py"] = static_units(env, "_jsonrpc.py", base)
        template = env.get_template("routes.py.jinja")
        files["_routes.py"] = split_units(template.render(variables(context, upserts, rpc_context(module))))
        files[RPC_MODULE] = static_units(env, RPC_MODULE, base, static.source(RPC_MODULE))
    if context.connection_exported:
        files["_connection.py"] = static_units(env, "_connection.py", base)
        files["_router.py"] = static_units(env, "_router.py", base)
        files["_observe.py"] = static_units(env, "_observe.py", base)
        files["_otel.py"] = static_units(env, "_otel.py", base)
        files["_memory.py"] = static_units(env, "_memory.py", base)
        files["_cookies.py"] = static_units(env, "_cookies.py", base)
        files["_websocket.py"] = static_units(env, "_websocket.py", base)
        files["_http_server.py"] = static_units(env, "_http_server.py", base)
        files["_http_client.py"] = static_units(env, "_http_client.py", base)
        template = env.get_template("connection.py.jinja")
        files["connection.py"] = split_units(
            template.render(variables(context, upserts, connection_context(module, queries)))
        )
        transports = static.source(TRANSPORTS_MODULE)
        check_imports(
            f"generator/static/{TRANSPORTS_MODULE}",
            transports,
            context.connection_exported,
            module.schema_path,
            "connection",
        )
        files[TRANSPORTS_MODULE] = static_units(env, TRANSPORTS_MODULE, base, transports)
        mcp = static.source(MCP_MODULE)
        if queries.types.keys() >= set(imported_names(mcp)):
            files["_mcp.py"] = static_units(env, "_mcp.py", base)
            files[MCP_MODULE] = static_units(env, MCP_MODULE, base, mcp)
        if {method.name for method in module.methods} >= PROXY_METHODS:
            files["conductor.py"] = static_units(env, "conductor.py", base)
            files["_proxy.py"] = static_units(env, "_proxy.py", base)
            files["proxy.py"] = proxy_units(env, module, queries, base)
            serving = static.source(SERVE_PROXY_MODULE)
            proxy_names = static.exported_names("\n\n".join(files["proxy.py"]))
            for imported, names in (("connection", context.connection_exported), ("proxy", proxy_names)):
                check_imports(f"generator/static/{SERVE_PROXY_MODULE}", serving, names, module.schema_path, imported)
            files[SERVE_PROXY_MODULE] = static_units(env, SERVE_PROXY_MODULE, base, serving)
        helpers = helpers_context(module, queries)
        if helpers is not None:
            for file_name, static_name in helpers.modules.items():
                files[file_name] = static_units(env, file_name, base, static.source(static_name))
            if helpers.stop_reasons:
                template = env.get_template("stop_reasons.py.jinja")
                files["_stop_reasons.py"] = split_units(template.render(variables(context, upserts, helpers)))
    # `import package` runs _runtime.py and models.py; the other modules wait for first use.
    lazy_modules = [name.removesuffix(".py") for name in sorted(files) if name.endswith(".py")]
    imported_by_others = (
        "_runtime",
        "_decode",
        "_jsonrpc",
        "_routes",
        "_connection",
        "_router",
        "_observe",
        "_otel",
        "_memory",
        "_cookies",
        "_session",
        "_agent",
        "_config_options",
        "_stop_reasons",
        "_websocket",
        "_http_server",
        "_http_client",
        "_mcp",
        "_proxy",
        "_serve_proxy",
        "mcp",  # needs the `mcp` extra: imported by name (`from acp_v2.mcp import ...`), never as an attribute
        "conductor",  # run (`python -m acp_v2.conductor`) or imported by name, as `proxy`
        "proxy",
        "models",
    )
    lazy_modules = [name for name in lazy_modules if name not in imported_by_others]
    init = env.get_template("init.py.jinja").render({**base, "lazy_modules": lazy_modules})
    return {"__init__.py": split_units(init), **files}


# The runtime module each package keeps a copy of when packages share a runtime: the conductor is
# a program, run as `python -m <package>.conductor`; its copy imports the shared modules.
OWN_RUNTIME_MODULES = frozenset({"conductor.py"})


def shared_runtime_modules() -> frozenset[str]:
    """The file names of the modules of `generator/runtime/` that packages generated together
    share (`runtime-package`): all of them but `OWN_RUNTIME_MODULES`."""
    names = {entry.name for entry in resources.files(runtime.__name__).iterdir() if entry.name.endswith(".py")}
    return frozenset(names - {"__init__.py"} - OWN_RUNTIME_MODULES)


def without_runtime(files: dict[str, list[str]], package: str, runtime_package: str) -> dict[str, list[str]]:
    """The files of `package` (as `render_package` gives them) for a package that shares the
    runtime package `runtime_package`: without the shared modules, and every import of them
    made an import from `runtime_package`."""
    shared = shared_runtime_modules()
    modules = {name.removesuffix(".py") for name in shared}
    return {
        name: [relink(unit, runtime_package, modules, f"{package}/{name}") for unit in units]
        if name.endswith(".py")
        else units
        for name, units in files.items()
        if name not in shared
    }


def render_runtime(
    module: Module, versions: dict[str, str], modules: Collection[str], packages: list[str]
) -> dict[str, list[str]]:
    """The runtime package the `packages` generated together share: the `modules` of
    `generator/runtime/` they use (file names), an `__init__.py` that says so, and `py.typed`.
    Its headers are those of `module`, the first package's."""
    env = environment(Queries(module))
    base = {"module": module, "versions": versions}
    files = {name: static_units(env, name, base) for name in sorted(modules)}
    context = {**base, "packages": packages}
    return {
        "__init__.py": split_units(env.get_template("runtime_init.py.jinja").render(context)),
        **files,
        "py.typed": [],
    }
