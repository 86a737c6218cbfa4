"""`[tool.acp-codegen]` in pyproject.toml: everything project-specific lives there."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

import tomllib

from generator.errors import GenerationError

CONFIG = "pyproject.toml [tool.acp-codegen]"
ABSENT_ROW = "no $defs of that name in this schema; the row is ignored"  # how a row's warning ends


@dataclass(frozen=True)
class UpsertRule:
    """One row of `[tool.acp-codegen.upserts]`, in wire names."""

    identity: tuple[str, ...]
    start: dict[str, object]
    null_resets: tuple[str, ...]
    empty_clears: tuple[str, ...]
    snapshot: tuple[str, ...]

    def contradiction(self) -> str | None:
        """Why this row contradicts itself, or None. A property has at most one
        rule: identity (never changes), null-resets (null → its start value),
        empty-clears (null → []) or snapshot (the patch's value, absent included);
        identity and snapshot properties take no start value (an identity is
        required, a snapshot is whatever the latest report says); no property is listed twice."""
        lists = {"identity": self.identity, "null-resets": self.null_resets, "empty-clears": self.empty_clears}
        lists["snapshot"] = self.snapshot
        seen: dict[str, str] = {}
        for key, names in lists.items():
            for name in names:
                if name in seen:
                    where = key if seen[name] == key else f"{seen[name]} and {key}"
                    return f"{name!r} is listed in {where}: a property takes one rule"
                seen[name] = key
        for name in self.start:
            if seen.get(name) in ("identity", "snapshot"):
                return f"{name!r} is in {seen[name]}, so it cannot have a start value"
        return None


@dataclass(frozen=True)
class SchemaOptions:
    """What `build` needs to know beyond the schema."""

    upserts: dict[str, UpsertRule] = field(default_factory=dict)
    not_upserts: tuple[str, ...] = ()
    path_types: tuple[str, ...] = ()
    # (URI prefix, local directory): where the documents other `$ref`s name are read from
    schema_dirs: tuple[tuple[str, Path], ...] = ()

    def restricted_to(self, names: Collection[str]) -> tuple[SchemaOptions, list[str]]:
        """These options without the rows that name types absent from a schema
        with the `$defs` `names`, and a warning for each row dropped (one config
        can serve several schemas; a typo shows up as a warning, `--strict` fails)."""
        absent = ABSENT_ROW
        warnings = [f"{CONFIG} upserts.{name}: {absent}" for name in self.upserts if name not in names]
        for key, rows in (("not-upserts", self.not_upserts), ("path-types", self.path_types)):
            warnings += [f"{CONFIG} {key}: {name}: {absent}" for name in rows if name not in names]
        kept = replace(
            self,
            upserts={name: rule for name, rule in self.upserts.items() if name in names},
            not_upserts=tuple(name for name in self.not_upserts if name in names),
            path_types=tuple(name for name in self.path_types if name in names),
        )
        return kept, warnings

    def with_schema_dirs(self, schema_dirs: Collection[tuple[str, Path]]) -> SchemaOptions:
        """These options with `schema_dirs` (from the command line) before the configured
        ones: a prefix given both ways maps to the directory given last."""
        given = dict(schema_dirs)
        kept = tuple(row for row in self.schema_dirs if row[0] not in given)
        return replace(self, schema_dirs=(*given.items(), *kept))


_URI_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*[/:]")


def schema_dir_problem(prefix: str) -> str | None:
    """Why `prefix` cannot be a schema-dir URI prefix, or None: it must be an absolute
    URI ending in `/` or `:` (so that `http://host/a` does not also catch `http://host/ab.json`)."""
    if _URI_PREFIX.fullmatch(prefix):
        return None
    return f"{prefix!r} is not an absolute URI prefix ending in `/` or `:` (e.g. http://example.com/schemas/)"


@dataclass(frozen=True)
class PackageConfig:
    """One package `generate` writes: a schema, the import name, and the ACP protocol
    version it speaks (what the package's router and negotiation use; None when unknown)."""

    schema: Path
    package: str
    protocol_version: int | None = None


@dataclass(frozen=True)
class Config:
    """The project's settings; without a `[tool.acp-codegen]` table only `root`
    and empty options, and the command line must name schema, out and package."""

    root: Path
    schema: Path | None = None
    lock: Path | None = None
    out: Path | None = None
    package: str | None = None
    npm_package: str | None = None
    schema_files: tuple[str, ...] = ()
    options: SchemaOptions = field(default_factory=SchemaOptions)
    # every package `generate` and `check` write into `out`, the first being `schema`/`package`:
    # one for a table with `schema` and `package`, several for a `[[tool.acp-codegen.packages]]` list
    packages: tuple[PackageConfig, ...] = ()


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding a pyproject.toml, else `start`."""
    for candidate in (start, *start.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    return start


def load_config(root: Path) -> Config:
    """`[tool.acp-codegen]` of `root`/pyproject.toml; a bare Config when either is absent."""
    path = root / "pyproject.toml"
    try:
        with path.open("rb") as handle:
            table = tomllib.load(handle).get("tool", {}).get("acp-codegen")
    except FileNotFoundError:
        return Config(root=root)
    except OSError as error:
        raise GenerationError(str(path), f"cannot read it: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise GenerationError(str(path), f"not valid TOML: {error}") from None
    if table is None:
        return Config(root=root)
    if not isinstance(table, dict):
        raise GenerationError(f"{path}: [tool.acp-codegen]", "expected a table")

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
        contradiction = upserts[name].contradiction()
        if contradiction:
            raise GenerationError(f"{path}: [tool.acp-codegen] {where}", contradiction)
    schema_dirs = table.get("schema-dirs", {})
    if not isinstance(schema_dirs, dict) or not all(isinstance(d, str) and d for d in schema_dirs.values()):
        raise GenerationError(f"{path}: [tool.acp-codegen] schema-dirs", "expected a table of URI prefix = directory")
    for prefix in schema_dirs:
        problem = schema_dir_problem(prefix)
        if problem:
            raise GenerationError(f"{path}: [tool.acp-codegen] schema-dirs", problem)
    options = SchemaOptions(
        upserts=upserts,
        not_upserts=strings("not-upserts", table.get("not-upserts", [])),
        path_types=strings("path-types", table.get("path-types", [])),
        schema_dirs=tuple((prefix, root / directory) for prefix, directory in schema_dirs.items()),
    )
    both = sorted(set(upserts) & set(options.not_upserts))
    if both:
        raise GenerationError(f"{path}: [tool.acp-codegen] not-upserts", f"{both} also have upsert rules")
    packages = _packages(path, root, table, setting)
    return Config(
        root=root,
        schema=packages[0].schema,
        lock=root / setting("lock"),
        out=root / setting("out"),
        package=packages[0].package,
        packages=packages,
        npm_package=setting("npm-package"),
        schema_files=strings("schema-files", table.get("schema-files", [])),
        options=options,
    )


def _protocol_version(where: str, value: object) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= 0xFFFF:
        raise GenerationError(where, "expected an integer from 0 to 65535")
    return value


def _packages(
    path: Path, root: Path, table: dict[str, object], setting: Callable[[str], str]
) -> tuple[PackageConfig, ...]:
    """`schema` and `package` (one package), or `[[tool.acp-codegen.packages]]` (several, the first
    one primary: the generated pyproject is named after it), never both."""
    rows = table.get("packages")
    if rows is None:
        where = f"{path}: [tool.acp-codegen] protocol-version"
        return (
            PackageConfig(
                root / setting("schema"), setting("package"), _protocol_version(where, table.get("protocol-version"))
            ),
        )
    where = f"{path}: [tool.acp-codegen] packages"
    both = sorted({"schema", "package", "protocol-version"} & set(table))
    if both:
        raise GenerationError(where, f"takes the place of {both}: give one or the other")
    if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) for row in rows):
        raise GenerationError(where, "expected a non-empty array of tables")
    packages = []
    for index, row in enumerate(rows):
        here = f"{where}[{index}]"
        unknown = set(row) - {"schema", "package", "protocol-version"}
        if unknown:
            raise GenerationError(here, f"unknown keys {sorted(unknown)}")
        for key in ("schema", "package"):
            if not isinstance(row.get(key), str) or not row[key]:
                raise GenerationError(f"{here}.{key}", "expected a non-empty string")
        version = _protocol_version(f"{here}.protocol-version", row.get("protocol-version"))
        packages.append(PackageConfig(root / row["schema"], row["package"], version))
    names = [package.package for package in packages]
    if len(set(names)) != len(names):
        raise GenerationError(where, f"a package is listed twice: {names}")
    versions = [package.protocol_version for package in packages if package.protocol_version is not None]
    if len(set(versions)) != len(versions):
        raise GenerationError(where, f"two packages speak one protocol version: {versions}")
    return tuple(packages)
