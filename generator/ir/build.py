"""The one place that interprets JSON Schema: schema nodes → IR.

`shapes` builds the named types (with `objects`, `unions`, `scalars`, `kinds` and the
shared `context`), `upserts` adds the merge rules of the configuration, and `routes`
finds the JSON-RPC methods the schema's envelopes carry.
"""

from __future__ import annotations

from generator.config import CONFIG, SchemaOptions
from generator.errors import GenerationError
from generator.ir import routes, upserts
from generator.ir.model import Alias, Module
from generator.ir.shapes import Shapes
from generator.schema.load import Schema


def build_module(schema: Schema, package: str, schema_path: str, options: SchemaOptions | None = None) -> Module:
    options = options or SchemaOptions()
    shapes = Shapes(schema)
    types = {named.name: named for named in shapes.build()}
    python = shapes.context.python_names  # `$defs` name → Python name; the config speaks `$defs` names
    types = upserts.with_upserts(types, python, options.upserts)
    methods, unrouted = routes.methods(schema, types, python)
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
        warnings=tuple(upserts.drift_warnings(types, schema, options, python)) + tuple(unrouted),
        methods=methods,
        request_id=_python_name(python, routes.envelope_type(schema, "id", {"id", "method", "params"})),
        rpc_error=_python_name(python, routes.envelope_type(schema, "error", {"id", "error"})),
        batches=routes.accepts_batches(schema),
    )


def _python_name(python_names: dict[str, str], name: str | None) -> str | None:
    return None if name is None else python_names.get(name, name)
