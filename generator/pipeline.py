"""schema → load → IR → render → format: the whole generation, in one call."""

from __future__ import annotations

import functools
import hashlib
import json
import sys
import time
import unicodedata
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path

from generator import __version__
from generator.config import OFFICIAL_DEFAULTS, OFFICIAL_TITLE, Commands, SchemaOptions, official_options
from generator.emit.render import TEMPLATES, render_package, render_runtime, shared_runtime_modules, without_runtime
from generator.emit.units import join_units
from generator.ir.build import build_module
from generator.ir.model import Alias, EnumType, Module, ObjectType, UnionType
from generator.output import cache
from generator.output.format import format_units, reshaped, unit_key
from generator.output.manifest import proven_units, render_manifest
from generator.schema.load import load_schema


@dataclass
class Generated:
    module: Module
    files: dict[str, str]  # the package: file name → text
    manifest: str  # its format manifest
    started: float
    units: int  # the distinct Python units rendered ...
    formatted: int  # ... how many of them black formatted (the others were proven or cached) ...
    reshaped: int  # ... and how many of them black's text differs from (those it formats twice)
    runtime: frozenset[str] = frozenset()  # the shared runtime modules it imports (with a runtime package)
    shared_by: tuple[str, ...] = ()  # the packages sharing it, when this is a runtime package

    def summary(self, package_dir: Path, verb: str) -> str:
        if self.shared_by:
            return (
                f"{verb} {package_dir}: the runtime of {' and '.join(self.shared_by)}, {len(self.files)} files, "
                f"black ran on {self.formatted} of {self.units} units ({self.reshaped} reshaped), "
                f"{time.perf_counter() - self.started:.2f} s"
            )
        counts = {
            kind: sum(isinstance(t, kind) for t in self.module.types)
            for kind in (ObjectType, UnionType, EnumType, Alias)
        }
        return (
            f"{verb} {package_dir}: {len(self.module.types)} types ({counts[ObjectType]} objects, "
            f"{counts[UnionType]} unions, {counts[EnumType]} enums, {counts[Alias]} aliases), "
            f"{len(self.files)} files, black ran on {self.formatted} of {self.units} units ({self.reshaped} reshaped), "
            f"{time.perf_counter() - self.started:.2f} s"
        )


def versions() -> dict[str, str]:
    """What the header of each generated file records: the generator's and black's versions."""
    return {"generator": __version__, "black": version("black")}


def display_path(schema: Path, root: Path) -> str:
    """The schema's path as the generated header records it: relative to the project."""
    try:
        return schema.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return schema.name


@functools.cache
def _generator_fingerprint() -> str:
    """What else the IR depends on: this generator's code (the static runtime modules
    included), the official schema's default settings, and the Python that runs it (names
    are NFKC-normalised and spelled by its Unicode database; its soft keywords are reserved)."""
    digest = hashlib.sha256(f"{sys.version_info[:2]} {unicodedata.unidata_version}".encode())
    package = Path(__file__).parent
    for path in [*sorted(package.rglob("*.py")), OFFICIAL_DEFAULTS]:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build_ir(
    schema: Path,
    package: str,
    root: Path,
    options: SchemaOptions | None = None,
    cache_dir: Path | None = None,
    protocol_version: int | None = None,
) -> Module:
    """The IR of `schema`; with `cache_dir`, reused while the schema bytes, the
    options, the protocol version and the generator are unchanged (the key hashes all of
    them), and the other documents its `$ref`s read (the cached IR lists them with their sha256)."""
    path = display_path(schema, root)
    cached = None
    if cache_dir is not None:
        try:
            data = schema.read_bytes()
        except OSError:
            data = None  # load_schema reports it
        if data is not None:
            key = hashlib.sha256(
                repr((data, package, path, options, protocol_version, _generator_fingerprint())).encode()
            ).hexdigest()
            cached = cache_dir / f"ir-{key}.json"
            stored = cache.read(cached)
            if isinstance(stored, dict) and _unchanged(stored.get("documents")):
                try:
                    module = cache.ir_from_data(stored.get("module"))
                except ValueError:
                    module = None
                if isinstance(module, Module):
                    return module
    loaded = load_schema(schema, options.schema_dirs if options else ())
    options, config_warnings = (options or SchemaOptions()).restricted_to(loaded.definitions)
    if options.official_defaults and loaded.document.get("title") == OFFICIAL_TITLE:
        defaults, _ = official_options().restricted_to(loaded.definitions)  # they serve every release
        options = options.over(defaults)
    module = build_module(loaded, package, path, options)
    module = replace(module, warnings=(*config_warnings, *module.warnings), protocol_version=protocol_version)
    if cached is not None:
        documents = [[str(document.path), document.sha256] for document in loaded.documents]
        cache.write(cached, {"documents": documents, "module": cache.ir_to_data(module)})
        cache.keep_newest(cached.parent, "ir-*.json", cache.MAX_IR_FILES)
    return module


def with_commands(module: Module, commands: Commands) -> Module:
    """`module` with the commands its generated headers name (those `commands` gives)."""
    return replace(
        module,
        generate_command=commands.generate or module.generate_command,
        check_command=commands.check or module.check_command,
    )


