"""`python -m generator` / `acp-codegen`: generate, check, ir, diff, update-schema."""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
import tempfile
from pathlib import Path

from generator import ir, project, schema_source
from generator.config import Config, find_root, load_config
from generator.diff import FORMATS, diff_modules, format_markdown, format_text
from generator.errors import GenerationError
from generator.output import compare, write_beside, write_package
from generator.pipeline import build_ir, generate

EXIT_DRIFT = 1
EXIT_ERROR = 2
EXIT_BREAKING = 3
CHANGELOG_PATH = "schema/CHANGELOG.md"


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
        command.add_argument("--strict", action="store_true", help="fail (exit 2) on any schema-drift warning")
        command.add_argument(
            "--no-pyproject", action="store_true", help="write and compare no pyproject.toml beside the package"
        )
    update = commands.add_parser("update-schema", help="vendor a release of the npm package, then generate")
    update.add_argument("version", help="exact npm version, e.g. 2.4.0")
    changes = commands.add_parser("diff", help="the changelog of the generated API between two schemas")
    changes.add_argument("old", type=Path, help="the old schema file")
    changes.add_argument("new", type=Path, help="the new schema file")
    changes.add_argument("--format", choices=sorted(FORMATS), default="text", help="output format (default: text)")
    changes.add_argument("--package", help="package name (default: [tool.acp-codegen] package)")
    changes.add_argument("--fail-on-breaking", action="store_true", help=f"exit {EXIT_BREAKING} on a breaking change")
    return parser


def _schema(config: Config, explicit: Path | None) -> Path:
    """The explicit --schema as given, or the vendored one after checking its lock."""
    if explicit is not None:
        return explicit
    schema_source.verify_locked(config, config.schema)
    return config.schema


def _cache(config: Config, disabled: bool) -> Path | None:
    return None if disabled else config.root / ".cache" / "acp-codegen" / "black.pickle"


def _diff(config: Config, old: Path, new: Path, package: str, output: str, fail_on_breaking: bool) -> int:
    changes = diff_modules(build_ir(old, package, config.root), build_ir(new, package, config.root))
    print(FORMATS[output](changes))
    return EXIT_BREAKING if fail_on_breaking and any(change.breaking for change in changes) else 0


def _vendored(config: Config) -> tuple[str, ir.Module] | None:
    """The vendored version and its IR, before an update replaces them (None before the first)."""
    if not (config.schema.exists() and config.lock.exists()):
        return None
    return str(schema_source.read_lock(config)["version"]), build_ir(config.schema, config.package, config.root)


def _record_changelog(config: Config, old_version: str, old: ir.Module, version: str, new: ir.Module) -> None:
    """Print the API changelog of an update and prepend it to CHANGELOG_PATH (newest on top)."""
    changes = diff_modules(old, new)
    print(format_text(changes))
    path = config.root / CHANGELOG_PATH
    heading = f"## {old_version} → {version} ({datetime.date.today().isoformat()})"
    section = f"{heading}\n\n{format_markdown(changes, level=3)}\n"
    earlier = path.read_text() if path.exists() else ""
    path.write_text(section + ("\n" + earlier if earlier else ""))
    print(f"changelog prepended to {CHANGELOG_PATH}")


def _pyproject(config: Config, module: ir.Module) -> dict[str, str]:
    """The pyproject.toml that makes the directory holding the package pip-installable."""
    return {project.FILE: project.render_pyproject(module, project.schema_release(config, module.schema_sha256))}


def _update_schema(config: Config, version: str) -> int:
    """Vendor `version`, regenerate; on any failure put the old schema and lock back.
    Only after success is the API changelog (old → new) added to CHANGELOG_PATH."""
    previous = _vendored(config)
    package_dir = config.out / config.package
    project.ensure_generated(package_dir.parent / project.FILE)
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
            beside = _pyproject(config, result.module)  # versioned from the new lock
        except BaseException:
            for path in tracked:
                if path in saved:
                    shutil.copy2(backup / path.relative_to(config.root), path)
                else:
                    path.unlink(missing_ok=True)  # the update brought it; take it away again
            raise
        write_beside(package_dir, beside)
        write_package(package_dir, result.files)
    print(f"vendored {config.npm_package}@{version}")
    print(result.summary(package_dir, "generated"))
    if previous is not None:
        _record_changelog(config, *previous, version, result.module)
    return 0


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    config = load_config(find_root(Path.cwd()))
    if args.command == "update-schema":
        return _update_schema(config, args.version)
    if args.command == "diff":
        return _diff(config, args.old, args.new, args.package or config.package, args.format, args.fail_on_breaking)
    schema = _schema(config, args.schema)
    package = args.package or config.package
    package_dir = (args.out or config.out) / package
    if args.command == "ir":
        print(json.dumps(ir.to_json(build_ir(schema, package, config.root, config.options)), indent=2))
        return 0
    if not args.no_pyproject:
        project.ensure_generated(package_dir.parent / project.FILE)
    result = generate(schema, package, config.root, _cache(config, args.no_cache), config.options)
    for warning in result.module.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.strict and result.module.warnings:
        print("error: --strict and the warnings above; nothing was written", file=sys.stderr)
        return EXIT_ERROR
    beside = {} if args.no_pyproject else _pyproject(config, result.module)
    if args.command == "generate":
        write_beside(package_dir, beside)
        write_package(package_dir, result.files)
        print(result.summary(package_dir, "generated"))
        return 0
    drift = compare(package_dir, result.files, beside)
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
