"""Write the generated package atomically, or compare it with what is on disk, byte for byte."""

from __future__ import annotations

import difflib
import os
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from generator.errors import GenerationError
from generator.output.manifest import manifest_path

IGNORED = ("__pycache__",)
MAX_DIFF_LINES = 200
STAGING = (".new-", ".old-")  # name parts of the directories a write works in, beside the package


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


def _remove_stale_staging(package_dir: Path) -> None:
    """Remove what an interrupted write left beside the package."""
    for prefix in (f".{package_dir.name}{part}" for part in STAGING):
        for leftover in package_dir.parent.glob(f"{prefix}*"):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)


def write_package(package_dir: Path, files: dict[str, str]) -> None:
    """Replace `package_dir` with exactly `files`: built beside it, then swapped in,
    so a failure at any point leaves the old package as it was. Files and
    directories get the permissions the umask gives any new file."""
    _check_directory(package_dir.parent)
    _check_directory(package_dir)
    try:
        package_dir.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_staging(package_dir)
        staging = package_dir.with_name(f".{package_dir.name}.new-{secrets.token_hex(4)}")
        staging.mkdir()
    except OSError as error:
        raise GenerationError(str(package_dir.parent), f"cannot write the package here: {error.strerror}") from None
    try:
        for name, text in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode())
        if package_dir.exists():
            retired = package_dir.with_name(f".{package_dir.name}.old-{secrets.token_hex(4)}")
            package_dir.rename(retired)
            staging.rename(package_dir)
            shutil.rmtree(retired, ignore_errors=True)  # done: a leftover is removed by the next write
        else:
            staging.rename(package_dir)
    except OSError as error:
        raise GenerationError(str(package_dir), f"cannot write the package: {error.strerror}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def write_manifest(package_dir: Path, text: str) -> None:
    """Write the package's format manifest beside it, atomically."""
    path = manifest_path(package_dir)
    _check_directory(path.parent)
    temporary = path.with_name(f".{path.name}.new-{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(text.encode())
        os.replace(temporary, path)
    except OSError as error:
        raise GenerationError(str(path), f"cannot write the format manifest: {error.strerror}") from None
    finally:
        temporary.unlink(missing_ok=True)


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

    def report(self, package_dir: Path) -> str:
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
        lines.append("Run `make generate` and commit the result.")
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


def write_beside(package_dir: Path, files: dict[str, str]) -> None:
    """Write `files` into the directory that holds the package, each atomically
    (written beside its target, then renamed over it)."""
    _check_directory(package_dir.parent)
    package_dir.parent.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = package_dir.parent / name
        temporary = target.with_name(f".{name}.new-{secrets.token_hex(4)}")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)


def compare(
    package_dir: Path, files: dict[str, str], manifest: str | None = None, beside: dict[str, str] | None = None
) -> Drift:
    """How `package_dir` differs from `files`, its format manifest from `manifest` (if given),
    and the directory that holds it from `beside` (reported as `../name`; nothing else there is looked at)."""
    existing = _on_disk(package_dir)
    drift = Drift()
    for name in sorted(set(files) | set(existing)):
        if name not in existing:
            drift.missing.append(name)
        elif name not in files or not existing[name].is_file():
            drift.extra.append(name)
        else:
            drift.compare_file(name, existing[name], files[name])
    if manifest is not None:
        path = manifest_path(package_dir)
        if path.is_file():
            drift.compare_file(f"../{path.name}", path, manifest)
        else:
            drift.missing.append(f"../{path.name}")
    for name, text in (beside or {}).items():
        path = package_dir.parent / name
        if path.is_file():
            drift.compare_file(f"../{name}", path, text)
        else:
            drift.missing.append(f"../{name}")
    return drift
