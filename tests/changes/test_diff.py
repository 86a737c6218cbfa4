"""The API changelog: each kind of change on a small old/new schema pair, the
output formats, `diff` on the command line, and the changelog `update-schema` keeps."""

from __future__ import annotations

import datetime
import json
from dataclasses import replace
from pathlib import Path

import pytest

from generator import cli
from generator.changes.changelog import format_markdown, format_text
from generator.changes.diff import Change, diff_modules
from generator.ir.model import Module
from generator.schema import vendor
from tests.support.helpers import FIXTURES, ir_of, run_cli

CASES = FIXTURES / "diff"


def case(name: str) -> dict:
    """A fixture: {"old": schema, "new": schema}."""
    return json.loads((CASES / f"{name}.json").read_text())


def schema_files(name: str, tmp_path: Path) -> tuple[str, str]:
    """The old and new schema of a case written to files, for the command line."""
    paths = []
    for side, schema in case(name).items():
        path = tmp_path / f"{name}-{side}.json"
        path.write_text(json.dumps(schema))
        paths.append(str(path))
    return paths[0], paths[1]


def modules(name: str, tmp_path: Path) -> tuple[Module, Module]:
    old, new = schema_files(name, tmp_path)
    return ir_of(Path(old), tmp_path), ir_of(Path(new), tmp_path)


def entries(changes: list[Change]) -> list[tuple[str, bool, str]]:
    return [(change.type, change.breaking, change.message) for change in changes]


def changes_in(name: str, tmp_path: Path) -> list[tuple[str, bool, str]]:
    return entries(diff_modules(*modules(name, tmp_path)))


# --- each kind of change --------------------------------------------------------


def test_types_added_removed_renamed_and_changed_in_kind(tmp_path):
    # IdNum → IdNumber keeps its pointer: one rename, and the union's Ref to it is no change.
    assert changes_in("types", tmp_path) == [
        ("Fresh", False, "enum Fresh added"),
        ("Gone", True, "alias Gone removed"),
        ("IdNumber", True, "object renamed IdNum → IdNumber (pointer #/$defs/Id/anyOf/0)"),
        ("Shifty", True, "changed from object to union"),
    ]


def test_fields_added_removed_and_retyped(tmp_path):
    assert changes_in("fields", tmp_path) == [
        ("Item", True, "field title (wire 'title') removed"),
        ("Item", True, "field size (wire 'size') type int → str"),
        ("Item", True, "field owner (wire 'owner') type A → B"),
        ("Item", True, "field tags (wire 'tags') type list[str] → str"),
        ("Item", False, "field note (wire 'note') added (optional)"),
        ("Item", True, "field item_id (wire 'itemId') added (required)"),
    ]


def test_a_field_whose_python_name_changes_is_one_rename(tmp_path):
    # Only a naming-rule change renames a field whose wire name stays: simulate one on the IR.
    old, _ = modules("fields", tmp_path)
    item = old.by_name()["Item"]
    fields = tuple(replace(f, name="size_value") if f.wire_name == "size" else f for f in item.fields)
    new = replace(old, types=tuple(replace(item, fields=fields) if t is item else t for t in old.types))
    assert entries(diff_modules(old, new)) == [("Item", True, "field renamed size → size_value (wire 'size')")]


def test_narrowed_bounds_break_and_widened_ones_do_not(tmp_path):
    # `counter` goes from format int64 to int: the same bounds, so no change.
    assert changes_in("bounds", tmp_path) == [
        ("Limits", True, "field narrowed (wire 'narrowed') bounds 0..4294967295 → 0..65535 (narrowed)"),
        ("Limits", False, "field widened (wire 'widened') bounds 0..255 → 0..65535 (widened)"),
        ("Limits", False, "field name (wire 'name') bounds length >= 1 → none (widened)"),
        ("Limits", False, "field ports (wire 'ports') type list[int(0..255)] → list[int(0..65535)]"),
        ("Limits", True, "field tags (wire 'tags') type list[str] → list[str](min 1)"),
    ]


def test_presence_nullability_and_decoding_hints(tmp_path):
    assert changes_in("presence", tmp_path) == [
        ("Item", True, "field a (wire 'a') now required"),
        ("Item", False, "field b (wire 'b') now optional"),
        ("Item", True, "field c (wire 'c') now nullable: readers may receive None"),
        ("Item", True, "field d (wire 'd') no longer nullable: None is rejected"),
        ("Item", True, "field e (wire 'e') no longer decodes an invalid value to its default"),
        ("Item", False, "field f (wire 'f') now decodes null to its default"),
    ]


def test_enum_members_and_openness(tmp_path):
    assert changes_in("enums", tmp_path) == [
        ("Code", True, "member renamed PARSE_ERROR → SYNTAX_ERROR (-32700)"),
        ("Color", True, "member BLUE ('blue') removed"),
        ("Color", False, "member GREEN ('green') added"),
        ("Level", True, "enum now open: readers may receive values that are not members"),
        ("Mode", True, "enum now closed: values that are not members are rejected"),
        ("Size", True, "member LARGE ('large') added: the enum was closed, old code may not handle it"),
    ]


