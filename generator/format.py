"""black through its API, at the pinned version: cached by content, in parallel.

Files come as lists of top-level units. Each unit is formatted on its own
(so a change reformats only the units it touches), units are joined by two
blank lines, and results are cached by the hash of black's version, its mode
and the unit's text. A cache hit is the exact text black produced for that
input, so the cache can never let drift through.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import pickle
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

BLACK_VERSION = importlib.metadata.version("black")
LINE_LENGTH = 120
TARGET = "py310"
BATCH_LINES = 4000  # units are formatted in batches of about this many lines
MAX_CACHE_ENTRIES = 50_000


def _key(unit: str) -> str:
    return hashlib.sha256(f"{BLACK_VERSION}\0{TARGET}\0{LINE_LENGTH}\0{unit}".encode()).hexdigest()


def _boundary(units: list[str]) -> str:
    """A statement no unit contains, to separate units in one black run."""
    digest = hashlib.sha256("\0".join(units).encode()).hexdigest()[:16]
    return f"_acp_codegen_unit_boundary_{digest} = None"


def _format_batch(units: list[str]) -> list[str]:
    """Format several units in one black call, then split them apart again."""
    import black  # only when something is not cached

    mode = black.Mode(target_versions={black.TargetVersion[TARGET.upper()]}, line_length=LINE_LENGTH)
    boundary = _boundary(units)
    joined = f"\n\n\n{boundary}\n\n\n".join(unit.strip("\n") + "\n" for unit in units)
    formatted = black.format_str(joined, mode=mode)
    pieces = formatted.split(f"\n{boundary}\n")
    if len(pieces) != len(units):
        raise RuntimeError("black merged or split a top-level unit")
    return [piece.strip("\n") + "\n" for piece in pieces]


def _batches(units: list[str]) -> list[list[str]]:
    batches: list[list[str]] = [[]]
    lines = 0
    for unit in units:
        if lines > BATCH_LINES:
            batches.append([])
            lines = 0
        batches[-1].append(unit)
        lines += unit.count("\n")
    return [batch for batch in batches if batch]


class Formatter:
    def __init__(self, cache_file: Path | None, workers: int | None = None) -> None:
        self.cache_file = cache_file
        self.workers = workers or min(2, os.cpu_count() or 1)
        self.cache: dict[str, str] = self._load()
        self.used: dict[str, str] = {}

    def _load(self) -> dict[str, str]:
        if self.cache_file is None:
            return {}
        try:
            with self.cache_file.open("rb") as handle:
                data = pickle.load(handle)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def format_files(self, files: dict[str, list[str]]) -> dict[str, str]:
        """File name → formatted text (non-Python files are joined as they are)."""
        missing = sorted({unit for name, units in files.items() if name.endswith(".py") for unit in units
                          if _key(unit) not in self.cache})
        if missing:
            batches = _batches(missing)
            if len(batches) > 1 and self.workers > 1:
                with ProcessPoolExecutor(max_workers=self.workers) as pool:
                    results = list(pool.map(_format_batch, batches))
            else:
                results = [_format_batch(batch) for batch in batches]
            for batch, formatted in zip(batches, results):
                for unit, text in zip(batch, formatted):
                    self.cache[_key(unit)] = text
        output = {}
        for name, units in files.items():
            if not name.endswith(".py"):
                output[name] = "".join(units)
                continue
            texts = []
            for unit in units:
                key = _key(unit)
                self.used[key] = self.cache[key]
                texts.append(self.cache[key])
            output[name] = "\n\n".join(texts)
        return output

    def save(self) -> None:
        """Keep what this run used, then older entries, up to MAX_CACHE_ENTRIES."""
        if self.cache_file is None:
            return
        kept = dict(self.used)
        for key, value in self.cache.items():
            if len(kept) >= MAX_CACHE_ENTRIES:
                break
            kept.setdefault(key, value)
        self.cache_file.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self.cache_file.parent, delete=False) as handle:
            pickle.dump(kept, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, self.cache_file)
