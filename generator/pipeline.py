"""schema → load → IR → render → format: the whole generation, in one call."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import black

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


def build_ir(schema: Path, package: str, root: Path, options: SchemaOptions | None = None) -> Module:
    return build_module(load_schema(schema), package, display_path(schema, root), options)


def generate(
    schema: Path, package: str, root: Path, cache_file: Path | None, options: SchemaOptions | None = None
) -> Generated:
    started = time.perf_counter()
    module = build_ir(schema, package, root, options)
    units = render_package(module, {"generator": __version__, "black": black.__version__})
    formatter = Formatter(cache_file)
    files = formatter.format_files(units)
    formatter.save()
    return Generated(module, files, started)
