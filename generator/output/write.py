"""Write the generated package atomically, or compare it with what is on disk, byte for byte.

A write first makes everything new beside what it replaces: the package in
`.<package>.new-<hex>/`, each file beside the package (its format manifest, its
pyproject.toml) in `.<name>.new-<hex>`. Then it commits, in this order:

1. each file beside the package replaces its old version (`os.replace`, atomic);
2. the old package is renamed to `.<package>.old-<hex>`;
3. the new package is renamed to `<package>` (no rename puts a directory in
   place of a non-empty one, hence two);
4. the old package is deleted.

An exception before 4 (an OSError, a KeyboardInterrupt) undoes what was done, in
reverse order, and removes what the write made. A kill undoes nothing: between 2
and 3 it leaves no package, only its `.old-` copy; between 1 and 3 the new files
beside the old package. So every write and every check starts with `recover`,
which renames a lone `.old-` copy back to the package (it is the package, renamed
whole) and removes every other `.new-` and `.old-` leftover. After a kill and
`recover` the package is whole, old or new, and the new package never has the
old files beside it; the old one may have the new ones, which `check` then
reports (the package's files differ from a fresh generation) until `generate`
runs again. Two writes at once in one directory are not supported.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from generator.errors import GenerationError
from generator.output.manifest import manifest_path

IGNORED = ("__pycache__",)
MAX_DIFF_LINES = 200
NEW, OLD = "new", "old"  # the tags of the names a write uses beside what it replaces


@cache
def ordinary_mode() -> int:
    """The permissions a new file gets here (0o644 under the usual umask 022)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _on_disk(package_dir: Path) -> dict[str, Path]:
    if not package_dir.is_dir():
        return {}
    return {
        path.relative_to(package_dir).as_posix(): path
        for path in sorted(package_dir.rglob("*"))
        if not path.is_dir() and not any(part in IGNORED for part in path.relative_to(package_dir).parts)
    }


