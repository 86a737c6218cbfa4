"""Codec benchmark: acp_v2 against json and pydantic on a stream of `session/update` params.

Builds 20,000 seeded, schema-valid `UpdateSessionNotification` values, validates
every line with jsonschema, generates pydantic v2 models with datamodel-codegen,
then times decode and encode on both sides and counts lossy round trips.
Prints Markdown tables. `--profile` instead profiles the acp_v2 decode.

Then times decode and encode against json on each of several message mixes (chunk-heavy,
tool-call-heavy, plan and state updates, requests and responses), with the spread of the passes.

    .venv/bin/python bench/codec.py [--profile] [--mixes-only]
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
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
MESSAGES = 20_000
PASSES = 7

sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "bench"))
import acp_runtime._runtime  # noqa: E402
import acp_v2  # noqa: E402
import msgspec_stream  # noqa: E402

# --- the stream ---------------------------------------------------------------

WORDS = (  # noqa: SIM905
    "the a to of and in is it that we this for with on test tests file files function returns list "
    "repository update check config.py parser error line fix run running before again then so I'll "
    "need should `pytest -q` `decode()` value type field schema import module class method call"
).split()
RARE_WORDS = ("naïve", "café", "→", "✓", "日本語", "😀", '"quoted"', "C:\\temp", "\n\n-", "\n```python\n")

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
# Further mixes of the same session's messages (weights as in KINDS), each timed on its own:
# the ratios depend on the mix, and the targets hold on each.
MIXES: dict[str, dict[str, int]] = {
    "session/update, typical": KINDS,
    "chunk-heavy session/update": {
        "agent_message_chunk": 60,
        "agent_thought_chunk": 25,
        "user_message_chunk": 5,
        "tool_call_content_chunk": 5,
        "terminal_output_chunk": 5,
    },
    "tool-call-heavy": {
        "tool_call_full": 25,
        "tool_call_partial": 45,
        "tool_call_content_chunk": 20,
        "terminal_update": 5,
        "terminal_output_chunk": 5,
    },
    "plan and state updates": {
        "plan_update": 35,
        "state_update": 30,
        "usage_update": 20,
        "subagent_update": 10,
        "vendor": 5,
    },
}
REQUESTS = "requests and responses"  # the params and results of the session's methods, each decoded as its type


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
            words.append(self.rng.choice(RARE_WORDS if self.rng.random() < 0.03 else WORDS))
        return " ".join(words)[:length]

    def path(self) -> str:
        folder = self.rng.choice(("src/acp", "tests", "generator", "docs/guide"))
        return f"/home/dev/project/{folder}/{self.rng.choice(('cli', 'models', 'io', 'util'))}.py"

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
            return {
                "state": "idle",
                "stopReason": self.rng.choice(("end_turn", "max_tokens", "cancelled")),
                "usage": usage,
            }
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

    def notification(self, kinds: dict[str, int] = KINDS) -> dict[str, Any]:
        (kind,) = self.rng.choices(list(kinds), weights=list(kinds.values()))
        update = self.chunk(kind) if kind in CHUNKS else getattr(self, kind)()
        return {"sessionId": self.session, "update": update}

    # --- requests and responses (params and results, as the router decodes them) ---

    def prompt_request(self) -> dict[str, Any]:
        prompt: list[dict[str, Any]] = [self.text_block()]
        if self.rng.random() < 0.3:
            path = self.path()
            prompt.append({"type": "resource_link", "name": path.rsplit("/", 1)[-1], "uri": f"file://{path}"})
        request: dict[str, Any] = {"sessionId": self.session, "prompt": prompt}
        if self.rng.random() < 0.3:
            request["messageId"] = self.id("msg")
        return self.meta(request)

    def prompt_response(self) -> dict[str, Any]:
        return {"messageId": self.id("msg")}

    def permission_request(self) -> dict[str, Any]:
        call = self.tool_calls[-1] if self.tool_calls else self.id("call")
        options = [
            {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        subject = {
            "type": "tool_call",
            "toolCall": {"toolCallId": call, "title": f"edit {self.path()}", "kind": "edit"},
        }
        return {"sessionId": self.session, "title": "Allow this edit?", "subject": subject, "options": options}

    def permission_response(self) -> dict[str, Any]:
        if self.rng.random() < 0.1:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": self.rng.choice(("allow", "always", "reject"))}}

    def new_session_request(self) -> dict[str, Any]:
        return {"cwd": "/home/dev/project", "additionalDirectories": [], "mcpServers": []}

    def new_session_response(self) -> dict[str, Any]:
        return {"sessionId": self.id("sess")}

    def cancel_notification(self) -> dict[str, Any]:
        return {"sessionId": self.session}

    def request_or_response(self) -> tuple[str, dict[str, Any]]:
        """A `$defs` name and a value of it: the methods of a session, in the proportions of one."""
        kinds = {
            "PromptRequest": (self.prompt_request, 25),
            "PromptResponse": (self.prompt_response, 25),
            "RequestPermissionRequest": (self.permission_request, 15),
            "RequestPermissionResponse": (self.permission_response, 15),
            "NewSessionRequest": (self.new_session_request, 5),
            "NewSessionResponse": (self.new_session_response, 5),
            "CancelSessionNotification": (self.cancel_notification, 5),
            "UpdateSessionNotification": (self.notification, 5),
        }
        (name,) = self.rng.choices(list(kinds), weights=[weight for _, weight in kinds.values()])
        return name, kinds[name][0]()


def dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def build_lines() -> list[str]:
    stream = Stream(random.Random(0))
    return [dump(stream.notification()) for _ in range(MESSAGES)]


def build_mix(name: str, messages: int) -> list[tuple[str, str]]:
    """`messages` lines of mix `name`, each with the `$defs` name it is decoded as (seeded per mix)."""
    stream = Stream(random.Random(name))
    if name == REQUESTS:
        return [(kind, dump(value)) for kind, value in (stream.request_or_response() for _ in range(messages))]
    return [("UpdateSessionNotification", dump(stream.notification(MIXES[name]))) for _ in range(messages)]


def validate(lines: list[str], name: str = "UpdateSessionNotification") -> None:
    """Abort unless every line is a valid `name`."""
    validate_typed([(name, line) for line in lines])


def validate_typed(typed: list[tuple[str, str]]) -> None:
    """Abort unless every line is a valid value of its `$defs` name."""
    from jsonschema import Draft202012Validator

    defs = json.loads(SCHEMA.read_text())["$defs"]
    validators: dict[str, Any] = {}
    for number, (name, line) in enumerate(typed, 1):
        if name not in validators:
            validators[name] = Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs})
        error = next(iter(validators[name].iter_errors(json.loads(line))), None)
        if error is not None:
            sys.exit(f"line {number} is not a valid {name}: {error.message}\n{line}")


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


def medians(runs: dict[str, Callable[[], object]], messages: int) -> dict[str, float]:
    """Median µs per message of each run over PASSES passes (see `passes`)."""
    return {name: statistics.median(times) for name, times in passes(runs, messages).items()}


def passes(runs: dict[str, Callable[[], object]], messages: int) -> dict[str, list[float]]:
    """µs per message of each run (one pass over the stream) in each of PASSES passes.

    Passes are interleaved, so noise spreads over all runs alike; each pass keeps
    what it produces, as a client keeping the transcript would, and frees it untimed.
    The cyclic GC stays on, but what the benchmark itself holds (the stream, the parsed
    and decoded copies, pydantic's models) is frozen out of it first: a full collection
    walks every object of the process, and the benchmark's own objects, not the codec,
    would decide what the collections in a pass cost."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    gc.collect()
    gc.freeze()
    try:
        for _ in range(PASSES):
            for name, run in runs.items():
                gc.collect()
                start = time.perf_counter()
                result = run()
                times[name].append(time.perf_counter() - start)
                del result
    finally:
        gc.unfreeze()
    return {name: [second / messages * 1e6 for second in seconds] for name, seconds in times.items()}


def spread(values: list[float]) -> str:
    """The range of `values` (one per pass), as `min-max`."""
    return f"{min(values):.2f}-{max(values):.2f}"


def ratios(times: dict[str, list[float]], name: str, baseline: str) -> list[float]:
    """`name` over `baseline` in each pass: the two ran one after the other, on the same load."""
    return [value / base for value, base in zip(times[name], times[baseline], strict=True)]


def same(a: Any, b: Any, ordered: bool) -> bool:
    """Equal values with equal types and the same keys (in the same order if `ordered`) in every object."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        keys_match = list(a) == list(b) if ordered else a.keys() == b.keys()
        return keys_match and all(same(a[key], b[key], ordered) for key in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y, ordered) for x, y in zip(a, b, strict=True))
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


def changes(original: str, again: str) -> tuple[bool, bool]:
    """Whether a round trip lost anything (a value, a type or a key), and whether it changed the key order."""
    before, after = json.loads(original), json.loads(again)
    return not same(after, before, ordered=False), not same(after, before, ordered=True)


def acp_lossy(lines: list[str], decoded: list[Any]) -> tuple[list[int], list[int]]:
    """Numbers of the lines whose round trip lost something, and of those whose key order changed."""
    lossy: list[int] = []
    reordered: list[int] = []
    for number, (line, obj) in enumerate(zip(lines, decoded, strict=True), 1):
        lost, moved = changes(line, obj.to_json())
        if lost:
            lossy.append(number)
        if moved:
            reordered.append(number)
    return lossy, reordered


def pydantic_lossy(model: Any, lines: list[str]) -> tuple[list[int], list[int], list[int], list[Any]]:
    """As `acp_lossy`, plus the lines pydantic rejects (lossy too) and the decoded models."""
    lossy: list[int] = []
    reordered: list[int] = []
    rejected: list[int] = []
    decoded = []
    for number, line in enumerate(lines, 1):
        try:
            m = model.model_validate_json(line)
        except ValueError:
            rejected.append(number)
            lost = moved = True
        else:
            decoded.append(m)
            lost, moved = changes(line, m.model_dump_json(by_alias=True, exclude_unset=True))
        if lost:
            lossy.append(number)
        if moved:
            reordered.append(number)
    return lossy, reordered, rejected, decoded


# Rows of the timing table: (name, baseline, target); the ratio is to the baseline, the target on that ratio.
LOADS, DUMPS = "json.loads", "json.dumps"
FROM_JSON, FROM_JSON_ORJSON = "acp_v2 decode (from_json)", "acp_v2 decode (from_json), orjson installed"
FROM_DICT = "acp_v2 decode from a parsed dict (from_dict)"
TO_JSON, TO_JSON_ORJSON = "acp_v2 encode (to_json)", "acp_v2 encode (to_json), orjson installed"
MSGSPEC_DECODE, MSGSPEC_CONVERT, MSGSPEC_ENCODE = (
    "msgspec decode",
    "msgspec decode from a parsed dict",
    "msgspec encode",
)
PYDANTIC_DECODE, PYDANTIC_ENCODE = "pydantic decode (model_validate_json)", "pydantic encode (model_dump_json)"
TIMINGS: tuple[tuple[str, str, float | None], ...] = (
    (LOADS, "", None),
    (DUMPS, "", None),
    ("json.JSONEncoder, reused (as to_json does)", DUMPS, None),
    ("orjson.loads", LOADS, None),
    ("orjson.dumps", DUMPS, None),
    (FROM_JSON, LOADS, 1.5),
    (FROM_JSON_ORJSON, LOADS, 1.5),
    (FROM_DICT, LOADS, 0.5),
    (TO_JSON, DUMPS, 1.2),
    (TO_JSON_ORJSON, DUMPS, 1.2),
    ("acp_v2 to_dict", DUMPS, None),
    (MSGSPEC_DECODE, LOADS, None),
    (MSGSPEC_CONVERT, LOADS, None),
    (MSGSPEC_ENCODE, DUMPS, None),
    (PYDANTIC_DECODE, LOADS, None),
    (PYDANTIC_ENCODE, DUMPS, None),
)
# acp_v2 against the speed floor, and pydantic against acp_v2: (name, over, target).
COMPARISONS: tuple[tuple[str, str, str], ...] = (
    (FROM_JSON, MSGSPEC_DECODE, ""),
    (FROM_JSON_ORJSON, MSGSPEC_DECODE, ""),
    (FROM_DICT, MSGSPEC_CONVERT, ""),
    (TO_JSON, MSGSPEC_ENCODE, ""),
    (TO_JSON_ORJSON, MSGSPEC_ENCODE, ""),
    (PYDANTIC_DECODE, FROM_JSON, ">= 5x"),
)
MEMORY_TARGET = 600  # bytes per decoded message, the objects alone


def row(*cells: str) -> None:
    print(f"| {' | '.join(cells)} |")


def count(lines: list[int] | None) -> str:
    return "n/a" if lines is None else str(len(lines))


def met(ok: bool | None) -> str:
    return "n/a" if ok is None else "yes" if ok else "**no**"


def bytes_per_message(decode: Callable[[Any], object], inputs: list[Any]) -> float:
    """Memory that the decoded messages hold (tracemalloc), per message; what the inputs
    already hold (a parsed dict's strings) is not counted again."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [decode(item) for item in inputs]
        held = tracemalloc.get_traced_memory()[0] - before - sys.getsizeof(kept)
    finally:
        tracemalloc.stop()
    del kept
    return held / len(inputs)


def with_json_backend(backend: Any, run: Callable[[], object]) -> Callable[[], object]:
    """`run` with acp_v2's optional orjson backend set to `backend` (None: the standard library)."""

    def timed() -> object:
        acp_runtime._runtime.ORJSON = backend
        return run()

    return timed


def benchmark(lines: list[str]) -> None:
    """Check the round trips, time every side in one run, print the tables."""
    n = len(lines)
    notes: list[str] = []
    parsed = [json.loads(line) for line in lines]
    orjson = acp_runtime._runtime.ORJSON
    acp_runtime._runtime.ORJSON = None
    decoded = acp_decode_all(lines)
    acp_lost, acp_moved = acp_lossy(lines, decoded)
    if acp_lost:
        first = acp_lost[0]
        notes.append(
            f"first lossy acp_v2 line ({first}):\n  in:  {lines[first - 1]}\n  out: {decoded[first - 1].to_json()}"
        )
    if orjson is None:
        notes.append("orjson is not installed: its rows are n/a")
    else:
        acp_runtime._runtime.ORJSON = orjson
        if [obj.to_json() for obj in decoded] != [obj.to_json() for obj in acp_decode_all(lines)]:
            notes.append("acp_v2 with orjson gives other text than without it")
    fast = [msgspec_stream.decode(line) for line in lines]
    ms_lost = [
        number
        for number, (line, m) in enumerate(zip(lines, fast, strict=True), 1)
        if changes(line, msgspec_stream.encode(m))[0]
    ]

    print("generating pydantic models with datamodel-codegen ...", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        model, failure = pydantic_model(Path(tmp))
    pyd_lost: list[int] | None = None
    pyd_moved: list[int] | None = None
    pyd_decoded: list[Any] = []
    if model is None:
        notes.append(failure)
    else:
        pyd_lost, pyd_moved, rejected, pyd_decoded = pydantic_lossy(model, lines)
        if rejected:
            notes.append(f"pydantic rejects {len(rejected)} valid lines (first: {rejected[0]}), so it is not timed")

    print("timing ...", file=sys.stderr)
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    from_json, from_dict = acp_v2.UpdateSessionNotification.from_json, acp_v2.UpdateSessionNotification.from_dict
    runs: dict[str, Callable[[], object]] = {
        LOADS: lambda: [json.loads(line) for line in lines],
        DUMPS: lambda: [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in parsed],
        "json.JSONEncoder, reused (as to_json does)": lambda: [encode(v) for v in parsed],
        FROM_JSON: with_json_backend(None, lambda: [from_json(line) for line in lines]),
        FROM_DICT: lambda: [from_dict(v) for v in parsed],
        TO_JSON: with_json_backend(None, lambda: [obj.to_json() for obj in decoded]),
        "acp_v2 to_dict": lambda: [obj.to_dict() for obj in decoded],
        MSGSPEC_DECODE: lambda: [msgspec_stream.decode(line) for line in lines],
        MSGSPEC_CONVERT: lambda: [msgspec_stream.convert(v) for v in parsed],
        MSGSPEC_ENCODE: lambda: [msgspec_stream.encode(m) for m in fast],
    }
    if orjson is not None:
        loads, dumps = orjson.loads, orjson.dumps
        runs["orjson.loads"] = lambda: [loads(line) for line in lines]
        runs["orjson.dumps"] = lambda: [dumps(v).decode() for v in parsed]
        runs[FROM_JSON_ORJSON] = with_json_backend(orjson, lambda: [from_json(line) for line in lines])
        runs[TO_JSON_ORJSON] = with_json_backend(orjson, lambda: [obj.to_json() for obj in decoded])
    if len(pyd_decoded) == n:
        validate_json = model.model_validate_json
        runs[PYDANTIC_DECODE] = lambda: [validate_json(line) for line in lines]
        runs[PYDANTIC_ENCODE] = lambda: [m.model_dump_json(by_alias=True, exclude_unset=True) for m in pyd_decoded]
    times = passes(runs, n)
    us = {name: statistics.median(values) for name, values in times.items()}
    acp_runtime._runtime.ORJSON = None
    memory = {
        "acp_v2 (from_dict: the objects alone)": bytes_per_message(from_dict, parsed),
        "acp_v2 (from_json: objects and their strings)": bytes_per_message(from_json, lines),
        "msgspec (from a parsed dict: the objects alone)": bytes_per_message(msgspec_stream.convert, parsed),
        "msgspec (from JSON: objects and their strings)": bytes_per_message(msgspec_stream.decode, lines),
        "json.loads (dicts, lists and strings)": bytes_per_message(json.loads, lines),
    }
    acp_runtime._runtime.ORJSON = orjson

    print(f"Python {sys.version.split()[0]}, {n} messages, median of {PASSES} passes, one run\n")
    row("measurement", "median µs/msg", "spread", "ratio (median, spread of the passes)", "target", "met")
    print("|---|---:|---:|---|---|---|")
    for name, baseline, target in TIMINGS:
        value = us.get(name)
        ratio = None if value is None or not baseline else statistics.median(ratios(times, name, baseline))
        cells = [
            name,
            "n/a" if value is None else f"{value:.2f}",
            "" if value is None else spread(times[name]),
            "",
            "",
            "",
        ]
        if baseline:
            cells[3] = "n/a" if ratio is None else f"{ratio:.2f}x {baseline} ({spread(ratios(times, name, baseline))})"
        if target is not None:
            cells[4:] = [f"<= {target}x", met(None if ratio is None else ratio <= target)]
        row(*cells)
    print()
    row("comparison", "ratio", "target", "met")
    print("|---|---:|---|---|")
    for name, over, target in COMPARISONS:
        ratio = us[name] / us[over] if name in us and over in us else None
        meets = None if ratio is None or not target else ratio >= float(target.strip(">= x"))
        row(f"{name} / {over}", "n/a" if ratio is None else f"{ratio:.2f}x", target, met(meets) if target else "")
    print()
    row("memory held per decoded message", "bytes", "target", "met")
    print("|---|---:|---|---|")
    for name, held in memory.items():
        objects_alone = name.startswith("acp_v2 (from_dict")
        target = f"<= {MEMORY_TARGET}" if objects_alone else ""
        row(name, f"{held:.0f}", target, met(held <= MEMORY_TARGET) if objects_alone else "")
    print()
    row("round trip", "lossy lines", "target", "met")
    print("|---|---:|---|---|")
    row("acp_v2: a value, type or key lost or added", count(acp_lost), "0", met(not acp_lost))
    row("acp_v2: key order differs from the input (it writes schema order)", count(acp_moved), "", "")
    row("msgspec (hand-written Structs): a value, type or key lost or added", count(ms_lost), "", "")
    row("pydantic: a value, type or key lost or added (exclude_unset)", count(pyd_lost), "", "")
    row("pydantic: key order differs from the input", count(pyd_moved), "", "")
    for note in notes:
        print(f"\n{note}")


MIX_MESSAGES = 10_000
# Rows of the mixes' table: (name, baseline, target on the ratio), the targets of issue 23.
MIX_TIMINGS: tuple[tuple[str, str, float | None], ...] = (
    (LOADS, "", None),
    (DUMPS, "", None),
    (FROM_JSON, LOADS, 1.5),
    (FROM_JSON_ORJSON, LOADS, 0.8),
    (FROM_DICT, LOADS, 0.5),
    (TO_JSON, DUMPS, 1.2),
    (TO_JSON_ORJSON, DUMPS, 1.2),
)


def benchmark_mixes(mixes: dict[str, list[tuple[str, str]]]) -> None:
    """Time decode and encode against json on each mix: both sides in one run, interleaved passes."""
    print("\n| mix | measurement | median µs/msg | spread | ratio (median, spread of the passes) | target | met |")
    print("|---|---|---:|---:|---|---|---|")
    for mix, typed in mixes.items():
        times = time_mix(typed)
        for name, baseline, target in MIX_TIMINGS:
            if name not in times:
                row(mix, name, "n/a", "", "", "" if target is None else f"<= {target}x", "n/a")
                continue
            cells = [mix, name, f"{statistics.median(times[name]):.2f}", spread(times[name]), "", "", ""]
            if baseline:
                each = ratios(times, name, baseline)
                ratio = statistics.median(each)
                cells[4] = f"{ratio:.2f}x {baseline} ({spread(each)})"
                if target is not None:
                    cells[5:] = [f"<= {target}x", met(ratio <= target)]
            row(*cells)


def time_mix(typed: list[tuple[str, str]]) -> dict[str, list[float]]:
    """The passes of json and acp_v2 (each JSON backend) on one mix."""
    orjson = acp_runtime._runtime.ORJSON
    types = {name: getattr(acp_v2, name) for name, _ in typed}
    lines = [line for _, line in typed]
    from_jsons = [(types[name].from_json, line) for name, line in typed]
    parsed = [json.loads(line) for line in lines]
    from_dicts = [(types[name].from_dict, value) for (name, _), value in zip(typed, parsed, strict=True)]
    acp_runtime._runtime.ORJSON = None
    decoded = [decode(line) for decode, line in from_jsons]
    runs: dict[str, Callable[[], object]] = {
        LOADS: lambda: [json.loads(line) for _, line in from_jsons],
        DUMPS: lambda: [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in parsed],
        FROM_JSON: with_json_backend(None, lambda: [decode(line) for decode, line in from_jsons]),
        FROM_DICT: lambda: [decode(value) for decode, value in from_dicts],
        TO_JSON: with_json_backend(None, lambda: [obj.to_json() for obj in decoded]),
    }
    if orjson is not None:
        runs[FROM_JSON_ORJSON] = with_json_backend(orjson, lambda: [decode(line) for decode, line in from_jsons])
        runs[TO_JSON_ORJSON] = with_json_backend(orjson, lambda: [obj.to_json() for obj in decoded])
    times = passes(runs, len(lines))
    acp_runtime._runtime.ORJSON = orjson
    return times


def profile(lines: list[str]) -> None:
    """cProfile the acp_v2 decode of the stream, with the cyclic GC off: its pauses
    would be charged to whichever function happens to allocate."""
    from_json = acp_v2.UpdateSessionNotification.from_json
    gc.collect()
    gc.disable()
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [from_json(line) for line in lines])
    gc.enable()
    print("acp_v2 decode of the stream, cyclic GC disabled while profiling")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="profile the acp_v2 decode instead of benchmarking")
    parser.add_argument("--mixes-only", action="store_true", help="time only the message mixes (quicker)")
    args = parser.parse_args()
    lines = build_lines()
    print(f"validating {len(lines)} lines against the schema ...", file=sys.stderr)
    validate(lines)
    if args.profile:
        profile(lines)
        return
    if not args.mixes_only:
        benchmark(lines)
    mixes = {name: build_mix(name, MIX_MESSAGES) for name in [*MIXES, REQUESTS]}
    for typed in mixes.values():
        validate_typed(typed)
    print("timing the mixes ...", file=sys.stderr)
    benchmark_mixes(mixes)


if __name__ == "__main__":
    main()
