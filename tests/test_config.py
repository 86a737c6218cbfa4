"""`[tool.acp-codegen]`: optional, checked for contradictions, shareable between schemas."""

from __future__ import annotations

import re

import pytest

from generator.config import (
    Commands,
    Config,
    PackageConfig,
    SchemaOptions,
    UpsertRule,
    find_root,
    load_config,
    official_options,
)
from generator.errors import GenerationError
from tests.support.helpers import ROOT

TABLE = """\
[tool.acp-codegen]
schema = "s.json"
lock = "lock.json"
out = "out"
package = "pkg"
npm-package = "@example/api"
"""


def rule(**rows: object) -> UpsertRule:
    values: dict[str, object] = {"identity": (), "start": {}, "null_resets": (), "empty_clears": (), "snapshot": ()}
    return UpsertRule(**{**values, **rows})  # type: ignore[arg-type]


def write(tmp_path, text: str) -> Config:
    (tmp_path / "pyproject.toml").write_text(text)
    return load_config(tmp_path)


def test_without_pyproject_the_config_is_bare(tmp_path):
    assert find_root(tmp_path) == tmp_path
    assert load_config(tmp_path) == Config(root=tmp_path)


def test_a_pyproject_without_the_table_is_bare(tmp_path):
    assert write(tmp_path, '[project]\nname = "other"\n') == Config(root=tmp_path)


def test_invalid_toml_is_one_clear_error(tmp_path):
    with pytest.raises(GenerationError, match=r"pyproject\.toml: not valid TOML"):
        write(tmp_path, "[tool.acp-codegen\n")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            rule(null_resets=("kind",), empty_clears=("kind",), start={"kind": []}),
            "'kind' is listed in null-resets and empty-clears: a property takes one rule",
        ),
        (
            rule(identity=("id",), snapshot=("id",)),
            "'id' is listed in identity and snapshot: a property takes one rule",
        ),
        (
            rule(identity=("id",), empty_clears=("id",)),
            "'id' is listed in identity and empty-clears: a property takes one rule",
        ),
        (
            rule(snapshot=("_meta",), null_resets=("_meta",), start={"_meta": {}}),
            "'_meta' is listed in null-resets and snapshot: a property takes one rule",
        ),
        (rule(empty_clears=("content", "content")), "'content' is listed in empty-clears: a property takes one rule"),
        (rule(identity=("id",), start={"id": "x"}), "'id' is in identity, so it cannot have a start value"),
        (rule(snapshot=("title",), start={"title": "x"}), "'title' is in snapshot, so it cannot have a start value"),
    ],
)
def test_contradictory_upsert_rules(row, message):
    assert row.contradiction() == message


def test_the_shipped_rules_of_the_official_schema_load_and_do_not_contradict_themselves():
    shipped = official_options()
    assert {"ToolCallUpdate", "TerminalUpdate", "UsageUpdate"} <= set(shipped.upserts)
    assert all(row.contradiction() is None for row in shipped.upserts.values())
    assert (shipped.not_upserts, shipped.path_types) == (("SessionMessageChunk",), ("AbsolutePath",))


def test_the_projects_table_overrides_and_extends_the_defaults():
    defaults = SchemaOptions(upserts={"A": rule(), "B": rule(), "C": rule()}, not_upserts=("N", "D"), path_types=("P",))
    own = SchemaOptions(upserts={"B": rule(identity=("id",)), "D": rule()}, not_upserts=("C", "M"), path_types=("Q",))
    merged = own.over(defaults)
    assert merged.upserts == {"A": rule(), "B": rule(identity=("id",)), "D": rule()}
    assert (merged.not_upserts, merged.path_types) == (("N", "C", "M"), ("P", "Q"))


def test_official_defaults_can_be_turned_off(tmp_path):
    assert write(tmp_path, TABLE).options.official_defaults is True
    assert write(tmp_path, TABLE + "official-defaults = false\n").options.official_defaults is False
    with pytest.raises(GenerationError, match=r"official-defaults: expected true or false"):
        write(tmp_path, TABLE + 'official-defaults = "no"\n')


def test_a_contradiction_is_refused_when_loading(tmp_path):
    with pytest.raises(GenerationError, match=r"upserts.T: 'a' is listed in identity and snapshot"):
        write(tmp_path, TABLE + '[tool.acp-codegen.upserts.T]\nidentity = ["a"]\nsnapshot = ["a"]\n')


def test_a_type_both_upsert_and_not_upsert_is_refused(tmp_path):
    with pytest.raises(GenerationError, match=r"not-upserts: \['T'\] also have upsert rules"):
        write(tmp_path, TABLE + 'not-upserts = ["T"]\n[tool.acp-codegen.upserts.T]\nidentity = []\n')


