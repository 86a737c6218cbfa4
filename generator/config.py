"""`[tool.acp-codegen]` in pyproject.toml: everything project-specific lives there."""

from __future__ import annotations

import functools
import keyword
import re
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from generator.errors import UNKNOWN_TYPE, GenerationError, SchemaWarning

CONFIG = "pyproject.toml [tool.acp-codegen]"
ABSENT_ROW = "no $defs of that name in this schema; the row is ignored"  # how a row's warning ends
# The settings the official schema gets before the project's own (same keys as the table).
OFFICIAL_DEFAULTS = Path(__file__).with_name("official.toml")
OFFICIAL_TITLE = "Agent Client Protocol"  # the official schema's `title`, in every release
OFFICIAL_NPM_PACKAGE = "@agentclientprotocol/sdk"  # where update-schema takes it from by default


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
    # whether a schema titled OFFICIAL_TITLE gets the rows of OFFICIAL_DEFAULTS under these
    official_defaults: bool = True

    def restricted_to(self, names: Collection[str]) -> tuple[SchemaOptions, list[SchemaWarning]]:
        """These options without the rows that name types absent from a schema
        with the `$defs` `names`, and a warning for each row dropped (one config
        can serve several schemas; a typo shows up as a warning, `--strict` fails)."""
        warnings = [
            SchemaWarning(UNKNOWN_TYPE, name, f"{CONFIG} upserts.{name}: {ABSENT_ROW}")
            for name in self.upserts
            if name not in names
        ]
        for key, rows in (("not-upserts", self.not_upserts), ("path-types", self.path_types)):
            warnings += [
                SchemaWarning(UNKNOWN_TYPE, name, f"{CONFIG} {key}: {name}: {ABSENT_ROW}")
                for name in rows
                if name not in names
            ]
        kept = replace(
            self,
            upserts={name: rule for name, rule in self.upserts.items() if name in names},
            not_upserts=tuple(name for name in self.not_upserts if name in names),
            path_types=tuple(name for name in self.path_types if name in names),
        )
        return kept, warnings

    def over(self, defaults: SchemaOptions) -> SchemaOptions:
        """These options over `defaults`: a row of `upserts` replaces the default row of its type,
        a name in `not_upserts` drops it, and the lists add to the default lists."""
        upserts = {name: rule for name, rule in defaults.upserts.items() if name not in self.not_upserts}
        upserts.update(self.upserts)
        not_upserts = [name for name in defaults.not_upserts if name not in self.upserts]
        return replace(
            self,
            upserts=upserts,
            not_upserts=tuple(dict.fromkeys((*not_upserts, *self.not_upserts))),
            path_types=tuple(dict.fromkeys((*defaults.path_types, *self.path_types))),
        )

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
class Commands:
    """How the project runs generate, check and update-schema (`make generate`), when it
    says so: what the generated headers and the messages tell the user to run."""

    generate: str | None = None
    check: str | None = None
    update_schema: str | None = None


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
    # (path in the npm package, path in the project) of each file update-schema vendors
    schema_files: tuple[tuple[str, str], ...] = ()
    options: SchemaOptions = field(default_factory=SchemaOptions)
    # every package `generate` and `check` write into `out`, the first being `schema`/`package`:
    # one for a table with `schema` and `package`, several for a `[[tool.acp-codegen.packages]]` list
    packages: tuple[PackageConfig, ...] = ()
    pyproject: bool = True  # whether a pyproject.toml is written (and compared) beside the packages
    # the package the configured packages share the runtime modules (generator/runtime/) from, written
    # once beside them; None: each package carries its own copy and stands alone
    runtime_package: str | None = None
    # warning codes (`unconfigured-upsert`) or causes (`unconfigured-upsert:ToolCallUpdate`) not printed
    ignore_warnings: tuple[str, ...] = ()
    commands: Commands = field(default_factory=lambda: Commands())


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
    where = f"{path}: [tool.acp-codegen]"
    if not isinstance(table, dict):
        raise GenerationError(where, "expected a table")

    def setting(key: str) -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value:
            raise GenerationError(f"{where} {key}", "expected a non-empty string")
        return value

    schema_dirs = table.get("schema-dirs", {})
    if not isinstance(schema_dirs, dict) or not all(isinstance(d, str) and d for d in schema_dirs.values()):
        raise GenerationError(f"{where} schema-dirs", "expected a table of URI prefix = directory")
    for prefix in schema_dirs:
        problem = schema_dir_problem(prefix)
        if problem:
            raise GenerationError(f"{where} schema-dirs", problem)
    options = replace(
        _rules(where, table),
        schema_dirs=tuple((prefix, root / directory) for prefix, directory in schema_dirs.items()),
        official_defaults=_flag(f"{where} official-defaults", table.get("official-defaults", True)),
    )
    both = sorted(set(options.upserts) & set(options.not_upserts))
    if both:
        raise GenerationError(f"{where} not-upserts", f"{both} also have upsert rules")
    packages = _packages(path, root, table, setting)
    return Config(
        root=root,
        schema=packages[0].schema,
        lock=root / setting("lock") if "lock" in table else None,
        out=root / setting("out"),
        package=packages[0].package,
        packages=packages,
        npm_package=setting("npm-package") if "npm-package" in table else OFFICIAL_NPM_PACKAGE,
        schema_files=_schema_files(f"{where} schema-files", table.get("schema-files", [])),
        options=options,
        pyproject=_flag(f"{where} pyproject", table.get("pyproject", True)),
        runtime_package=_runtime_package(f"{where} runtime-package", table.get("runtime-package"), packages),
        ignore_warnings=_strings(f"{where} ignore-warnings", table.get("ignore-warnings", [])),
        commands=_commands(f"{where} commands", table.get("commands", {})),
    )


