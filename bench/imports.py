"""Import benchmark: `import acp_v2` against datamodel-codegen's dataclasses module.

Times, side by side in one run, `import acp_v2` (the committed package) and the import
of datamodel-codegen's `dataclasses.dataclass` output for the same schema, each in a
fresh interpreter (`python -I -B`, the timer around the import only, so interpreter
start-up is left out; standard-library modules the import pulls in are counted):
with `.pyc` (compiled beforehand with `compileall`) and without (a copy of the
sources with no `__pycache__`, `-B` so none is written: every run compiles). Also
times `import acp_v2` followed by the first decode, which loads the codec the
import defers. Prints Markdown: medians of several interleaved passes, ratios to
datamodel-codegen in the same mode, and the lines of each module of the package.
`--before DIR` times another build of the package too (DIR holds its `acp_v2/`), e.g.
the previous release: `git archive <commit> generated/acp_v2 | tar -x -C /tmp/before`.

    .venv/bin/python bench/imports.py [--before /tmp/before/generated]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
PACKAGE = ROOT / "generated" / "acp_v2"
DMC_MODULE = "dmc_models"  # datamodel-codegen's output, one module
PASSES = 9
TARGETS = {True: 0.3, False: 1.0}  # with .pyc → the most time per time of datamodel-codegen's import
FIRST_DECODE = (
    "acp_v2.UpdateSessionNotification.from_json("
    '\'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}\')'
)
# Runs in the fresh interpreter: argv = directory, module, statement timed after the import.
TIMER = """
import sys, time
sys.path.insert(0, sys.argv[1])
start = time.perf_counter()
__import__(sys.argv[2])
exec(sys.argv[3], {sys.argv[2]: sys.modules[sys.argv[2]]})
print(time.perf_counter() - start)
"""


def generate_dmc(directory: Path) -> None:
    """datamodel-codegen's dataclasses for the schema, as `directory/dmc_models.py`."""
    command = [sys.executable, "-m", "datamodel_code_generator", "--input", str(SCHEMA), "--input-file-type",
               "jsonschema", "--output-model-type", "dataclasses.dataclass", "--output",
               str(directory / f"{DMC_MODULE}.py")]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)


def sources(package: Path, directory: Path) -> None:
    """Copy the sources of `package` into `directory` (no bytecode)."""
    shutil.copytree(package, directory / "acp_v2", ignore=shutil.ignore_patterns("__pycache__"))


def import_seconds(directory: Path, module: str, after: str = "") -> float:
    """Seconds `import module` (then `after`) takes in a fresh interpreter, reading `directory`."""
    command = [sys.executable, "-I", "-B", "-c", TIMER, str(directory), module, after]
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    return float(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a directory holding another build's acp_v2/")
    before = parser.parse_args().before
    packages = {"acp_v2": PACKAGE} | ({"acp_v2 before": before / "acp_v2"} if before else {})
    with tempfile.TemporaryDirectory() as tmp:
        cases: dict[tuple[str, bool], tuple[Path, str, str]] = {}
        generate_dmc(Path(tmp))
        for pyc in (True, False):
            mode = Path(tmp) / ("compiled" if pyc else "plain")
            mode.mkdir()
            shutil.copy2(Path(tmp) / f"{DMC_MODULE}.py", mode)
            for index, (name, package) in enumerate(packages.items()):
                sources(package, mode / str(index))
                cases[(name, pyc)] = (mode / str(index), "acp_v2", "")
                cases[(f"{name}, then a first decode", pyc)] = (mode / str(index), "acp_v2", FIRST_DECODE)
            cases[("datamodel-codegen", pyc)] = (mode, DMC_MODULE, "")
            if pyc:
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(mode)], check=True)
        times: dict[tuple[str, bool], list[float]] = {case: [] for case in cases}
        for number in range(PASSES):
            print(f"pass {number + 1}/{PASSES} ...", file=sys.stderr)
            for case, (directory, module, after) in cases.items():
                times[case].append(import_seconds(directory, module, after))
        if any((Path(tmp) / "plain").rglob("__pycache__")):
            raise SystemExit("bytecode was written to the uncompiled copy: the figures without .pyc are wrong")
    median = {case: statistics.median(runs) * 1000 for case, runs in times.items()}

    print(f"Python {sys.version.split()[0]}, median of {PASSES} passes, each import in a fresh interpreter\n")
    print("| import | .pyc | median ms | ratio to datamodel-codegen | target | met |")
    print("|---|---|---:|---:|---|---|")
    for (name, pyc), ms in median.items():
        cells = [name, "yes" if pyc else "no", f"{ms:.1f}", "", "", ""]
        if name != "datamodel-codegen":
            ratio = ms / median[("datamodel-codegen", pyc)]
            cells[3] = f"{ratio:.2f}x"
            if name in packages:
                cells[4] = f"<= {TARGETS[pyc]}x"
                cells[5] = "yes" if ratio <= TARGETS[pyc] else "**no**"
        print(f"| {' | '.join(cells)} |")
    print("\n| module of acp_v2 | lines |")
    print("|---|---:|")
    for path in sorted(PACKAGE.glob("*.py")):
        print(f"| {path.name} | {len(path.read_text().splitlines())} |")


if __name__ == "__main__":
    main()
