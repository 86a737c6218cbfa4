"""Write the generated package atomically, or compare it with what is on disk."""

from __future__ import annotations

import difflib
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

IGNORED = ("__pycache__",)
MAX_DIFF_LINES = 200


def _on_disk(package_dir: Path) -> dict[str, str]:
    if not package_dir.is_dir():
        return {}
    found = {}
    for path in sorted(package_dir.rglob("*")):
        if path.is_file() and not any(part in IGNORED for part in path.parts) and path.suffix != ".pyc":
            found[path.relative_to(package_dir).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return found


def write_package(package_dir: Path, files: dict[str, str]) -> None:
    """Replace `package_dir` with exactly `files`: built beside it, then swapped in,
    so a failure at any point leaves the old package as it was."""
    package_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{package_dir.name}.new-", dir=package_dir.parent))
    try:
        for name, text in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        if package_dir.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{package_dir.name}.old-", dir=package_dir.parent))
            package_dir.rename(retired / package_dir.name)
            staging.rename(package_dir)
            shutil.rmtree(retired)
        else:
            staging.rename(package_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


@dataclass
class Drift:
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.changed or self.missing or self.extra)

    def report(self, package_dir: Path) -> str:
        lines = [f"{package_dir} differs from a fresh generation:"]
        for label, names in (("changed", self.changed), ("missing", self.missing), ("extra", self.extra)):
            for name in names:
                lines.append(f"  {label}: {name}")
        shown = self.diff[:MAX_DIFF_LINES]
        lines.extend(shown)
        if len(self.diff) > len(shown):
            lines.append(f"... {len(self.diff) - len(shown)} more diff lines")
        lines.append("Run `make generate` and commit the result.")
        return "\n".join(lines)


def write_beside(package_dir: Path, files: dict[str, str]) -> None:
    """Write `files` into the directory that holds the package, each atomically
    (written beside its target, then renamed over it)."""
    package_dir.parent.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = package_dir.parent / name
        temporary = target.with_name(f".{name}.new-{secrets.token_hex(4)}")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)


def compare(package_dir: Path, files: dict[str, str], beside: dict[str, str] | None = None) -> Drift:
    """How `package_dir` differs from `files`, and the directory that holds it
    from `beside` (reported as `../name`; nothing else there is looked at)."""
    existing = _on_disk(package_dir)
    drift = Drift()
    for name in sorted(set(files) | set(existing)):
        if name not in existing:
            drift.missing.append(name)
        elif name not in files:
            drift.extra.append(name)
        elif existing[name] != files[name]:
            drift.changed.append(name)
            drift.diff.extend(
                difflib.unified_diff(
                    existing[name].splitlines(),
                    files[name].splitlines(),
                    f"{name} (on disk)",
                    f"{name} (generated)",
                    lineterm="",
                )
            )
    for name, text in (beside or {}).items():
        path, label = package_dir.parent / name, f"../{name}"
        found = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        if found is None:
            drift.missing.append(label)
        elif found != text:
            drift.changed.append(label)
            drift.diff.extend(
                difflib.unified_diff(
                    found.splitlines(), text.splitlines(), f"{label} (on disk)", f"{label} (generated)", lineterm=""
                )
            )
    return drift
