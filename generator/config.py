"""`[tool.acp-codegen]` in pyproject.toml: everything project-specific lives there."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from generator.errors import GenerationError


@dataclass(frozen=True)
class UpsertRule:
    """One row of `[tool.acp-codegen.upserts]`, in wire names."""

    identity: tuple[str, ...]
    start: dict[str, object]
    null_resets: tuple[str, ...]
    empty_clears: tuple[str, ...]
    snapshot: tuple[str, ...]


@dataclass(frozen=True)
class SchemaOptions:
    """What `build` needs to know beyond the schema."""

    upserts: dict[str, UpsertRule] = field(default_factory=dict)
    not_upserts: tuple[str, ...] = ()
    path_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    root: Path
    schema: Path
    lock: Path
    out: Path
    package: str
    npm_package: str
    schema_files: tuple[str, ...]
    options: SchemaOptions


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding a pyproject.toml."""
    for candidate in (start, *start.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    raise GenerationError(str(start), "no pyproject.toml here or above")


def load_config(root: Path) -> Config:
    path = root / "pyproject.toml"
    with path.open("rb") as handle:
        table = tomllib.load(handle).get("tool", {}).get("acp-codegen")
    if not isinstance(table, dict):
        raise GenerationError(str(path), "missing the [tool.acp-codegen] table")

    def setting(key: str) -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value:
            raise GenerationError(f"{path}: [tool.acp-codegen] {key}", "expected a non-empty string")
        return value

    def strings(where: str, value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise GenerationError(f"{path}: [tool.acp-codegen] {where}", "expected a list of strings")
        return tuple(value)

    upserts = {}
    for name, row in table.get("upserts", {}).items():
        where = f"upserts.{name}"
        if not isinstance(row, dict) or "identity" not in row:
            raise GenerationError(f"{path}: [tool.acp-codegen] {where}", "expected a table with `identity`")
        unknown = set(row) - {"identity", "start", "null-resets", "empty-clears", "snapshot"}
        if unknown:
            raise GenerationError(f"{path}: [tool.acp-codegen] {where}", f"unknown keys {sorted(unknown)}")
        start = row.get("start", {})
        if not isinstance(start, dict):
            raise GenerationError(f"{path}: [tool.acp-codegen] {where}.start", "expected an inline table")
        upserts[name] = UpsertRule(
            identity=strings(f"{where}.identity", row["identity"]),
            start=start,
            null_resets=strings(f"{where}.null-resets", row.get("null-resets", [])),
            empty_clears=strings(f"{where}.empty-clears", row.get("empty-clears", [])),
            snapshot=strings(f"{where}.snapshot", row.get("snapshot", [])),
        )
    options = SchemaOptions(
        upserts=upserts,
        not_upserts=strings("not-upserts", table.get("not-upserts", [])),
        path_types=strings("path-types", table.get("path-types", [])),
    )
    return Config(
        root=root,
        schema=root / setting("schema"),
        lock=root / setting("lock"),
        out=root / setting("out"),
        package=setting("package"),
        npm_package=setting("npm-package"),
        schema_files=strings("schema-files", table.get("schema-files", [])),
        options=options,
    )
