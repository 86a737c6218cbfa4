"""`python -m generator` / `acp-codegen`: generate, check, ir, diff, update-schema."""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from generator.changes.changelog import FORMATS, format_markdown, format_text
from generator.changes.diff import diff_modules
from generator.config import (
    Commands,
    Config,
    PackageConfig,
    SchemaOptions,
    find_root,
    load_config,
    schema_dir_problem,
    vendored_path_problem,
)
from generator.errors import UNKNOWN_TYPE, GenerationError, SchemaWarning
from generator.ir import model
from generator.output import cache, project
from generator.output.write import PackageFiles, compare, write_packages
from generator.pipeline import build_ir, emit, emit_runtime, with_commands
from generator.schema import vendor

EXIT_DRIFT = 1
EXIT_ERROR = 2
EXIT_BREAKING = 3
EXIT_INTERRUPTED = 130
CHANGELOG = "CHANGELOG.md"  # beside the lock: the API changelog update-schema prepends to
CACHE_DIR = ".cache/acp-codegen"
# The warnings the last generate or check printed (cause and text): the next prints only the others.
WARNED_FILE = "warned.json"
DIFF_PACKAGE = "acp"  # what `diff` calls the package outside a configured project (the changelog names no package)
# The arguments of generate and check that decide what they write (the generated headers repeat them).
OUTPUT_OPTIONS = ("schema", "out", "package", "schema_dirs", "no_pyproject")


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
        _schema_dir_argument(command)
        command.add_argument(
            "--no-cache",
            "--full",
            dest="no_cache",
            action="store_true",
            help="run black on every unit: trust neither the cache nor the committed format manifest",
        )
        command.add_argument("--strict", action="store_true", help="fail (exit 2) on any schema-drift warning")
        _no_pyproject_argument(command)
    update = commands.add_parser("update-schema", help="vendor a release of the npm package, then generate")
    update.add_argument("version", help="exact npm version, e.g. 2.4.0")
    update.add_argument(
        "--path",
        dest="paths",
        action="append",
        type=_mapping,
        default=[],
        metavar="NPM_PATH=PROJECT_PATH",
        help="vendor the npm package's file NPM_PATH as PROJECT_PATH (repeatable; in place of [tool.acp-codegen] "
        "schema-files)",
    )
    _no_pyproject_argument(update)
    changes = commands.add_parser("diff", help="the changelog of the generated API between two schemas")
    changes.add_argument("old", type=Path, help="the old schema file")
    changes.add_argument("new", type=Path, help="the new schema file")
    changes.add_argument("--format", choices=sorted(FORMATS), default="text", help="output format (default: text)")
    changes.add_argument("--package", help="package name the changelog speaks of (default: the configured one)")
    changes.add_argument("--fail-on-breaking", action="store_true", help=f"exit {EXIT_BREAKING} on a breaking change")
    _schema_dir_argument(changes)
    return parser


def _no_pyproject_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--no-pyproject",
        action="store_true",
        help="write and compare no pyproject.toml beside the packages (also: [tool.acp-codegen] pyproject = false)",
    )


def _mapping(text: str) -> tuple[str, str]:
    source, equals, target = text.partition("=")
    if not equals:
        raise argparse.ArgumentTypeError("expected NPM_PATH=PROJECT_PATH")
    problem = vendored_path_problem(source) or vendored_path_problem(target)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return source, target


def _schema_dir_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--schema-dir",
        dest="schema_dirs",
        action="append",
        type=_schema_dir,
        default=[],
        metavar="PREFIX=DIR",
        help="read the documents whose URIs start with PREFIX from DIR (repeatable; beside [tool.acp-codegen] "
        "schema-dirs); a $ref to a document no prefix maps is an error, nothing is fetched from the network",
    )


def _schema_dir(text: str) -> tuple[str, Path]:
    prefix, equals, directory = text.partition("=")
    problem = schema_dir_problem(prefix) if equals and directory else "expected PREFIX=DIR"
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return prefix, Path(directory)  # as given: the generated headers repeat it


def _schema(config: Config, explicit: Path | None) -> Path:
    """The explicit --schema as given, or the vendored one after checking its lock."""
    if explicit is not None:
        return explicit
    if config.schema is None:
        raise _unconfigured(config, "--schema")
    vendor.verify_locked(config, config.schema)
    return config.schema


