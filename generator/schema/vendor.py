"""Vendoring the official schema: `npm pack` by package name, extract, lock."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

from generator.config import Config
from generator.errors import GenerationError

LICENSE = "LICENSE"  # the upstream license, vendored beside the lock


def license_path(config: Config) -> Path:
    """Where the upstream license is vendored: beside the lock."""
    return _lock(config).parent / LICENSE


def _update_command(config: Config) -> str:
    return config.commands.update_schema or "acp-codegen update-schema VERSION"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(config: Config, version: str, destination: Path) -> dict[str, object]:
    """Extract each of `config.schema_files` (npm path → project path, placed under `destination`
    at its project path) and the upstream LICENSE (at `license_path`); return the lock, which
    records the version npm resolved (`latest` becomes the release it names)."""
    spec = f"{config.npm_package}@{version}"
    license_file = license_path(config).relative_to(config.root).as_posix()
    with tempfile.TemporaryDirectory() as work:
        tarball = _npm_pack(spec, Path(work))
        try:
            with tarfile.open(tarball) as archive:
                members = {member.name: member for member in archive.getmembers()}
                files: list[dict[str, str]] = []
                for source, target in (*config.schema_files, (LICENSE, license_file)):
                    data = _member(archive, members, spec, source)
                    (destination / target).parent.mkdir(parents=True, exist_ok=True)
                    (destination / target).write_bytes(data)
                    if target != license_file:
                        entry = {"path": target, "sha256": hashlib.sha256(data).hexdigest()}
                        files.append(entry if source == target else {"path": target, "source": source, **entry})
                manifest = json.loads(_member(archive, members, spec, "package.json"))
        except (tarfile.TarError, EOFError) as error:
            raise GenerationError(spec, f"npm pack wrote an unreadable tarball: {error}") from None
        except ValueError as error:
            raise GenerationError(spec, f"the package's package.json is not valid JSON: {error}") from None
    resolved = manifest.get("version") if isinstance(manifest, dict) else None
    if not isinstance(resolved, str) or not resolved:
        raise GenerationError(spec, "the package's package.json names no version")
    return {
        "package": config.npm_package,
        "version": resolved,
        "license": manifest.get("license"),
        "license_file": license_file,
        "files": files,
    }


def _npm_pack(spec: str, work: Path) -> Path:
    """The tarball `npm pack` downloads into `work`."""
    try:
        packed = subprocess.run(
            ["npm", "pack", spec, "--silent", "--pack-destination", str(work)], capture_output=True, text=True
        )
    except OSError as error:
        raise GenerationError(spec, f"cannot run npm: {error.strerror}") from None
    if packed.returncode != 0:
        detail = " ".join(packed.stderr.split()) or f"exit status {packed.returncode}"
        raise GenerationError(spec, f"npm pack failed: {detail}")
    names = packed.stdout.strip().splitlines()
    tarball = work / names[-1].strip() if names else None
    if tarball is None or not tarball.is_file():
        raise GenerationError(spec, "npm pack succeeded but wrote no tarball")
    return tarball


def _member(archive: tarfile.TarFile, members: dict[str, tarfile.TarInfo], spec: str, relative: str) -> bytes:
    member = members.get(f"package/{relative}")
    extracted = archive.extractfile(member) if member is not None and member.isfile() else None
    if extracted is None:
        raise GenerationError(spec, f"the package has no file {relative}")
    return extracted.read()


def _lock(config: Config) -> Path:
    if config.lock is None:
        raise GenerationError(str(config.root / "pyproject.toml"), "[tool.acp-codegen] names no lock")
    return config.lock


def read_lock(config: Config) -> dict[str, object]:
    lock = _lock(config)
    try:
        data = json.loads(lock.read_bytes())
    except FileNotFoundError:
        raise GenerationError(str(lock), f"no schema lock; run `{_update_command(config)}`") from None
    except OSError as error:
        raise GenerationError(str(lock), f"cannot read it: {error.strerror}") from None
    except ValueError as error:
        raise GenerationError(str(lock), f"not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise GenerationError(str(lock), "expected a JSON object")
    return data


def verify_locked(config: Config, schema: Path) -> None:
    """Refuse a vendored schema whose sha256 differs from its lock entry (a hand edit); a
    project without a lock vendors its schema by hand and uses it as it is."""
    if config.lock is None:
        return
    lock = read_lock(config)
    relative = schema.resolve().relative_to(config.root.resolve()).as_posix()
    entries = lock.get("files")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("path") == relative:
            actual = sha256_of(schema)
            if actual != entry.get("sha256"):
                raise GenerationError(
                    str(schema),
                    f"sha256 {actual} does not match {_lock(config).name} ({entry.get('sha256')}); "
                    f"the vendored schema was edited by hand. Restore it, run `{_update_command(config)}`, "
                    "or pass --schema PATH explicitly",
                )
            return
    raise GenerationError(str(schema), f"not listed in {config.lock}")