def test_union_variants_and_openness(tmp_path):
    # ShapeTriangle takes ShapeSquare's place (same pointer) but another tag: no rename.
    assert changes_in("unions", tmp_path) == [
        ("Door", True, "union now open: readers may receive unknown variants"),
        ("DoorOther", False, "object DoorOther added"),
        ("Gate", True, "union now closed: unknown variants are rejected"),
        ("GateOther", True, "object GateOther removed"),
        ("Id", True, "variant int removed"),
        ("Id", True, "variant bool added: the union was closed, old code may not handle it"),
        ("Pet", True, "variant 'dog' (PetDog) added: the union was closed, old code may not handle it"),
        ("PetDog", False, "object PetDog added"),
        ("Shape", True, "variant 'square' (ShapeSquare) removed"),
        ("Shape", False, "variant 'triangle' (ShapeTriangle) added"),
        ("ShapeSquare", True, "object ShapeSquare removed"),
        ("ShapeTriangle", False, "object ShapeTriangle added"),
    ]


def test_method_routes(tmp_path):
    assert changes_in("routes", tmp_path) == [
        ("Echo", True, "route changed: method echo, agent side → method echo, client side"),
        ("Hello", False, "object Hello (method hello, agent side) added"),
        ("Ping", True, "route removed: method ping, agent side"),
        ("Pong", False, "route added: method pong, client side"),
    ]


def test_object_tags_base_classes_and_unknown_properties(tmp_path):
    assert changes_in("objects", tmp_path) == [
        ("AnimalCat", True, "tag kind='cat' → type='cat'"),
        ("FigureCircle", False, "now subclasses Circle"),
        ("Loose", False, "unknown properties now kept in unknown_properties (were rejected)"),
        ("ShapeCircle", True, "no longer subclasses Circle"),
        ("Strict", True, "unknown properties now rejected (were kept in unknown_properties)"),
    ]


def test_alias_targets(tmp_path):
    assert changes_in("aliases", tmp_path) == [
        ("Label", True, "target type str → str | None"),
        ("Name", True, "target type str → int"),
        ("Port", False, "target bounds 0..255 → 0..65535 (widened)"),
    ]


# --- output formats --------------------------------------------------------------


def test_text_groups_by_type_and_ends_with_the_counts(tmp_path):
    assert format_text(diff_modules(*modules("routes", tmp_path))) == (
        "Echo\n"
        "  BREAKING: route changed: method echo, agent side → method echo, client side\n"
        "Hello\n"
        "  compatible: object Hello (method hello, agent side) added\n"
        "Ping\n"
        "  BREAKING: route removed: method ping, agent side\n"
        "Pong\n"
        "  compatible: route added: method pong, client side\n"
        "\n"
        "2 breaking, 2 compatible changes"
    )


def test_markdown_has_a_section_per_type(tmp_path):
    changes = diff_modules(*modules("routes", tmp_path))
    assert format_markdown(changes[:2]) == (
        "## Echo\n\n"
        "- **BREAKING** route changed: method echo, agent side → method echo, client side\n\n"
        "## Hello\n\n"
        "- object Hello (method hello, agent side) added\n\n"
        "1 breaking, 1 compatible changes"
    )
    assert format_markdown(changes[:1], level=3).startswith("### Echo\n\n- **BREAKING** route changed")


# --- the command line ---------------------------------------------------------------


def test_an_identical_pair_has_no_api_changes(tmp_path):
    old, _ = schema_files("routes", tmp_path)
    result = run_cli("diff", old, old, "--fail-on-breaking")
    assert (result.returncode, result.stdout, result.stderr) == (0, "no API changes\n", "")
    as_json = run_cli("diff", old, old, "--format", "json")
    assert json.loads(as_json.stdout) == {"changes": [], "breaking": 0, "compatible": 0}


def test_diff_works_in_a_directory_without_pyproject(tmp_path):
    old, new = schema_files("routes", tmp_path)
    (work := tmp_path / "elsewhere").mkdir()
    result = run_cli("diff", old, new, cwd=work)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith("2 breaking, 2 compatible changes\n")


def test_fail_on_breaking_exits_3_only_when_something_breaks(tmp_path):
    old, new = schema_files("routes", tmp_path)
    assert run_cli("diff", old, new).returncode == 0
    result = run_cli("diff", old, new, "--fail-on-breaking")
    assert result.returncode == 3
    assert result.stdout.endswith("2 breaking, 2 compatible changes\n")
    compatible = tmp_path / "compatible.json"
    compatible.write_text(json.dumps({"$defs": {**case("routes")["old"]["$defs"], "Extra": {"type": "string"}}}))
    assert run_cli("diff", old, str(compatible), "--fail-on-breaking").returncode == 0


