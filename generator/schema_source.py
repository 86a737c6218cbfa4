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

LICENSE_PATH = "schema/LICENSE"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(config: Config, version: str, destination: Path) -> dict[str, object]:
    """Extract `config.schema_files` (paths inside the npm package, kept as they
    are under `destination`) and the upstream LICENSE; return the lock."""
    spec = f"{config.npm_package}@{version}"
    with tempfile.TemporaryDirectory() as work:
        packed = subprocess.run(
            ["npm", "pack", spec, "--silent", "--pack-destination", work],
            capture_output=True,
            text=True,
        )
        if packed.returncode != 0:
            raise GenerationError(spec, f"npm pack failed: {packed.stderr.strip()}")
        tarball = Path(work) / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            members = {member.name: member for member in archive.getmembers()}
            files = []
            for relative in (*config.schema_files, "LICENSE"):
                member = members.get(f"package/{relative}")
                if member is None or not member.isfile():
                    raise GenerationError(spec, f"the package has no file {relative}")
                data = archive.extractfile(member).read()  # type: ignore[union-attr]
                target = destination / (LICENSE_PATH if relative == "LICENSE" else relative)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                if relative != "LICENSE":
                    files.append({"path": relative, "sha256": hashlib.sha256(data).hexdigest()})
            manifest = json.loads(archive.extractfile(members["package/package.json"]).read())  # type: ignore[union-attr]
    return {
        "package": config.npm_package,
        "version": version,
        "license": manifest.get("license"),
        "license_file": LICENSE_PATH,
        "files": files,
    }


def read_lock(config: Config) -> dict[str, object]:
    try:
        return json.loads(config.lock.read_text())
    except FileNotFoundError:
        raise GenerationError(str(config.lock), "no schema lock; run `make update-schema VERSION=...`") from None
    except json.JSONDecodeError as error:
        raise GenerationError(str(config.lock), f"not valid JSON: {error}") from None


def verify_locked(config: Config, schema: Path) -> None:
    """Refuse a vendored schema whose sha256 differs from its lock entry (a hand edit)."""
    lock = read_lock(config)
    relative = schema.resolve().relative_to(config.root.resolve()).as_posix()
    for entry in lock.get("files", []):  # type: ignore[union-attr]
        if entry["path"] == relative:
            actual = sha256_of(schema)
            if actual != entry["sha256"]:
                raise GenerationError(
                    str(schema),
                    f"sha256 {actual} does not match {config.lock.name} ({entry['sha256']}); "
                    "the vendored schema was edited by hand. Restore it, run "
                    "`make update-schema VERSION=...`, or pass --schema PATH explicitly",
                )
            return
    raise GenerationError(str(schema), f"not listed in {config.lock}")