def _unconfigured(config: Config, option: str) -> GenerationError:
    return GenerationError(
        str(config.root / "pyproject.toml"), f"no [tool.acp-codegen] table here or above: pass {option}"
    )


def _cache(config: Config, disabled: bool) -> Path | None:
    """The cache directory, ready for use, or None with --no-cache."""
    if disabled:
        return None
    cache_dir = config.root / CACHE_DIR
    cache.prepare(cache_dir)
    return cache_dir


def _diff(config: Config, args: argparse.Namespace) -> int:
    """The API changelog between two schema files: in a configured project its schema-dirs read
    the documents their `$ref`s name; anywhere else the command line is enough."""
    package = args.package or config.package or DIFF_PACKAGE
    # the documents, not the project's rules (the official schema's shipped ones, unless turned off)
    options = SchemaOptions(schema_dirs=config.options.schema_dirs, official_defaults=config.options.official_defaults)
    old, new = (build_ir(path, package, config.root, options) for path in (args.old, args.new))
    changes = diff_modules(old, new)
    print(FORMATS[args.format](changes))
    return EXIT_BREAKING if args.fail_on_breaking and any(change.breaking for change in changes) else 0


def _vendored(config: Config, schema: Path, lock: Path, package: str) -> tuple[str, model.Module] | None:
    """The vendored version and its IR, before an update replaces them (None before the first)."""
    if not (schema.exists() and lock.exists()):
        return None
    return str(vendor.read_lock(config)["version"]), build_ir(schema, package, config.root)


def _changelog_section(old_version: str, old: model.Module, version: str, new: model.Module) -> tuple[str, str]:
    """The API changelog of an update: as printed, and as the section the changelog gains."""
    changes = diff_modules(old, new)
    heading = f"## {old_version} → {version} ({datetime.date.today().isoformat()})"
    return format_text(changes), f"{heading}\n\n{format_markdown(changes, level=3)}\n"


def _pyproject(config: Config, modules: list[model.Module], runtime_package: str | None = None) -> dict[str, str]:
    """The pyproject.toml that makes the directory holding the packages pip-installable: one
    distribution, named and versioned after the first (primary) package, with the runtime
    package they share (if any)."""
    release = project.schema_release(config, modules[0].schema_sha256)
    return {project.FILE: project.render_pyproject(modules, release, runtime_package)}


def _update_schema(config: Config, args: argparse.Namespace, written: Commands) -> int:
    """Vendor `args.version` (as npm resolves it), regenerate every configured package and prepend
    the API changelog: schema files, lock, changelog and generated packages change together, or,
    on any failure or interruption before the packages are written, not at all."""
    if args.paths:
        config = replace(config, schema_files=tuple(args.paths))
    if config.lock is None or config.schema is None or not config.schema_files:
        where = str(config.root / "pyproject.toml")
        raise GenerationError(
            where,
            "update-schema needs a [tool.acp-codegen] table naming the lock, the packages and schema-files "
            "(or --path NPM_PATH=PROJECT_PATH)",
        )
    out = _out(config, None)
    with_pyproject = config.pyproject and not args.no_pyproject
    targets = config.packages
    previous = [_vendored(config, package.schema, config.lock, package.package) for package in targets]
    changelog = config.lock.parent / CHANGELOG
    if with_pyproject:
        project.ensure_generated(out / project.FILE)
    # what fetch brings (at the project's paths), then what the update writes; write_packages puts
    # back the package and the files beside it
    vendored = [*(config.root / target for _, target in config.schema_files), vendor.license_path(config)]
    tracked = [*vendored, config.lock, changelog]
    with tempfile.TemporaryDirectory() as work:
        fetched = Path(work) / "fetched"
        lock = vendor.fetch(config, args.version, fetched)
        resolved = str(lock["version"])
        backup = Path(work) / "backup"
        saved = [path for path in tracked if path.exists()]
        for index, path in enumerate(saved):
            target = backup / str(index)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        try:
            for path in vendored:
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(fetched / path.relative_to(config.root), path)
            config.lock.write_text(json.dumps(lock, indent=2) + "\n")
            cache_dir = _cache(config, False)
            modules = [
                build_ir(
                    package.schema, package.package, config.root, config.options, cache_dir, package.protocol_version
                )
                for package in targets
            ]
            shared = config.runtime_package
            results = [
                emit(with_commands(module, written), cache_dir, out / module.package, None, shared)
                for module in modules
            ]
            printed, sections = [], []
            for old, result in zip(previous, results, strict=True):
                if old is not None:
                    text, section = _changelog_section(*old, resolved, result.module)
                    if len(targets) > 1:  # one section per package, headed with its name
                        text = f"{result.module.package}:\n{text}"
                        section = section.replace("## ", f"## {result.module.package}: ", 1)
                    printed.append(text)
                    sections.append(section)
            if sections:
                earlier = changelog.read_text() if changelog.exists() else ""
                changelog.write_text("\n".join(sections) + ("\n" + earlier if earlier else ""))
            # last: the swaps that commit the update; the pyproject is versioned from the new lock
            beside = _pyproject(config, [result.module for result in results], shared) if with_pyproject else {}
            runtime = [emit_runtime(results, shared, cache_dir, out / shared)] if shared is not None else []
            write_packages(
                [
                    PackageFiles(out / result.module.package, result.files, result.manifest)
                    for result in [*results, *runtime]
                ],
                beside,
            )
        except BaseException:
            for path in tracked:
                if path in saved:
                    shutil.copy2(backup / str(saved.index(path)), path)
                else:
                    path.unlink(missing_ok=True)  # the update brought it; take it away again
            raise
    print(f"vendored {config.npm_package}@{resolved}")
    for result in results:
        print(result.summary(out / result.module.package, "generated"))
    for text in printed:
        print(text)
    if printed:
        print(f"changelog prepended to {changelog.relative_to(config.root)}")
    return 0