def test_rows_for_types_a_schema_lacks_are_dropped_with_a_warning():
    options = SchemaOptions(upserts={"A": rule(), "Gone": rule()}, not_upserts=("B", "Old"), path_types=("Path", "P2"))
    kept, warnings = options.restricted_to({"A", "B", "Path"})
    assert kept == SchemaOptions(upserts={"A": rule()}, not_upserts=("B",), path_types=("Path",))
    assert {(warning.code, warning.subject) for warning in warnings} == {
        ("unknown-type", n) for n in ("Gone", "Old", "P2")
    }
    assert [warning.text for warning in warnings] == [
        "pyproject.toml [tool.acp-codegen] upserts.Gone: no $defs of that name in this schema; the row is ignored",
        "pyproject.toml [tool.acp-codegen] not-upserts: Old: no $defs of that name in this schema; the row is ignored",
        "pyproject.toml [tool.acp-codegen] path-types: P2: no $defs of that name in this schema; the row is ignored",
    ]


def test_schema_dirs_map_uri_prefixes_to_directories_below_the_root(tmp_path):
    config = write(tmp_path, TABLE + '[tool.acp-codegen.schema-dirs]\n"http://example.com/s/" = "remote"\n')
    assert config.options.schema_dirs == (("http://example.com/s/", tmp_path / "remote"),)
    given = config.options.with_schema_dirs([("urn:example:", tmp_path / "u"), ("http://example.com/s/", tmp_path)])
    assert given.schema_dirs == (("urn:example:", tmp_path / "u"), ("http://example.com/s/", tmp_path))
    kept, _ = config.options.restricted_to(())
    assert kept.schema_dirs == config.options.schema_dirs


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ('"http://example.com/s" = "remote"', "not an absolute URI prefix ending in `/` or `:`"),
        ('"remote/" = "remote"', "not an absolute URI prefix"),
        ('"http://example.com/" = 3', "expected a table of URI prefix = directory"),
    ],
)
def test_a_schema_dir_prefix_must_be_an_absolute_uri_ending_in_a_separator(tmp_path, rows, message):
    with pytest.raises(GenerationError, match=message) as caught:
        write(tmp_path, TABLE + f"[tool.acp-codegen.schema-dirs]\n{rows}\n")
    assert caught.value.pointer.endswith("[tool.acp-codegen] schema-dirs")


PACKAGES = """\
[tool.acp-codegen]
lock = "lock.json"
out = "out"
npm-package = "@example/api"
packages = [
    { package = "api_v2", schema = "v2.json", protocol-version = 2 },
    { package = "api_v1", schema = "v1.json" },
]
"""


def test_a_single_package_table_is_one_package(tmp_path):
    config = write(tmp_path, TABLE + "protocol-version = 3\n")
    assert config.packages == (PackageConfig(tmp_path / "s.json", "pkg", 3),)
    assert (config.schema, config.package) == (tmp_path / "s.json", "pkg")
    assert write(tmp_path, TABLE).packages == (PackageConfig(tmp_path / "s.json", "pkg", None),)


def test_a_list_of_packages_the_first_of_them_primary(tmp_path):
    config = write(tmp_path, PACKAGES)
    assert config.packages == (
        PackageConfig(tmp_path / "v2.json", "api_v2", 2),
        PackageConfig(tmp_path / "v1.json", "api_v1", None),
    )
    assert (config.schema, config.package) == (tmp_path / "v2.json", "api_v2")


def test_the_projects_config_lists_v2_then_v1():
    config = load_config(ROOT)
    assert [(p.package, p.protocol_version) for p in config.packages] == [("acp_v2", 2), ("acp_v1", 1)]
    assert [p.schema.relative_to(ROOT).as_posix() for p in config.packages] == [
        "schema/v2/schema.unstable.json",
        "schema/v1/schema.unstable.json",
    ]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("npm-package", 'schema = "s.json"\nnpm-package'), r"packages: takes the place of \['schema'\]"),
        (("packages = [", 'packages = "x"\nunused = ['), r"packages: expected a non-empty array of tables"),
        (('package = "api_v1"', 'package = "api_v2"'), r"packages: a package is listed twice"),
        (('schema = "v1.json" }', 'schema = "v1.json", protocol-version = 2 }'), r"two packages speak one protocol"),
        (
            ('schema = "v1.json" }', 'schema = "v1.json", protocol-version = 1.5 }'),
            r"packages\[1\].protocol-version: expected an integer",
        ),
        (('schema = "v1.json" }', 'schema = "v1.json", version = 1 }'), r"packages\[1\]: unknown keys \['version'\]"),
        (('schema = "v1.json" }', 'schema = "" }'), r"packages\[1\].schema: expected a non-empty string"),
    ],
)
def test_a_bad_list_of_packages_is_one_clear_error(tmp_path, edit, message):
    with pytest.raises(GenerationError, match=message):
        write(tmp_path, PACKAGES.replace(*edit, 1))


