"""Generator benchmark: acp-codegen `generate` and `check` against datamodel-codegen.

Times, in one run and on the same schema, each in a fresh process: a full
`generate --no-cache` (black formats every unit), `check` on a fresh clone (a
copy of the project without `.cache`: the committed output and its format
manifest are all it has), `check` with nothing changed (warm cache) and
datamodel-codegen's dataclass output. All output goes to a temporary directory,
so `generated/` is not touched. Prints Markdown.

    .venv/bin/python bench/generate.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
CLONED = ("pyproject.toml", "schema", "generator", "generated")  # what a fresh clone has
REPEATS = 5
COLD, FRESH, CHECK, DMC = (
    "full generate, no cache (--no-cache)",
    "check on a fresh clone (empty .cache)",
    "check, nothing changed (warm cache)",
    "datamodel-codegen (dataclasses)",
)
SCALES = (1, 2, 4)  # the schema with its definitions 1, 2 and 4 times
SCALE_REPEATS = 3
CHANGED_TYPE = "ToolCallUpdate"  # the one type whose description the scaling runs change
TARGETS = {COLD: 2.0, FRESH: 1.0, CHECK: 0.3}  # step → the most seconds it may take per second of datamodel-codegen


class Failed(Exception):
    """A benchmarked command exited with an error."""


def run(command: list[str], cwd: Path = ROOT) -> tuple[float, str]:
    """Seconds `command` takes, run from `cwd` (the project root), and what it printed."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's generator, from any directory
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()
        raise Failed(f"`{' '.join(command[1:])}` exited {result.returncode}:\n{output[-2000:]}")
    return elapsed, result.stdout


def timed(command: list[str], cwd: Path = ROOT) -> float:
    return run(command, cwd)[0]


def commands(work: Path, run: int) -> dict[str, list[str]]:
    """The command of each step for the `run`-th repetition."""
    python = sys.executable
    return {
        COLD: [python, "-m", "generator", "generate", "--no-cache", "--out", str(work / f"cold{run}")],
        FRESH: [python, "-m", "generator", "check"],
        CHECK: [python, "-m", "generator", "check", "--out", str(work / "warm")],
        DMC: [python, "-m", "datamodel_code_generator", "--input", str(SCHEMA), "--input-file-type", "jsonschema",
              "--output-model-type", "dataclasses.dataclass", "--output", str(work / "x.py")],
    }  # fmt: skip


def fresh_clone(work: Path) -> Path:
    """A copy of the project as `git clone` gives it: no `.cache`, no bytecode."""
    clone = work / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    clone.mkdir()
    for name in CLONED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, clone / name)
    return clone


def measure(work: Path) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Seconds of every run of each step, interleaved so noise spreads evenly, and each failure.

    Each warm `check` is preceded by an untimed `generate` into its `--out`, which warms
    the black cache and leaves nothing to change even while the generator is edited;
    each fresh-clone `check` runs in a new copy of the project."""
    warm = [sys.executable, "-m", "generator", "generate", "--out", str(work / "warm")]
    times: dict[str, list[float]] = {COLD: [], FRESH: [], CHECK: [], DMC: []}
    failures: dict[str, str] = {}
    for run in range(REPEATS):
        for name, command in commands(work, run).items():
            if name in failures:
                continue
            print(f"run {run + 1}/{REPEATS}: {name} ...", file=sys.stderr)
            try:
                if name == CHECK:
                    timed(warm)
                cwd = fresh_clone(work) if name == FRESH else ROOT
                times[name].append(timed(command, cwd))
            except Failed as error:
                failures[name] = str(error)
    return times, failures


def scaled_schema(factor: int, path: Path) -> Path:
    """The schema with every `$defs` entry `factor` times: copy n is `<Name>Copy<n>`, its
    `$ref`s renamed alike and its JSON-RPC route dropped (no envelope carries the copies)."""
    document = json.loads(SCHEMA.read_text())
    definitions = document["$defs"]

    def renamed(node: object, suffix: str) -> object:
        if isinstance(node, dict):
            return {
                key: (value + suffix if key == "$ref" and isinstance(value, str) else renamed(value, suffix))
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [renamed(item, suffix) for item in node]
        return node

    originals = dict(definitions)
    for copy in range(2, factor + 1):
        for name, node in originals.items():
            clone = renamed(node, f"Copy{copy}")
            for key in ("x-method", "x-side"):
                clone.pop(key, None)
            definitions[f"{name}Copy{copy}"] = clone
    path.write_text(json.dumps(document))
    return path


def measure_scaling(work: Path) -> list[list[str]]:
    """Per schema size: full generation, a fresh-clone check and a regeneration after one
    type's description changed (committed output present, empty cache), median seconds,
    and how many units black formatted for that change."""
    rows = []
    for factor in SCALES:
        project = work / f"scale{factor}"  # no pyproject.toml: everything on the command line
        project.mkdir()
        schema = scaled_schema(factor, project / "schema.json")
        original = schema.read_text()
        generator = [sys.executable, "-m", "generator"]
        args = ["--schema", str(schema), "--out", "out", "--package", "scaled"]
        cold, fresh, change, formatted = [], [], [], ""
        for repeat in range(SCALE_REPEATS):
            print(f"scale x{factor}, run {repeat + 1}/{SCALE_REPEATS} ...", file=sys.stderr)
            cold.append(timed([*generator, "generate", "--no-cache", *args], project))
            shutil.rmtree(project / ".cache", ignore_errors=True)
            fresh.append(timed([*generator, "check", *args], project))
            shutil.rmtree(project / ".cache", ignore_errors=True)
            document = json.loads(original)
            document["$defs"][CHANGED_TYPE]["description"] += " Changed."
            schema.write_text(json.dumps(document))
            seconds, output = run([*generator, "generate", *args], project)
            change.append(seconds)
            found = re.search(r"black ran on (\d+ of \d+) units", output)
            formatted = found.group(1) if found else "n/a"
            schema.write_text(original)
        lines = line_count(sorted((project / "out" / "scaled").glob("*.py")))
        medians = [f"{statistics.median(times):.2f}" for times in (cold, fresh, change)]
        rows.append([f"x{factor}", lines, *medians, formatted])
    return rows


def line_count(paths: list[Path]) -> str:
    return str(sum(len(path.read_text().splitlines()) for path in paths)) if paths else "n/a"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        times, failures = measure(work)
        scaling = measure_scaling(work)
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
    print(f"\nScaling: the schema with its definitions duplicated under new names, median of {SCALE_REPEATS} runs\n")
    print(
        f"| schema | lines | full generate s | fresh-clone check s | {CHANGED_TYPE} changed: generate s | black ran on |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for row in scaling:
        print(f"| {' | '.join(row)} |")


if __name__ == "__main__":
    main()
