"""Codec benchmark: acp_v2 against json and pydantic on a stream of `session/update` params.

Builds 20,000 seeded, schema-valid `UpdateSessionNotification` values, validates
every line with jsonschema, generates pydantic v2 models with datamodel-codegen,
then times decode and encode on both sides and counts lossy round trips.
Prints Markdown tables. `--profile` instead profiles the acp_v2 decode.

    .venv/bin/python bench/codec.py [--profile]
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import importlib
import json
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
MESSAGES = 20_000
PASSES = 7

sys.path.insert(0, str(ROOT / "generated"))
import acp_v2  # noqa: E402

# --- the stream ---------------------------------------------------------------

WORDS = (
    "the function returns a list of files in the repository so we need to update tests "
    "before running `pytest -q` again; I'll check config.py and the parser, then fix the "
    "off-by-one error in line 42. naïve café → résumé ✓ 日本語 😀 \"quoted\" path\\to\\file\n\n- item"
).split(" ")

KINDS = {  # sessionUpdate kind → weight (percent of the stream)
    "agent_message_chunk": 34,
    "agent_thought_chunk": 16,
    "user_message_chunk": 3,
    "tool_call_full": 6,
    "tool_call_partial": 13,
    "tool_call_content_chunk": 8,
    "plan_update": 3,
    "usage_update": 4,
    "state_update": 4,
    "subagent_update": 2,
    "terminal_update": 2,
    "terminal_output_chunk": 3,
    "vendor": 2,
}


CHUNKS = {"agent_message_chunk": "agent", "agent_thought_chunk": "thought", "user_message_chunk": "user"}


class Stream:
    """A seeded simulation of one agent session's updates."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.session = self.id("sess")
        self.message = {"agent": self.id("msg"), "thought": self.id("msg"), "user": self.id("msg")}
        self.tool_calls: list[str] = []
        self.terminals: list[str] = []
        self.used = 0

    def id(self, prefix: str) -> str:
        return f"{prefix}_{self.rng.getrandbits(96):024x}"

    def text(self, low: int = 20, high: int = 400) -> str:
        length = int(self.rng.triangular(low, high, low + 40))
        words: list[str] = []
        while sum(map(len, words)) + len(words) < length:
            words.append(self.rng.choice(WORDS))
        return " ".join(words)[:length]

    def path(self) -> str:
        parts = self.rng.choice(("src/acp", "tests", "generator", "docs/guide"))
        return f"/home/dev/project/{parts}/{self.rng.choice(('cli', 'models', 'io', 'util'))}.py"

    def meta(self, update: dict[str, Any]) -> dict[str, Any]:
        if self.rng.random() < 0.05:
            update["_meta"] = {"vendor.example/latencyMs": self.rng.randint(1, 900)}
        return update

    def text_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "text", "text": self.text()}
        if self.rng.random() < 0.05:
            block["annotations"] = {"audience": ["user"], "priority": round(self.rng.random(), 2)}
        return block

    def chunk(self, kind: str) -> dict[str, Any]:
        who = CHUNKS[kind]
        if self.rng.random() < 0.02:
            self.message[who] = self.id("msg")
        return self.meta({"sessionUpdate": kind, "messageId": self.message[who], "content": self.text_block()})

    def tool_call_content(self) -> dict[str, Any]:
        roll = self.rng.random()
        if roll < 0.6:
            return {"type": "content", "content": self.text_block()}
        if roll < 0.85:
            patch = {"format": "git_patch", "text": f"@@ -1,3 +1,3 @@\n-{self.text(20, 80)}\n+{self.text(20, 80)}\n"}
            return {"type": "diff", "changes": [{"operation": "modify", "path": self.path()}], "patch": patch}
        return {"type": "terminal", "terminalId": self.terminals[-1] if self.terminals else self.id("term")}

    def tool_call_full(self) -> dict[str, Any]:
        call = self.id("call")
        self.tool_calls = [*self.tool_calls[-7:], call]
        kind, name, raw_input = self.rng.choice(
            (
                ("execute", "bash", {"command": "pytest -q tests/", "timeout": 120}),
                ("read", "read_file", {"path": self.path(), "offset": 0, "limit": 200}),
                ("edit", "edit_file", {"path": self.path(), "old": self.text(20, 60), "new": self.text(20, 60)}),
                ("search", "grep", {"pattern": "def decode", "glob": "**/*.py", "caseSensitive": False}),
            )
        )
        update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call}
        if self.rng.random() < 0.5:
            update["name"] = name
        update |= {
            "title": f"{name} {raw_input.get('path', raw_input.get('command', ''))}",
            "kind": kind,
            "status": "pending",
            "content": [self.tool_call_content()],
            "locations": [{"path": self.path(), "line": self.rng.randint(1, 900)}],
            "rawInput": raw_input,
        }
        return self.meta(update)

    def tool_call_partial(self) -> dict[str, Any]:
        if not self.tool_calls:
            return self.tool_call_full()
        update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": self.rng.choice(self.tool_calls)}
        update |= self.rng.choice(
            (
                {"status": "in_progress"},
                {"status": None},
                {"status": "completed", "rawOutput": {"exitCode": 0, "stdout": self.text()}},
                {"status": "failed", "rawOutput": {"error": self.text(20, 120)}},
                {"title": None, "locations": None, "content": None},
                {"locations": [{"path": self.path(), "line": self.rng.randint(1, 900)}], "kind": None},
                {"content": [self.tool_call_content(), self.tool_call_content()]},
            )
        )
        return update

    def tool_call_content_chunk(self) -> dict[str, Any]:
        call = self.rng.choice(self.tool_calls) if self.tool_calls else self.id("call")
        return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call, "content": self.tool_call_content()}

    def plan_update(self) -> dict[str, Any]:
        if self.rng.random() < 0.2:
            plan: dict[str, Any] = {"type": "markdown", "planId": "plan-1", "content": self.text(80, 400)}
        else:
            entries = [
                {
                    "content": self.text(20, 80),
                    "priority": self.rng.choice(("high", "medium", "low")),
                    "status": self.rng.choice(("pending", "in_progress", "completed")),
                }
                for _ in range(self.rng.randint(1, 6))
            ]
            plan = {"type": "items", "planId": "plan-1", "entries": entries}
        return {"sessionUpdate": "plan_update", "plan": plan}

    def usage_update(self) -> dict[str, Any]:
        self.used = min(self.used + self.rng.randint(100, 4000), 200_000)
        cost = {"amount": round(self.used * 3e-6, 6), "currency": "USD"} if self.rng.random() < 0.7 else None
        return {"sessionUpdate": "usage_update", "used": self.used, "size": 200_000, "cost": cost}

    def state(self) -> dict[str, Any]:
        roll = self.rng.random()
        if roll < 0.5:
            background = [{"type": "tool_call", "toolCallId": call} for call in self.tool_calls[-2:]]
            return {"state": "running", "background": background or None}
        if roll < 0.8:
            usage = {"totalTokens": self.used, "inputTokens": self.used * 3 // 4, "outputTokens": self.used // 4}
            return {"state": "idle", "stopReason": self.rng.choice(("end_turn", "max_tokens", "cancelled")), "usage": usage}
        return {"state": "requires_action"}

    def state_update(self) -> dict[str, Any]:
        return {"sessionUpdate": "state_update", **self.state()}

    def subagent_update(self) -> dict[str, Any]:
        update: dict[str, Any] = {"sessionUpdate": "subagent_update", "sessionId": self.id("sess")}
        if self.rng.random() < 0.5:
            update |= {"title": self.text(20, 60), "cwd": "/home/dev/project", "additionalDirectories": []}
        return update | {"state": self.state()}

    def terminal_update(self) -> dict[str, Any]:
        if self.terminals and self.rng.random() < 0.5:
            exit_status = {"exitCode": self.rng.choice((0, 0, 1)), "signal": None}
            return {"sessionUpdate": "terminal_update", "terminalId": self.terminals[-1], "exitStatus": exit_status}
        terminal = self.id("term")
        self.terminals = [*self.terminals[-3:], terminal]
        return {
            "sessionUpdate": "terminal_update",
            "terminalId": terminal,
            "command": "pytest -q",
            "cwd": "/home/dev/project",
            "size": {"cols": 120, "rows": 40},
        }

    def terminal_output_chunk(self) -> dict[str, Any]:
        terminal = self.terminals[-1] if self.terminals else self.id("term")
        data = base64.b64encode(self.text(20, 300).encode()).decode()
        return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal, "data": data}

    def vendor(self) -> dict[str, Any]:
        return {"sessionUpdate": "_vendor_progress", "pct": self.rng.randint(0, 100), "label": self.text(20, 40)}

    def notification(self) -> dict[str, Any]:
        (kind,) = self.rng.choices(list(KINDS), weights=list(KINDS.values()))
        update = self.chunk(kind) if kind in CHUNKS else getattr(self, kind)()
        return {"sessionId": self.session, "update": update}


