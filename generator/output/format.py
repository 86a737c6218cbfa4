"""black through its API, at the pinned version: once per unit, in parallel on all cores.

Files come as lists of top-level units (a template that renders a whole file is
cut into units by `emit.units.split_units`). Each unit is formatted on its own (so a change
reformats only the units it touches, and the units of all files are shared out
among the workers) and units are joined by two blank lines. A unit is named by
`unit_key`: the hash of black's version, its mode and the unit's text, so a
formatted text found under a key (in the cache or the committed manifest) is what
black made of exactly that input.

`black.format_str` formats once when its input is already black-shaped and
twice otherwise (its second pass settles magic trailing commas). The templates
render units black-shaped (`layout` picks where lines break), so formatting them
one by one, not in batches, is what makes black run once per unit; `reshaped`
tells the units it changes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING

from generator.emit.units import LINE_LENGTH

if TYPE_CHECKING:
    import black

BLACK_VERSION = importlib.metadata.version("black")
TARGET = "py311"
MODE = f"black {BLACK_VERSION}, target {TARGET}, line length {LINE_LENGTH}"
PARALLEL_LINES = 2000  # below this many lines, starting worker processes costs more than it saves
BATCHES_PER_WORKER = 16  # small enough batches that the workers finish together


def unit_key(unit: str) -> str:
    """What a formatted text is cached and recorded under."""
    return hashlib.sha256(f"{MODE}\0{unit}".encode()).hexdigest()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _mode() -> black.Mode:
    import black
    from black.mode import TargetVersion

    return black.Mode(target_versions={TargetVersion[TARGET.upper()]}, line_length=LINE_LENGTH)


def _black_input(unit: str) -> str:
    return unit.strip("\n") + "\n"


def reshaped(unit: str, formatted: str) -> bool:
    """Whether black's text `formatted` differs from `unit` (black formatted it twice)."""
    return formatted != _black_input(unit)


def _format_batch(units: list[str]) -> list[str]:
    import black

    mode = _mode()
    return [black.format_str(_black_input(unit), mode=mode).strip("\n") + "\n" for unit in units]


def _batches(units: list[str], count: int) -> list[list[int]]:
    """Indices of `units` in about `count` batches of about equal lines, the largest units
    in the first batches: the workers take batches as they finish one, so the last
    batches, small ones, even out the time they finish at."""
    order = sorted(range(len(units)), key=lambda i: -units[i].count("\n"))
    share = sum(units[i].count("\n") + 1 for i in order) / count
    batches: list[list[int]] = [[]]
    lines = 0
    for index in order:
        if lines >= share:
            batches.append([])
            lines = 0
        batches[-1].append(index)
        lines += units[index].count("\n") + 1
    return batches


def format_units(units: list[str], workers: int | None = None) -> list[str]:
    """black's output for each unit, in order."""
    if not units:
        return []  # not even importing black
    workers = workers or os.cpu_count() or 1
    if workers == 1 or sum(unit.count("\n") for unit in units) < PARALLEL_LINES:
        return _format_batch(units)
    import black  # noqa: F401  # imported once here, inherited by forked workers

    batches = _batches(units, workers * BATCHES_PER_WORKER)
    formatted: list[str] = [""] * len(units)
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_leave_interrupts_to_the_parent)
    try:
        for batch, texts in zip(
            batches, pool.map(_format_batch, [[units[i] for i in batch] for batch in batches]), strict=True
        ):
            for index, text in zip(batch, texts, strict=True):
                formatted[index] = text
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # on Ctrl-C: stop now, one message from the parent
        raise
    pool.shutdown()
    return formatted


def _leave_interrupts_to_the_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