@functools.cache
def official_options() -> SchemaOptions:
    """The rows of OFFICIAL_DEFAULTS (shipped with the generator), checked as a project's are."""
    with OFFICIAL_DEFAULTS.open("rb") as handle:
        return _rules(str(OFFICIAL_DEFAULTS), tomllib.load(handle))


def _strings(where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise GenerationError(where, "expected a list of strings")
    return tuple(value)


def _flag(where: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise GenerationError(where, "expected true or false")
    return value


def _rules(where: str, table: dict[str, object]) -> SchemaOptions:
    """The upserts, not-upserts and path-types of a table (`where` names it in errors)."""
    rows = table.get("upserts", {})
    if not isinstance(rows, dict):
        raise GenerationError(f"{where} upserts", "expected a table of upsert rows")
    upserts = {}
    for name, row in rows.items():
        here = f"{where} upserts.{name}"
        if not isinstance(row, dict) or "identity" not in row:
            raise GenerationError(here, "expected a table with `identity`")
        unknown = set(row) - {"identity", "start", "null-resets", "empty-clears", "snapshot"}
        if unknown:
            raise GenerationError(here, f"unknown keys {sorted(unknown)}")
        start = row.get("start", {})
        if not isinstance(start, dict):
            raise GenerationError(f"{here}.start", "expected an inline table")
        upserts[name] = UpsertRule(
            identity=_strings(f"{here}.identity", row["identity"]),
            start=start,
            null_resets=_strings(f"{here}.null-resets", row.get("null-resets", [])),
            empty_clears=_strings(f"{here}.empty-clears", row.get("empty-clears", [])),
            snapshot=_strings(f"{here}.snapshot", row.get("snapshot", [])),
        )
        contradiction = upserts[name].contradiction()
        if contradiction:
            raise GenerationError(here, contradiction)
    return SchemaOptions(
        upserts=upserts,
        not_upserts=_strings(f"{where} not-upserts", table.get("not-upserts", [])),
        path_types=_strings(f"{where} path-types", table.get("path-types", [])),
    )


def _schema_files(where: str, value: object) -> tuple[tuple[str, str], ...]:
    """(path in the npm package, path in the project) of each vendored schema file: a list of
    paths kept as they are, or a table of npm path = project path."""
    if isinstance(value, list):
        pairs = tuple((name, name) for name in _strings(where, value))
    elif isinstance(value, dict) and all(isinstance(target, str) for target in value.values()):
        pairs = tuple(value.items())
    else:
        raise GenerationError(where, "expected a list of paths or a table of npm path = project path")
    for source, target in pairs:
        problem = vendored_path_problem(source) or vendored_path_problem(target)
        if problem:
            raise GenerationError(f"{where} {source!r}", problem)
    return pairs


def vendored_path_problem(path: str) -> str | None:
    """Why `path` cannot name a vendored file (in the npm package or the project), or None:
    it must be relative and stay inside (no `..`)."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts or "\\" in path:
        return f"{path!r} is not a relative path inside the package or project"
    return None


def _commands(where: str, value: object) -> Commands:
    if not isinstance(value, dict):
        raise GenerationError(where, "expected a table of command = how the project runs it")
    unknown = set(value) - {"generate", "check", "update-schema"}
    if unknown:
        raise GenerationError(where, f"unknown keys {sorted(unknown)}; expected generate, check, update-schema")
    for key, text in value.items():
        if not isinstance(text, str) or not text:
            raise GenerationError(f"{where}.{key}", "expected a non-empty string")
    return Commands(value.get("generate"), value.get("check"), value.get("update-schema"))


def _runtime_package(where: str, value: object, packages: tuple[PackageConfig, ...]) -> str | None:
    """The `runtime-package` setting: an import name (no dots) that no configured package has."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.isidentifier() or keyword.iskeyword(value):
        raise GenerationError(where, f"expected a Python package name (an identifier), found {value!r}")
    if value in {package.package for package in packages}:
        raise GenerationError(where, f"{value!r} is also the name of a package it serves")
    return value


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
