"""Generator benchmark: acp-codegen `generate` and `check` against datamodel-codegen.

Times, in one run and on the same schema, a cold `generate --no-cache` (black
formats everything), a `check` with nothing changed (warm cache) and
datamodel-codegen's dataclass output, each in a fresh process. All output goes
to a temporary directory, so `generated/` is not touched. Prints Markdown.

    .venv/bin/python bench/generate.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
REPEATS = 5
COLD, CHECK, DMC = (
    "cold generate (--no-cache)",
    "check, nothing changed (warm cache)",
    "datamodel-codegen (dataclasses)",
)
TARGETS = {COLD: 1.0, CHECK: 0.3}  # step → the most seconds it may take per second of datamodel-codegen


class Failed(Exception):
    """A benchmarked command exited with an error."""


def timed(command: list[str]) -> float:
    """Seconds `command` takes, run from the project root."""
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()
        raise Failed(f"`{' '.join(command[1:])}` exited {result.returncode}:\n{output[-2000:]}")
    return elapsed


def commands(work: Path, run: int) -> dict[str, list[str]]:
    """The command of each step for the `run`-th repetition."""
    python = sys.executable
    return {
        COLD: [python, "-m", "generator", "generate", "--no-cache", "--out", str(work / f"cold{run}")],
        CHECK: [python, "-m", "generator", "check", "--out", str(work / "warm")],
        DMC: [python, "-m", "datamodel_code_generator", "--input", str(SCHEMA), "--input-file-type", "jsonschema",
              "--output-model-type", "dataclasses.dataclass", "--output", str(work / "x.py")],
    }  # fmt: skip


def measure(work: Path) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Seconds of every run of each step, interleaved so noise spreads evenly, and each failure.

    Each `check` is preceded by an untimed `generate` into its `--out`, which warms
    the black cache and leaves nothing to change even while the generator is edited."""
    warm = [sys.executable, "-m", "generator", "generate", "--out", str(work / "warm")]
    times: dict[str, list[float]] = {COLD: [], CHECK: [], DMC: []}
    failures: dict[str, str] = {}
    for run in range(REPEATS):
        for name, command in commands(work, run).items():
            if name in failures:
                continue
            print(f"run {run + 1}/{REPEATS}: {name} ...", file=sys.stderr)
            try:
                if name == CHECK:
                    timed(warm)
                times[name].append(timed(command))
            except Failed as error:
                failures[name] = str(error)
    return times, failures


def line_count(paths: list[Path]) -> str:
    return str(sum(len(path.read_text().splitlines()) for path in paths)) if paths else "n/a"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        times, failures = measure(work)
        acp_lines = line_count(sorted((work / "cold0" / "acp_v2").glob("*.py")))
        dmc_lines = line_count([work / "x.py"] if (work / "x.py").exists() else [])
    median = {name: statistics.median(runs) for name, runs in times.items() if name not in failures}

    print(
        f"Python {sys.version.split()[0]}, datamodel-code-generator {version('datamodel-code-generator')}, "
        f"black {version('black')}, median of {REPEATS} runs, each in a fresh process\n"
    )
    print("| step | median s | ratio to datamodel-codegen | target | met |")
    print("|---|---:|---:|---|---|")
    for name in times:
        seconds = median.get(name)
        cells = [name, "failed" if seconds is None else f"{seconds:.2f}", "", "", ""]
        if name in TARGETS:
            cells[3] = f"<= {TARGETS[name]}x"
            if seconds is None or DMC not in median:
                cells[2] = cells[4] = "n/a"
            else:
                ratio = seconds / median[DMC]
                cells[2] = f"{ratio:.2f}x"
                cells[4] = "yes" if ratio <= TARGETS[name] else "**no**"
        print(f"| {' | '.join(cells)} |")
    print()
    print("| output | lines |")
    print("|---|---:|")
    print(f"| acp_v2 (all .py files) | {acp_lines} |")
    print(f"| datamodel-codegen dataclasses (one file) | {dmc_lines} |")
    for name, message in failures.items():
        print(f"\n{name} failed: {message}")


if __name__ == "__main__":
    main()