def _check_directory(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise GenerationError(str(path), "exists and is not a directory; choose another --out")


def _outside(package_dir: Path, manifest: str | None, beside: dict[str, str] | None) -> dict[Path, str]:
    """The files written beside the package: its format manifest (if given) and `beside` (name → text)."""
    files = {} if manifest is None else {manifest_path(package_dir): manifest}
    return files | {package_dir.parent / name: text for name, text in (beside or {}).items()}


def _fresh(target: Path, tag: str) -> Path:
    """A new name beside `target` for a write to use: `.<name>.<tag>-<8 hex digits>`."""
    return target.with_name(f".{target.name}.{tag}-{secrets.token_hex(4)}")


def _leftovers(target: Path, tag: str) -> list[Path]:
    """The names `_fresh(target, tag)` gave that exist."""
    return sorted(target.parent.glob(f".{target.name}.{tag}-" + "[0-9a-f]" * 8))


def _remove(*paths: Path) -> None:
    """Remove each path that is there (a directory with all it holds), as far as the OS allows."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            with contextlib.suppress(OSError):
                path.unlink()


def recover(package_dir: Path, outside: Iterable[Path] = ()) -> None:
    """Repair what a killed write left beside `package_dir` and the files `outside` it:
    put the old package back if the kill came between its two renames, then remove
    every staging copy and temporary file (see the module's docstring)."""
    retired = _leftovers(package_dir, OLD)
    if retired and not package_dir.exists():
        retired.pop().rename(package_dir)
    _remove(*retired, *_leftovers(package_dir, NEW), *(path for file in outside for path in _leftovers(file, NEW)))


def _stage(staging: Path, files: dict[str, str], temporaries: dict[Path, str]) -> None:
    staging.mkdir()
    for name, text in files.items():
        target = staging / name
        if not target.parent.is_dir():
            target.parent.mkdir(parents=True)
        target.write_bytes(text.encode())
    _stage_files(temporaries)


def _stage_files(temporaries: dict[Path, str]) -> None:
    for temporary, text in temporaries.items():
        temporary.write_bytes(text.encode())


def _saved(path: Path) -> tuple[bytes, int] | None:
    """The bytes and permissions of the file at `path`; None if there is none."""
    return (path.read_bytes(), stat.S_IMODE(path.stat().st_mode)) if path.exists() else None


def _restore(previous: dict[Path, tuple[bytes, int] | None]) -> None:
    """Put back the files beside the package as `_saved` found them."""
    for path, saved in previous.items():
        if saved is None:
            path.unlink(missing_ok=True)
            continue
        temporary = _fresh(path, NEW)
        temporary.write_bytes(saved[0])
        temporary.chmod(saved[1])
        os.replace(temporary, path)


def _swap_back(package_dir: Path, staging: Path, retired: Path, existed: bool) -> None:
    """Undo the two renames of the package, whichever of them happened."""
    if package_dir.exists() and not staging.exists():  # the new package is in
        package_dir.rename(staging)
    if existed and not package_dir.exists():
        retired.rename(package_dir)


@dataclass(frozen=True)
class PackageFiles:
    """One package a write replaces: its directory, exactly these files, and its format manifest."""

    directory: Path
    files: dict[str, str]
    manifest: str | None = None


def write_package(
    package_dir: Path, files: dict[str, str], manifest: str | None = None, beside: dict[str, str] | None = None
) -> None:
    """Replace `package_dir` with exactly `files`, its format manifest with `manifest` (if
    given) and each of `beside` (name → text) in the directory that holds it: all new when
    it returns, all as they were when it raises (see the module's docstring for a kill).
    Files and directories get the permissions the umask gives any new file."""
    write_packages([PackageFiles(package_dir, files, manifest)], beside)


def write_packages(packages: Sequence[PackageFiles], beside: dict[str, str] | None = None) -> None:
    """`write_package` for several packages at once (packages generated together, their shared
    runtime among them), `beside` going into the directory that holds the first: every package
    and file new when it returns, every one as it was when it raises. A kill between two
    packages' renames may leave some new and others old: `check` reports those until the next
    `generate`."""
    outside: dict[Path, str] = {}
    for package in packages:
        outside |= _outside(package.directory, package.manifest, None)
    outside |= _outside(packages[0].directory, None, beside)
    try:
        for package in packages:
            _check_directory(package.directory.parent)
            _check_directory(package.directory)
            if not package.directory.parent.is_dir():
                package.directory.parent.mkdir(parents=True)
            recover(package.directory, outside)
    except OSError as error:
        where = str(error.filename or packages[0].directory.parent)
        raise GenerationError(where, f"cannot write the package here: {error.strerror}") from None
    swaps = [(package, _fresh(package.directory, NEW), _fresh(package.directory, OLD)) for package in packages]
    existed = {package.directory: package.directory.exists() for package in packages}
    temporaries = {path: _fresh(path, NEW) for path in outside}
    made = [*(staging for _, staging, _ in swaps), *temporaries.values()]
    try:
        try:  # nothing replaced yet: undoing is removing what the write made
            previous = {path: _saved(path) for path in outside}
            for package, staging, _ in swaps:
                _stage(staging, package.files, {})
            _stage_files({temporaries[path]: text for path, text in outside.items()})
        except BaseException:
            _remove(*made)
            raise
        try:  # steps 1 to 3 of the module's docstring, package after package
            for path, temporary in temporaries.items():
                os.replace(temporary, path)
            for package, staging, retired in swaps:
                if existed[package.directory]:
                    package.directory.rename(retired)
                staging.rename(package.directory)
        except BaseException:
            for package, staging, retired in reversed(swaps):
                _swap_back(package.directory, staging, retired, existed[package.directory])
            _restore(previous)
            _remove(*made)
            raise
    except OSError as error:
        where = str(error.filename or packages[0].directory)
        raise GenerationError(where, f"cannot write the package: {error.strerror}") from None
    _remove(
        *(retired for _, _, retired in swaps)
    )  # step 4, once committed: what an interrupt leaves, `recover` removes


@dataclass
class Drift:
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    mode: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.mode)

    def report(self, package_dir: Path, regenerate: str) -> str:
        """What differs, and the fix: `regenerate` is the command that writes a fresh generation."""
        lines = [f"{package_dir} differs from a fresh generation:"]
        for label, names in (
            ("changed", self.changed),
            ("missing", self.missing),
            ("extra", self.extra),
            ("mode", self.mode),
        ):
            for name in names:
                lines.append(f"  {label}: {name}")
        shown = self.diff[:MAX_DIFF_LINES]
        lines.extend(shown)
        if len(self.diff) > len(shown):
            lines.append(f"... {len(self.diff) - len(shown)} more diff lines")
        lines.append(f"Run `{regenerate}` and commit the result.")
        return "\n".join(lines)

    def compare_file(self, name: str, path: Path, text: str) -> None:
        """Record how the file at `path` differs from `text` (its bytes and its mode)."""
        expected = text.encode()
        found = path.read_bytes()
        if found != expected:
            self.changed.append(name)
            shown = found.decode("utf-8", errors="replace")
            if shown.replace("\r\n", "\n") == text:
                self.diff.append(f"{name}: line endings differ (CRLF on disk)")
            else:
                self.diff.extend(
                    difflib.unified_diff(
                        shown.splitlines(), text.splitlines(), f"{name} (on disk)", f"{name} (generated)", lineterm=""
                    )
                )
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode != ordinary_mode():
            self.mode.append(f"{name} is {mode:#o}, expected {ordinary_mode():#o}")


def compare(
    package_dir: Path, files: dict[str, str], manifest: str | None = None, beside: dict[str, str] | None = None
) -> Drift:
    """How `package_dir` differs from `files`, its format manifest from `manifest` (if given),
    and the directory that holds it from `beside` (reported as `../name`; nothing else there is
    looked at), once `recover` has repaired what a killed write left."""
    outside = _outside(package_dir, manifest, beside)
    recover(package_dir, outside)
    existing = _on_disk(package_dir)
    drift = Drift()
    for name in sorted(set(files) | set(existing)):
        if name not in existing:
            drift.missing.append(name)
        elif name not in files or not existing[name].is_file():
            drift.extra.append(name)
        else:
            drift.compare_file(name, existing[name], files[name])
    for path, text in outside.items():
        if path.is_file():
            drift.compare_file(f"../{path.name}", path, text)
        else:
            drift.missing.append(f"../{path.name}")
    return drift
