"""Merge rules from [tool.acp-codegen.upserts], and the warning for upsert types without them."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from generator.config import SchemaOptions, UpsertRule, official_options
from generator.errors import GenerationError
from generator.ir import upserts
from generator.ir.model import ObjectType, Upsert
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA, ir_of

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
    assert (warning.code, warning.subject) == ("unconfigured-upsert", "Update")
    assert warning.text.startswith("Update (#/$defs/Update): its description mentions upserts or patch semantics")
    assert build_ir(schema, "pkg", ROOT, SchemaOptions(upserts={"Update": rule(identity=("id",))})).warnings == ()
    assert build_ir(schema, "pkg", ROOT, SchemaOptions(not_upserts=("Update",))).warnings == ()


def test_the_official_schema_gets_the_shipped_rules_and_a_projects_rows_override_them():
    shipped = build_ir(V2_SCHEMA, "acp_v2", ROOT)  # no configuration at all
    assert shipped.warnings == ()
    merged = {named.name: named.upsert for named in shipped.types if getattr(named, "upsert", None)}
    assert set(official_options().upserts) <= set(merged)
    tool_call = merged["ToolCallUpdate"]
    assert tool_call.identity == ("tool_call_id",) and ("status", "pending") in tool_call.start
    # a row of the project replaces the shipped row of its type whole
    own = SchemaOptions(upserts={"ToolCallUpdate": rule(identity=("toolCallId",))})
    overridden = build_ir(V2_SCHEMA, "acp_v2", ROOT, own).by_name()["ToolCallUpdate"]
    assert isinstance(overridden, ObjectType) and overridden.upsert is not None and overridden.upsert.start == ()
    # not-upserts drops a shipped row; without the shipped rules every upsert type warns
    dropped = build_ir(V2_SCHEMA, "acp_v2", ROOT, SchemaOptions(not_upserts=("TerminalUpdate",))).by_name()
    assert dropped["TerminalUpdate"].upsert is None  # type: ignore[union-attr]
    bare = build_ir(V2_SCHEMA, "acp_v2", ROOT, SchemaOptions(official_defaults=False)).warnings
    assert {warning.subject for warning in bare} >= {"ToolCallUpdate", "TerminalUpdate", "SessionMessageChunk"}


def test_a_schema_with_another_title_gets_none_of_the_shipped_rules(tmp_path):
    document = json.loads(V2_SCHEMA.read_text())
    (schema := tmp_path / "schema.json").write_text(json.dumps({**document, "title": "My Protocol"}))
    module = build_ir(schema, "pkg", ROOT)
    assert not any(getattr(named, "upsert", None) for named in module.types)
    assert "TerminalUpdate" in {warning.subject for warning in module.warnings}
