"""Merge rules from [tool.acp-codegen.upserts], and the warning for upsert types without them."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from generator.config import SchemaOptions, UpsertRule, load_config
from generator.errors import GenerationError
from generator.ir import upserts
from generator.ir.model import Upsert
from generator.pipeline import build_ir
from tests.helpers import ROOT, V2_SCHEMA, ir_of

SCHEMA = {
    "$defs": {
        "Update": {
            "type": "object",
            "description": "Fields follow patch semantics.",
            "properties": {
                "id": {"type": "string"},
                "status": {"type": ["string", "null"]},
                "items": {"type": ["array", "null"], "items": {"type": "string"}},
                "_meta": {"type": "object", "additionalProperties": True},
                "extra": {"type": "object", "additionalProperties": True},
            },
            "required": ["id"],
        },
        "Name": {"type": "string"},
    }
}


def rule(**rows: object) -> UpsertRule:
    empty: dict[str, object] = {"identity": (), "start": {}, "null_resets": (), "empty_clears": (), "snapshot": ()}
    return UpsertRule(**{**empty, **rows})


@pytest.fixture(scope="module")
def types(tmp_path_factory):
    module = ir_of(SCHEMA, tmp_path_factory.mktemp("upserts"))
    return {named.name: named for named in module.types}


def test_a_row_becomes_the_merge_rules_in_attribute_names(types):
    row = rule(identity=("id",), start={"status": "new"}, null_resets=("status",), empty_clears=("items",))
    named = upserts.with_upsert(types["Update"], "Update", replace(row, snapshot=("_meta",)))
    assert named.upsert == Upsert(
        function="merge_update",
        identity=("id",),
        start=(("status", "new"),),
        null_resets=("status",),
        empty_clears=("items",),
        snapshot=("meta",),
        by_key=("extra",),
    )


@pytest.mark.parametrize(
    ("name", "row", "where", "message"),
    [
        ("Name", rule(), "upserts.Name", "Name is not an object type of the schema"),
        ("Update", rule(identity=("nope",)), "upserts.Update.identity", "Update has no property 'nope'"),
        ("Update", rule(identity=("status",)), "upserts.Update.identity", "identity property 'status' is not"),
        ("Update", rule(start={"status": [1]}), "upserts.Update.start.status", "a start value must be a scalar"),
        ("Update", rule(null_resets=("status",)), "upserts.Update.null-resets", "resets to its start value"),
    ],
)
def test_a_row_the_type_cannot_take_is_an_error_at_the_row(types, name, row, where, message):
    with pytest.raises(GenerationError, match=message) as caught:
        upserts.with_upsert(types[name], name, row)
    assert caught.value.pointer == f"pyproject.toml [tool.acp-codegen] {where}"


def test_two_rows_whose_merge_functions_meet_are_an_error(types):
    both = {name: replace(types["Update"], name=name) for name in ("HTTPServer", "HttpServer")}
    with pytest.raises(GenerationError, match="its merge function merge_http_server is also that of HTTPServer"):
        upserts.with_upserts(both, {}, {"HTTPServer": rule(), "HttpServer": rule()})


def test_a_description_that_speaks_of_upserts_warns_unless_a_row_or_not_upserts_names_it(tmp_path):
    (schema := tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (warning,) = build_ir(schema, "pkg", ROOT).warnings
    assert warning.startswith("Update (#/$defs/Update): its description mentions upserts or patch semantics")
    assert build_ir(schema, "pkg", ROOT, SchemaOptions(upserts={"Update": rule(identity=("id",))})).warnings == ()
    assert build_ir(schema, "pkg", ROOT, SchemaOptions(not_upserts=("Update",))).warnings == ()


def test_generate_warns_about_upserts_missing_from_the_configuration():
    options = load_config(ROOT).options
    without = replace(options, upserts={k: v for k, v in options.upserts.items() if k != "TerminalUpdate"})
    warnings = build_ir(V2_SCHEMA, "acp_v2", ROOT, without).warnings
    assert len(warnings) == 1 and warnings[0].startswith("TerminalUpdate (#/$defs/TerminalUpdate)")
    assert build_ir(V2_SCHEMA, "acp_v2", ROOT, options).warnings == ()
