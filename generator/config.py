"""`[tool.acp-codegen]` in pyproject.toml: everything project-specific lives there."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from generator.errors import GenerationError


@dataclass(frozen=True)
class Config:
    root: Path
    schema: Path
    lock: Path
    out: Path
    package: str
    npm_package: str
    schema_files: tuple[str, ...]


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

    files = table.get("schema-files", [])
    if not isinstance(files, list) or not all(isinstance(item, str) for item in files):
        raise GenerationError(f"{path}: [tool.acp-codegen] schema-files", "expected a list of strings")
    return Config(
        root=root,
        schema=root / setting("schema"),
        lock=root / setting("lock"),
        out=root / setting("out"),
        package=setting("package"),
        npm_package=setting("npm-package"),
        schema_files=tuple(files),
    )
