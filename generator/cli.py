"""`python -m generator` / `acp-codegen`: generate, check, ir, update-schema."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from generator import ir, schema_source
from generator.config import Config, find_root, load_config
from generator.errors import GenerationError
from generator.output import compare, write_package
from generator.pipeline import build_ir, generate

EXIT_DRIFT = 1
EXIT_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="acp-codegen", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("generate", "generate the package into --out"),
        ("check", "regenerate in memory and compare with --out (exit 1 on drift)"),
        ("ir", "print the intermediate representation as JSON"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--schema", type=Path, help="schema file (default: the vendored, locked one)")
        command.add_argument("--out", type=Path, help="output directory (default: [tool.acp-codegen] out)")
        command.add_argument("--package", help="package name (default: [tool.acp-codegen] package)")
        command.add_argument("--no-cache", action="store_true", help="format everything with black afresh")
    update = commands.add_parser("update-schema", help="vendor a release of the npm package, then generate")
    update.add_argument("version", help="exact npm version, e.g. 2.4.0")
    return parser


def _schema(config: Config, explicit: Path | None) -> Path:
    """The explicit --schema as given, or the vendored one after checking its lock."""
    if explicit is not None:
        return explicit
    schema_source.verify_locked(config, config.schema)
    return config.schema


def _cache(config: Config, disabled: bool) -> Path | None:
    return None if disabled else config.root / ".cache" / "acp-codegen" / "black.pickle"


def _update_schema(config: Config, version: str) -> int:
    """Vendor `version`, regenerate; on any failure put the old schema and lock back."""
    tracked = [config.root / name for name in (*config.schema_files, schema_source.LICENSE_PATH)] + [config.lock]
    with tempfile.TemporaryDirectory() as work:
        fetched = Path(work) / "fetched"
        lock = schema_source.fetch(config, version, fetched)
        backup = Path(work) / "backup"
        saved = [path for path in tracked if path.exists()]
        for path in saved:
            target = backup / path.relative_to(config.root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        try:
            for name in (*config.schema_files, schema_source.LICENSE_PATH):
                (config.root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(fetched / name, config.root / name)
            config.lock.write_text(json.dumps(lock, indent=2) + "\n")
            result = generate(config.schema, config.package, config.root, _cache(config, False), config.options)
        except BaseException:
            for path in saved:
                shutil.copy2(backup / path.relative_to(config.root), path)
            raise
        write_package(config.out / config.package, result.files)
    print(f"vendored {config.npm_package}@{version}")
    print(result.summary(config.out / config.package, "generated"))
    return 0


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    config = load_config(find_root(Path.cwd()))
    if args.command == "update-schema":
        return _update_schema(config, args.version)
    schema = _schema(config, args.schema)
    package = args.package or config.package
    package_dir = (args.out or config.out) / package
    if args.command == "ir":
        print(json.dumps(ir.to_json(build_ir(schema, package, config.root, config.options)), indent=2))
        return 0
    result = generate(schema, package, config.root, _cache(config, args.no_cache), config.options)
    if args.command == "generate":
        write_package(package_dir, result.files)
        print(result.summary(package_dir, "generated"))
        return 0
    drift = compare(package_dir, result.files)
    if not drift.clean:
        print(drift.report(package_dir), file=sys.stderr)
        return EXIT_DRIFT
    print(result.summary(package_dir, "up to date:"))
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except GenerationError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