def build_lines() -> list[str]:
    stream = Stream(random.Random(0))
    return [json.dumps(stream.notification(), separators=(",", ":"), ensure_ascii=False) for _ in range(MESSAGES)]


def validate(lines: list[str]) -> None:
    """Abort unless every line is a valid `UpdateSessionNotification`."""
    from jsonschema import Draft202012Validator

    defs = json.loads(SCHEMA.read_text())["$defs"]
    validator = Draft202012Validator({"$ref": "#/$defs/UpdateSessionNotification", "$defs": defs})
    for number, line in enumerate(lines, 1):
        error = next(iter(validator.iter_errors(json.loads(line))), None)
        if error is not None:
            sys.exit(f"line {number} is not a valid UpdateSessionNotification: {error.message}\n{line}")


# --- pydantic -----------------------------------------------------------------


def pydantic_model(tmp: Path) -> tuple[Any, str]:
    """datamodel-codegen's `UpdateSessionNotification`, or None and why not."""
    out = tmp / "acp_pydantic.py"
    command = [sys.executable, "-m", "datamodel_code_generator", "--input", str(SCHEMA), "--input-file-type",
               "jsonschema", "--output-model-type", "pydantic_v2.BaseModel", "--output", str(out)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return None, f"datamodel-codegen failed (exit {result.returncode}):\n{result.stderr.strip()[-2000:]}"
    sys.path.insert(0, str(tmp))
    try:
        module = importlib.import_module("acp_pydantic")
    except Exception as error:
        return None, f"importing datamodel-codegen's output failed: {error!r}"
    finally:
        sys.path.remove(str(tmp))
    model = getattr(module, "UpdateSessionNotification", None)
    if model is None:
        return None, "datamodel-codegen's output has no UpdateSessionNotification"
    return model, ""


# --- measurement --------------------------------------------------------------


def median_us(run: Callable[[], object], count: int) -> float:
    """Median over PASSES of `run()` (one pass over the stream), in µs per message."""
    times = []
    for _ in range(PASSES):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) / count * 1e6