def test_json_format(tmp_path):
    result = run_cli("diff", *schema_files("routes", tmp_path), "--format", "json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "changes": [
            {
                "type": "Echo",
                "kind": "route-changed",
                "breaking": True,
                "message": "route changed: method echo, agent side → method echo, client side",
            },
            {
                "type": "Hello",
                "kind": "type-added",
                "breaking": False,
                "message": "object Hello (method hello, agent side) added",
            },
            {
                "type": "Ping",
                "kind": "route-removed",
                "breaking": True,
                "message": "route removed: method ping, agent side",
            },
            {
                "type": "Pong",
                "kind": "route-added",
                "breaking": False,
                "message": "route added: method pong, client side",
            },
        ],
        "breaking": 2,
        "compatible": 2,
    }


def test_markdown_format_on_the_command_line(tmp_path):
    result = run_cli("diff", *schema_files("routes", tmp_path), "--format", "markdown")
    assert result.stdout.startswith("## Echo\n\n- **BREAKING** route changed: method echo")


def test_an_unreadable_schema_names_its_path(tmp_path):
    old, _ = schema_files("routes", tmp_path)
    result = run_cli("diff", old, str(tmp_path / "missing.json"))
    assert result.returncode == 2
    assert f"{tmp_path / 'missing.json'}: cannot read the schema" in result.stderr


# --- update-schema keeps schema/CHANGELOG.md ---------------------------------------

PYPROJECT = """\
[tool.acp-codegen]
schema = "schema/api.json"
lock = "schema/schema.lock.json"
out = "generated"
package = "api_pkg"
npm-package = "@example/api"
schema-files = ["schema/api.json"]
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A tiny project that vendors routes' old schema as 1.0.0; `npm pack` is replaced by `offer`."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "api.json").write_text(json.dumps(case("routes")["old"]))
    (tmp_path / "schema" / "schema.lock.json").write_text(json.dumps({"version": "1.0.0", "files": []}))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def offer(monkeypatch, schema: dict) -> None:
    """Make the next `update-schema` fetch `schema`."""

    def fetch(config, version, destination):
        license_file = vendor.license_path(config).relative_to(config.root)  # beside the lock
        for relative, text in (("schema/api.json", json.dumps(schema)), (license_file, "License.\n")):
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            (destination / relative).write_text(text)
        return {"package": config.npm_package, "version": version, "files": []}

    monkeypatch.setattr(vendor, "fetch", fetch)


def test_update_schema_prints_the_changelog_and_prepends_it(project, monkeypatch, capsys):
    today = datetime.date.today().isoformat()
    offer(monkeypatch, case("routes")["new"])
    assert cli.main(["update-schema", "1.1.0"]) == 0
    assert "Echo\n  BREAKING: route changed" in capsys.readouterr().out
    first = (
        f"## 1.0.0 → 1.1.0 ({today})\n\n"
        "### Echo\n\n- **BREAKING** route changed: method echo, agent side → method echo, client side\n\n"
        "### Hello\n\n- object Hello (method hello, agent side) added\n\n"
        "### Ping\n\n- **BREAKING** route removed: method ping, agent side\n\n"
        "### Pong\n\n- route added: method pong, client side\n\n"
        "2 breaking, 2 compatible changes\n"
    )
    assert (project / "schema" / "CHANGELOG.md").read_text() == first
    assert cli.main(["update-schema", "1.2.0"]) == 0
    newest = f"## 1.1.0 → 1.2.0 ({today})\n\nno API changes\n"
    assert (project / "schema" / "CHANGELOG.md").read_text() == newest + "\n" + first


def test_a_failed_update_changes_nothing(project, monkeypatch, capsys):
    assert cli.main(["generate", "--schema", "schema/api.json"]) == 0
    tracked = sorted(path for path in project.rglob("*") if path.is_file() and ".cache" not in path.parts)
    before = {path: path.read_bytes() for path in tracked}
    offer(monkeypatch, {"$defs": {"A": {"$ref": "#/$defs/Gone"}}})
    assert cli.main(["update-schema", "1.1.0"]) == 2
    assert "dangling $ref" in capsys.readouterr().err
    assert not (project / "schema" / "CHANGELOG.md").exists()
    after = sorted(path for path in project.rglob("*") if path.is_file() and ".cache" not in path.parts)
    assert after == tracked  # schema/, its lock and generated/ exactly as they were
    assert {path: path.read_bytes() for path in after} == before


def changes_between(old: dict, new: dict, tmp_path: Path) -> list[tuple[str, bool, str]]:
    return entries(diff_modules(ir_of(old, tmp_path), ir_of(new, tmp_path)))


def test_a_new_check_beside_a_type_is_breaking(tmp_path):
    variants = [{"type": "integer"}, {"type": "string"}]
    new = {"$defs": {"A": {"anyOf": variants, "maxLength": 3}}}
    assert changes_between({"$defs": {"A": {"anyOf": variants}}}, new, tmp_path) == [
        ("A", True, "checks none → (max_length=3)")
    ]


def test_any_of_becoming_one_of_is_breaking(tmp_path):
    variants = [{"type": "integer"}, {"type": "string"}]
    assert changes_between({"$defs": {"A": {"anyOf": variants}}}, {"$defs": {"A": {"oneOf": variants}}}, tmp_path) == [
        ("A", True, "now exactly one variant must match (oneOf)")
    ]
