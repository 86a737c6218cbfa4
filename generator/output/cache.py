"""The local caches under `.cache/acp-codegen/`: JSON that loading cannot execute, checked before use.

A cache file is a sha256 line, then a JSON document with that digest. Reading
returns None for anything else (missing, truncated, edited, not JSON, a
directory): a miss that the caller rebuilds, never an error and never trusted.
The black cache also carries a digest per entry, so one edited entry is a miss
for that entry alone. The IR is stored as tagged JSON that only ever builds the
dataclasses of `generator.ir.model` and `generator.ir.assertions`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from generator.errors import GenerationError
from generator.ir import assertions, model
from generator.output.format import text_digest

BLACK_FILE = "black.json"
MAX_BLACK_ENTRIES = 50_000
MAX_IR_FILES = 16  # one per schema, options and generator version seen lately
MAX_RENDER_FILES = 4  # the rendered units of as many IRs: 1-2 MB each
IR_CLASSES = {
    name: value
    for module in (model, assertions)
    for name, value in vars(module).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
}


def prepare(cache_dir: Path) -> None:
    """Create `cache_dir`, or say in one line why it cannot be used."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GenerationError(
            str(cache_dir), f"cannot use it as the cache directory ({error.strerror}); remove it or pass --no-cache"
        ) from None


def read(path: Path) -> Any:
    """The JSON document stored at `path` if its digest matches, else None."""
    try:
        digest, _, payload = path.read_bytes().partition(b"\n")
        if hashlib.sha256(payload).hexdigest().encode() != digest:
            return None
        return json.loads(payload)
    except (OSError, ValueError, RecursionError):
        return None


def write(path: Path, data: Any) -> None:
    """Store `data` at `path` atomically (readers see the old file or the new one)."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    temporary: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
        ) as handle:
            temporary = Path(handle.name)
            handle.write(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        os.replace(temporary, path)
    except OSError as error:
        raise GenerationError(str(path), f"cannot write the cache: {error.strerror}; pass --no-cache") from None
    finally:
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def keep_newest(cache_dir: Path, pattern: str, count: int) -> None:
    """Remove all but the `count` most recently written files matching `pattern`."""
    found = []
    for path in cache_dir.glob(pattern):
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(found, reverse=True)[count:]:
        path.unlink(missing_ok=True)


class BlackCache:
    """unit key → black's text, persisted in `cache_dir/black.json`."""

    def __init__(self, cache_dir: Path) -> None:
        self.path = cache_dir / BLACK_FILE
        stored = read(self.path)
        self.entries: dict[str, str] = {}
        if isinstance(stored, dict):
            for key, entry in stored.items():
                if isinstance(entry, list) and len(entry) == 2 and all(isinstance(part, str) for part in entry):
                    digest, text = entry
                    if text_digest(f"{key}\0{text}") == digest:
                        self.entries[key] = text
        self.used: set[str] = set()
        self.added = False

    def get(self, key: str) -> str | None:
        text = self.entries.get(key)
        if text is not None:
            self.used.add(key)
        return text

    def put(self, key: str, text: str) -> None:
        self.entries[key] = text
        self.used.add(key)
        self.added = True

    def save(self) -> None:
        """After new entries: keep what this run used, then older entries, up to MAX_BLACK_ENTRIES."""
        if not self.added:
            return
        kept = [key for key in self.entries if key in self.used]
        kept += [key for key in self.entries if key not in self.used][: max(0, MAX_BLACK_ENTRIES - len(kept))]
        write(self.path, {key: [text_digest(f"{key}\0{self.entries[key]}"), self.entries[key]] for key in kept})


def ir_to_data(value: object) -> Any:
    """The IR as JSON data from which `ir_from_data` rebuilds an equal value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {item.name: ir_to_data(getattr(value, item.name)) for item in dataclasses.fields(value)}
        return {"class": type(value).__name__, "fields": fields}
    if isinstance(value, tuple):
        return {"tuple": [ir_to_data(item) for item in value]}
    if isinstance(value, dict):
        return {"dict": [[ir_to_data(key), ir_to_data(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return [ir_to_data(item) for item in value]
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise TypeError(f"cannot cache a {type(value).__name__} in the IR")


def ir_from_data(data: Any) -> Any:
    """The inverse of `ir_to_data`; ValueError for data it did not write."""
    try:
        return _from_data(data)
    except (TypeError, RecursionError) as error:  # unhashable keys, wrong field types, absurd nesting
        raise ValueError(f"not IR data: {error}") from None


def _from_data(data: Any) -> Any:
    if isinstance(data, list):
        return [_from_data(item) for item in data]
    if not isinstance(data, dict):
        return data
    match data:
        case {"class": str(name), "fields": dict(fields)} if name in IR_CLASSES and len(data) == 2:
            return IR_CLASSES[name](**{key: _from_data(item) for key, item in fields.items()})
        case {"tuple": list(items)} if len(data) == 1:
            return tuple(_from_data(item) for item in items)
        case {"dict": list(items)} if len(data) == 1 and all(
            isinstance(item, list) and len(item) == 2 for item in items
        ):
            return {_from_data(key): _from_data(item) for key, item in items}
    raise ValueError(f"not IR data: {sorted(data)}")