def same(a: Any, b: Any) -> bool:
    """Equal values with equal types and the same key order in every object."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if type(a) is list:
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


def acp_decode_all(lines: list[str]) -> list[acp_v2.UpdateSessionNotification]:
    """Decode every line; abort naming the line if acp_v2 rejects a schema-valid one."""
    decoded = []
    for number, line in enumerate(lines, 1):
        try:
            decoded.append(acp_v2.UpdateSessionNotification.from_json(line))
        except Exception as error:
            sys.exit(f"acp_v2 failed on valid line {number}: {type(error).__name__}: {error}\n{line}")
    return decoded


def acp_lossy(lines: list[str], decoded: list[Any]) -> list[int]:
    return [n for n, (line, obj) in enumerate(zip(lines, decoded), 1) if not same(json.loads(obj.to_json()), json.loads(line))]


def pydantic_lossy(model: Any, lines: list[str]) -> tuple[list[int], list[Any]]:
    """Lossy line numbers (a validation error counts as lossy) and the decoded models."""
    lossy, decoded = [], []
    for number, line in enumerate(lines, 1):
        try:
            m = model.model_validate_json(line)
        except ValueError:
            lossy.append(number)
            continue
        decoded.append(m)
        if json.loads(m.model_dump_json(by_alias=True, exclude_unset=True)) != json.loads(line):
            lossy.append(number)
    return lossy, decoded


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a is not None and b is not None else "n/a"


def us(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "n/a"


def benchmark(lines: list[str]) -> None:
    parsed = [json.loads(line) for line in lines]
    decoded = acp_decode_all(lines)
    with tempfile.TemporaryDirectory() as tmp:
        model, failure = pydantic_model(Path(tmp))
        pyd_lossy, pyd_decoded = pydantic_lossy(model, lines) if model is not None else ([], [])
    n = len(lines)
    loads = median_us(lambda: [json.loads(line) for line in lines], n)
    dumps = median_us(lambda: [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in parsed], n)
    from_json = acp_v2.UpdateSessionNotification.from_json
    acp_dec = median_us(lambda: [from_json(line) for line in lines], n)
    acp_enc = median_us(lambda: [obj.to_json() for obj in decoded], n)
    pyd_dec = pyd_enc = None
    if model is not None and len(pyd_decoded) == n:
        validate_json = model.model_validate_json
        pyd_dec = median_us(lambda: [validate_json(line) for line in lines], n)
        pyd_enc = median_us(lambda: [m.model_dump_json(by_alias=True, exclude_unset=True) for m in pyd_decoded], n)
    elif model is not None:
        failure = f"pydantic rejects {n - len(pyd_decoded)} valid lines (first: line {pyd_lossy[0]}); not timed"
    acp_lossy_lines = acp_lossy(lines, decoded)

    def met(ok: bool) -> str:
        return "yes" if ok else "**no**"

    print(f"Python {sys.version.split()[0]}, {n} messages, median of {PASSES} passes\n")
    print("| measurement | median µs/msg | ratio | target | met |")
    print("|---|---:|---:|---|---|")
    print(f"| json.loads | {us(loads)} | | | |")
    print(f"| json.dumps | {us(dumps)} | | | |")
    print(f"| acp_v2 decode (from_json) | {us(acp_dec)} | {ratio(acp_dec, loads)} json.loads | ≤ 2.0× | {met(acp_dec <= 2 * loads)} |")
    print(f"| acp_v2 encode (to_json) | {us(acp_enc)} | {ratio(acp_enc, dumps)} json.dumps | ≤ 2.0× | {met(acp_enc <= 2 * dumps)} |")
    pyd_met = met(pyd_dec >= 5 * acp_dec) if pyd_dec is not None else "n/a"
    print(f"| pydantic decode (model_validate_json) | {us(pyd_dec)} | {ratio(pyd_dec, acp_dec)} acp_v2 decode | ≥ 5× | {pyd_met} |")
    print(f"| pydantic encode (model_dump_json) | {us(pyd_enc)} | {ratio(pyd_enc, acp_enc)} acp_v2 encode | | |")
    print()
    print("| round trip | lossy lines | target | met |")
    print("|---|---:|---|---|")
    print(f"| acp_v2 (values, types, key order) | {len(acp_lossy_lines)} | 0 | {met(not acp_lossy_lines)} |")
    pyd_count = len(pyd_lossy) if model is not None else "n/a"
    print(f"| pydantic (values, exclude_unset) | {pyd_count} | | |")
    if acp_lossy_lines:
        first = acp_lossy_lines[0]
        print(f"\nfirst lossy acp_v2 line ({first}):\n  in:  {lines[first - 1]}\n  out: {decoded[first - 1].to_json()}")
    if failure:
        print(f"\nnote: {failure}")


def profile(lines: list[str]) -> None:
    from_json = acp_v2.UpdateSessionNotification.from_json
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [from_json(line) for line in lines])
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="profile the acp_v2 decode instead of benchmarking")
    args = parser.parse_args()
    lines = build_lines()
    validate(lines)
    if args.profile:
        profile(lines)
    else:
        benchmark(lines)


if __name__ == "__main__":
    main()