def _package(config: Config, explicit: str | None) -> str:
    package = explicit or config.package
    if package is None:
        raise _unconfigured(config, "--package")
    return package


def _out(config: Config, explicit: Path | None) -> Path:
    out = explicit or config.out
    if out is None:
        raise _unconfigured(config, "--out")
    return out


def _targets(config: Config, args: argparse.Namespace) -> list[PackageConfig]:
    """The packages a generate/check/ir run writes: the one --schema or --package names (the
    schema as given, or the vendored one after checking its lock), else every configured one."""
    if args.schema is not None or args.package is not None or len(config.packages) <= 1:
        version = config.packages[0].protocol_version if config.packages and args.schema is None else None
        return [PackageConfig(_schema(config, args.schema), _package(config, args.package), version)]
    for target in config.packages:
        vendor.verify_locked(config, target.schema)
    return list(config.packages)


def _warnings(modules: list[model.Module], ignored: tuple[str, ...]) -> list[SchemaWarning]:
    """The modules' warnings, one per cause (the first module's text of it), without those
    `ignored` names by code or cause. With several packages a config row that names a type
    only some of their schemas have is what one config serving several schemas means: it is a
    warning only when no schema has the type."""
    first: dict[str, SchemaWarning] = {}
    counts: dict[str, int] = {}
    for module in modules:
        for cause in dict.fromkeys(warning.cause for warning in module.warnings):
            counts[cause] = counts.get(cause, 0) + 1
        for warning in module.warnings:
            first.setdefault(warning.cause, warning)
    return [
        warning
        for cause, warning in first.items()
        if (counts[cause] == len(modules) or warning.code != UNKNOWN_TYPE)
        and warning.code not in ignored
        and cause not in ignored
    ]


def _print_warnings(warnings: list[SchemaWarning], cache_dir: Path | None) -> None:
    """Print each warning the last run in this project (its cache) did not print: a warning is
    printed once per cause, while its text stays the same; without a cache (--no-cache, --strict)
    every one. The cache then remembers these warnings, and forgets those gone."""
    keys = [f"{warning.cause}\0{warning.text}" for warning in warnings]
    shown = cache.read(cache_dir / WARNED_FILE) if cache_dir is not None else None
    known = set(shown) if isinstance(shown, list) and all(isinstance(key, str) for key in shown) else set()
    for warning, key in zip(warnings, keys, strict=True):
        if key not in known:
            print(f"warning: {warning}", file=sys.stderr)
    if cache_dir is not None and set(keys) != known:
        cache.write(cache_dir / WARNED_FILE, keys)


