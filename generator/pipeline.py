"""schema → load → IR → render → format: the whole generation, in one call."""

from __future__ import annotations

import hashlib
import pickle
import time
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from pathlib import Path

from generator import __version__
from generator.build import build_module
from generator.config import SchemaOptions
from generator.format import Formatter
from generator.ir import Alias, EnumType, Module, ObjectType, UnionType
from generator.load import load_schema
from generator.render import render_package


@dataclass
class Generated:
    module: Module
    files: dict[str, str]
    started: float

    def summary(self, package_dir: Path, verb: str) -> str:
        counts = {kind: sum(isinstance(t, kind) for t in self.module.types) for kind in (ObjectType, UnionType, EnumType, Alias)}
        return (
            f"{verb} {package_dir}: {len(self.module.types)} types ({counts[ObjectType]} objects, "
            f"{counts[UnionType]} unions, {counts[EnumType]} enums, {counts[Alias]} aliases), "
            f"{len(self.files)} files, {time.perf_counter() - self.started:.2f} s"
        )


def display_path(schema: Path, root: Path) -> str:
    """The schema's path as the generated header records it: relative to the project."""
    try:
        return schema.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return schema.name


@cache
def _generator_fingerprint() -> str:
    """What else the IR depends on: this generator's code and the schema-reading libraries."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    for name in ("datamodel-code-generator", "pydantic"):
        digest.update(version(name).encode())
    return digest.hexdigest()


def build_ir(
    schema: Path, package: str, root: Path, options: SchemaOptions | None = None, cache_dir: Path | None = None
) -> Module:
    """The IR of `schema`; with `cache_dir`, reused while the schema bytes, the
    options and the generator are unchanged (the key hashes all of them)."""
    path = display_path(schema, root)
    cached = None
    if cache_dir is not None:
        try:
            data = schema.read_bytes()
        except OSError:
            data = None  # load_schema reports it
        if data is not None:
            key = hashlib.sha256(repr((data, package, path, options, _generator_fingerprint())).encode()).hexdigest()
            cached = cache_dir / f"ir-{key}.pickle"
            try:
                with cached.open("rb") as handle:
                    module: Module = pickle.load(handle)
                return module
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                pass
    module = build_module(load_schema(schema), package, path, options)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(".tmp")
        temporary.write_bytes(pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL))
        temporary.replace(cached)
    return module


def generate(
    schema: Path, package: str, root: Path, cache_file: Path | None, options: SchemaOptions | None = None
) -> Generated:
    started = time.perf_counter()
    module = build_ir(schema, package, root, options, cache_file.parent if cache_file else None)
    units = render_package(module, {"generator": __version__, "black": version("black")})
    formatter = Formatter(cache_file)
    files = formatter.format_files(units)
    formatter.save()
    return Generated(module, files, started)