def test_packages_may_share_a_runtime_package_named_in_the_table(tmp_path):
    assert write(tmp_path, PACKAGES).runtime_package is None  # each package carries its own runtime
    assert (
        write(
            tmp_path, PACKAGES.replace("[tool.acp-codegen]\n", '[tool.acp-codegen]\nruntime-package = "api_rt"\n')
        ).runtime_package
        == "api_rt"
    )
    assert load_config(ROOT).runtime_package == "acp_runtime"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"api.rt"', r"runtime-package: expected a Python package name \(an identifier\), found 'api.rt'"),
        ('"class"', r"runtime-package: expected a Python package name"),
        ("1", r"runtime-package: expected a Python package name"),
        ('"api_v1"', r"runtime-package: 'api_v1' is also the name of a package it serves"),
    ],
)
def test_a_bad_runtime_package_is_one_clear_error(tmp_path, value, message):
    with pytest.raises(GenerationError, match=message):
        write(tmp_path, PACKAGES.replace("[tool.acp-codegen]\n", f"[tool.acp-codegen]\nruntime-package = {value}\n"))


def test_a_minimal_table_names_the_schema_the_package_and_where_it_goes(tmp_path):
    config = write(tmp_path, '[tool.acp-codegen]\nschema = "vendor/acp.json"\npackage = "acp"\nout = "src"\n')
    assert (config.schema, config.package, config.out) == (tmp_path / "vendor/acp.json", "acp", tmp_path / "src")
    assert (config.lock, config.npm_package, config.schema_files) == (None, "@agentclientprotocol/sdk", ())
    assert (config.pyproject, config.ignore_warnings, config.commands) == (True, (), Commands())


def test_schema_files_map_npm_paths_to_the_projects(tmp_path):
    listed = write(tmp_path, TABLE + 'schema-files = ["schema/schema.json"]\n')
    assert listed.schema_files == (("schema/schema.json", "schema/schema.json"),)
    mapped = write(tmp_path, TABLE + '[tool.acp-codegen.schema-files]\n"schema/v2/schema.json" = "vendor/v2.json"\n')
    assert mapped.schema_files == (("schema/v2/schema.json", "vendor/v2.json"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('schema-files = "s.json"\n', r"schema-files: expected a list of paths or a table"),
        ('[tool.acp-codegen.schema-files]\n"s.json" = "/etc/s.json"\n', r"'/etc/s.json' is not a relative path"),
        ('[tool.acp-codegen.schema-files]\n"../s.json" = "s.json"\n', r"'../s.json' is not a relative path"),
        ("pyproject = 0\n", r"pyproject: expected true or false"),
        ('ignore-warnings = "unknown-type"\n', r"ignore-warnings: expected a list of strings"),
        ('[tool.acp-codegen.commands]\nregenerate = "x"\n', r"commands: unknown keys \['regenerate'\]"),
        ('[tool.acp-codegen.commands]\ngenerate = ""\n', r"commands.generate: expected a non-empty string"),
    ],
)
def test_a_bad_vendoring_setting_is_one_clear_error(tmp_path, text, message):
    with pytest.raises(GenerationError, match=message):
        write(tmp_path, TABLE + text)


def test_commands_and_warnings_settings(tmp_path):
    config = write(
        tmp_path,
        TABLE + 'pyproject = false\nignore-warnings = ["unknown-type", "unconfigured-upsert:X"]\n'
        '[tool.acp-codegen.commands]\ngenerate = "tox -e gen"\nupdate-schema = "tox -e vendor"\n',
    )
    assert (config.pyproject, config.ignore_warnings) == (False, ("unknown-type", "unconfigured-upsert:X"))
    assert config.commands == Commands(generate="tox -e gen", check=None, update_schema="tox -e vendor")


def test_the_generator_guides_tables_are_valid_configurations(tmp_path):
    """Each ```toml sample of docs/guides/generator.md holding a [tool.acp-codegen] table loads."""
    guide = (ROOT / "docs" / "guides" / "generator.md").read_text()
    tables = [text for text in re.findall(r"```toml\n(.*?)```", guide, re.DOTALL) if "[tool.acp-codegen" in text]
    assert len(tables) >= 3
    for text in tables:
        if not text.startswith("[tool.acp-codegen]"):  # a subtable alone: under the minimal table
            text = '[tool.acp-codegen]\nschema = "s.json"\npackage = "p"\nout = "o"\n' + text
        config = write(tmp_path, text)
        assert config.out is not None and config.packages