def _program(argv0: str) -> str:
    """How the user started the generator: `python -m generator` or the `acp-codegen` script."""
    path = Path(argv0)
    return "python -m generator" if (path.parent.name, path.name) == ("generator", "__main__.py") else "acp-codegen"


def _commands(config: Config, program: str, args: argparse.Namespace) -> Commands:
    """The project's commands, and for those it does not name, the command as the user ran it
    with the arguments that decide what generate and check write."""
    given = []
    for option in OUTPUT_OPTIONS:
        value = getattr(args, option, None)
        flag = "--" + option.replace("_", "-")
        if option == "schema_dirs":
            given += [item for prefix, directory in value or () for item in ("--schema-dir", f"{prefix}={directory}")]
        elif value is True:
            given.append(flag)
        elif value not in (None, False):
            given += [flag, str(value)]
    arguments = "".join(f" {shlex.quote(item)}" for item in given)
    return Commands(
        generate=config.commands.generate or f"{program} generate{arguments}",
        check=config.commands.check or f"{program} check{arguments}",
        update_schema=config.commands.update_schema or f"{program} update-schema VERSION",
    )


def run(argv: list[str], program: str = "acp-codegen") -> int:
    args = _parser().parse_args(argv)
    config = load_config(find_root(Path.cwd()))
    # Files name the installed script, so their bytes do not depend on how the generator was
    # started (`python -m generator generate` then `acp-codegen check` finds no drift);
    # messages name the command as the user ran it.
    written = _commands(config, "acp-codegen", args)
    config = replace(config, commands=_commands(config, program, args))
    if getattr(args, "schema_dirs", None):
        given = [(prefix, directory.absolute()) for prefix, directory in args.schema_dirs]
        config = replace(config, options=config.options.with_schema_dirs(given))
    if args.command == "update-schema":
        return _update_schema(config, args, written)
    if args.command == "diff":
        return _diff(config, args)
    targets = _targets(config, args)
    if args.command == "ir":
        target = targets[0]
        ir = build_ir(target.schema, target.package, config.root, config.options, None, target.protocol_version)
        print(json.dumps(model.to_json(ir), indent=2))
        return 0
    out = _out(config, args.out)
    with_pyproject = config.pyproject and not args.no_pyproject
    if with_pyproject:
        project.ensure_generated(out / project.FILE)
    started = time.perf_counter()
    cache_dir = _cache(config, args.no_cache)
    modules = [
        with_commands(
            build_ir(target.schema, target.package, config.root, config.options, cache_dir, target.protocol_version),
            written,
        )
        for target in targets
    ]
    warnings = _warnings(modules, config.ignore_warnings)
    _print_warnings(warnings, None if args.strict else cache_dir)
    if args.strict and warnings:
        print("error: --strict and the warnings above; nothing was written", file=sys.stderr)
        return EXIT_ERROR
    # the shared runtime package: only for the configured packages, not one --schema or --package names
    shared = config.runtime_package if targets == list(config.packages) else None
    results = [
        emit(module, cache_dir, None if args.no_cache else out / module.package, started, shared) for module in modules
    ]
    if shared is not None:
        results.append(emit_runtime(results, shared, cache_dir, None if args.no_cache else out / shared))
    beside = _pyproject(config, modules, shared) if with_pyproject else {}
    if args.command == "generate":
        # every package and the files beside them in one write: all new, or (on an error) all as they were
        write_packages(
            [PackageFiles(out / result.module.package, result.files, result.manifest) for result in results], beside
        )
        for result in results:
            print(result.summary(out / result.module.package, "generated"))
        return 0
    drifted = False
    for index, result in enumerate(results):
        package_dir = out / result.module.package
        drift = compare(package_dir, result.files, result.manifest, beside if index == len(results) - 1 else {})
        if not drift.clean:
            print(drift.report(package_dir, config.commands.generate or "acp-codegen generate"), file=sys.stderr)
            drifted = True
        else:
            print(result.summary(package_dir, "up to date:"))
    return EXIT_DRIFT if drifted else 0


def main(argv: list[str] | None = None) -> int:
    """Run the command; a user error is one line on stderr, never a traceback."""
    try:
        return run(sys.argv[1:] if argv is None else argv, _program(sys.argv[0]))
    except GenerationError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as error:
        where = error.filename if error.filename is not None else "acp-codegen"
        print(f"error: {where}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