def _unchanged(documents: object) -> bool:
    """Whether the other documents a cached IR was built from (`[path, sha256]` rows) still
    hold the same bytes: the cache key hashes only the schema file itself."""
    if not isinstance(documents, list):
        return False
    for row in documents:
        if not (isinstance(row, list) and len(row) == 2 and all(isinstance(item, str) for item in row)):
            return False
        try:
            if hashlib.sha256(Path(row[0]).read_bytes()).hexdigest() != row[1]:
                return False
        except OSError:
            return False
    return True


def generate(
    schema: Path,
    package: str,
    root: Path,
    cache_dir: Path | None,
    options: SchemaOptions | None = None,
    committed: Path | None = None,
    protocol_version: int | None = None,
) -> Generated:
    """Generate the package in memory: `build_ir`, then `emit`."""
    started = time.perf_counter()
    module = build_ir(schema, package, root, options, cache_dir, protocol_version)
    return emit(module, cache_dir, committed, started)


@functools.cache
def _templates_fingerprint() -> str:
    """What else rendering depends on: the templates, Jinja2, and what the headers record."""
    digest = hashlib.sha256(repr(sorted(versions().items())).encode())
    digest.update(version("jinja2").encode())
    for path in sorted(TEMPLATES.rglob("*.jinja")):
        digest.update(path.relative_to(TEMPLATES).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _rendered(module: Module, cache_dir: Path | None) -> dict[str, list[str]]:
    """`render_package`'s units for `module`; with `cache_dir`, reused while the IR (hashed
    whole), the generator, the templates and the versions they record are unchanged."""
    if cache_dir is None:
        return render_package(module, versions())
    ir_data = json.dumps(cache.ir_to_data(module), separators=(",", ":"))
    fingerprints = f"{_generator_fingerprint()}\0{_templates_fingerprint()}\0"
    key = hashlib.sha256((fingerprints + ir_data).encode()).hexdigest()
    path = cache_dir / f"render-{key}.json"
    stored = cache.read(path)
    if isinstance(stored, dict) and all(
        isinstance(units, list) and all(isinstance(unit, str) for unit in units) for units in stored.values()
    ):
        return stored
    units = render_package(module, versions())
    cache.write(path, units)
    cache.keep_newest(cache_dir, "render-*.json", cache.MAX_RENDER_FILES)
    return units


def emit(
    module: Module,
    cache_dir: Path | None,
    committed: Path | None = None,
    started: float | None = None,
    runtime_package: str | None = None,
) -> Generated:
    """Render and format `module`. black's text for a unit comes from the
    `committed` package (verified against its format manifest), then from the
    cache in `cache_dir`, then from black; with neither, black formats everything.
    With `runtime_package` the package imports the shared runtime modules from it
    instead of carrying them (`Generated.runtime` names those it uses)."""
    started = time.perf_counter() if started is None else started
    units = _rendered(module, cache_dir)
    shared: frozenset[str] = frozenset()
    if runtime_package is not None:
        shared = frozenset(units) & shared_runtime_modules()
        units = without_runtime(units, module.package, runtime_package)
    generated = _formatted(module, units, cache_dir, committed, started)
    generated.runtime = shared
    return generated


def emit_runtime(
    packages: list[Generated], runtime_package: str, cache_dir: Path | None, committed: Path | None = None
) -> Generated:
    """The runtime package `runtime_package` that `packages` (emitted with it) share: the
    runtime modules any of them uses, with the headers of the first."""
    started = time.perf_counter()
    module = packages[0].module
    modules = frozenset().union(*(generated.runtime for generated in packages))
    units = render_runtime(module, versions(), modules, [generated.module.package for generated in packages])
    generated = _formatted(replace(module, package=runtime_package), units, cache_dir, committed, started)
    generated.shared_by = tuple(generated.module.package for generated in packages)
    return generated


def _formatted(
    module: Module, units: dict[str, list[str]], cache_dir: Path | None, committed: Path | None, started: float
) -> Generated:
    """The files of `units`, each unit formatted (see `emit`), and their format manifest."""
    known = proven_units(committed) if committed is not None else {}
    keys = {unit: unit_key(unit) for name, file_units in units.items() if name.endswith(".py") for unit in file_units}
    missing = [unit for unit, key in keys.items() if key not in known]
    black_cache = cache.BlackCache(cache_dir) if missing and cache_dir is not None else None  # read only if needed
    if black_cache is not None:
        for unit in missing:
            text = black_cache.get(keys[unit])
            if text is not None:
                known[keys[unit]] = text
        missing = [unit for unit in missing if keys[unit] not in known]
    for unit, text in zip(missing, format_units(missing), strict=True):
        known[keys[unit]] = text
        if black_cache is not None:
            black_cache.put(keys[unit], text)
    if black_cache is not None:
        black_cache.save()
    files = {}
    formatted: dict[str, list[tuple[str, str]]] = {}
    for name, file_units in units.items():
        if name.endswith(".py"):
            formatted[name] = [(keys[unit], known[keys[unit]]) for unit in file_units]
            files[name] = join_units([text for _, text in formatted[name]])
        else:
            files[name] = "".join(file_units)
    changed = sum(reshaped(unit, known[key]) for unit, key in keys.items())
    return Generated(module, files, render_manifest(formatted), started, len(keys), len(missing), changed)
