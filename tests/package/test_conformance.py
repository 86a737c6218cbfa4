"""The official JSON-Schema-Test-Suite (draft 2020-12), vendored in json_schema_suite/.

Every case either generates a package that answers each of its tests as the
suite says (valid: strict decode, then encode gives the same JSON back;
invalid: DecodeError), or is refused with a GenerationError whose pointer lies
inside the case. The refused cases are listed in json_schema_suite/refused.txt:
a change in coverage shows up in review as a change of that file.

Each case schema becomes `$defs/Case` of a document of its own, its `#`
references rebased there (and its `$id`, if any, the document's). Packages are rendered but not formatted (black is
not what is under test) and imported from a temporary directory.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from generator.emit.render import render_package
from generator.errors import GenerationError
from generator.ir.build import build_module
from generator.schema.load import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS, load_schema
from tests.helpers import ROOT, SUMMARY, json_difference

SUITE = ROOT / "tests" / "json_schema_suite"
CASES = SUITE / "draft2020-12"
REFUSED = SUITE / "refused.txt"
CASE_POINTER = "#/$defs/Case"


def rebase(schema: object) -> object:
    """`schema` with every `#…` JSON-pointer `$ref` moved under `CASE_POINTER`."""
    if not isinstance(schema, dict):
        return schema
    result = dict(schema)
    ref = result.get("$ref")
    if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
        result["$ref"] = CASE_POINTER + ref[1:]
    for key in sorted(SCHEMA_KEYWORDS):
        if key in result:
            result[key] = rebase(result[key])
    for key in sorted(SCHEMA_LIST_KEYWORDS):
        if isinstance(result.get(key), list):
            result[key] = [rebase(item) for item in result[key]]
    for key in sorted(SCHEMA_MAP_KEYWORDS):
        if isinstance(result.get(key), dict):
            result[key] = {name: rebase(item) for name, item in result[key].items()}
    return result


def refusal_line(case_id: str, reason: str) -> str:
    """One line of refused.txt (control characters escaped)."""
    return json.dumps(f"{case_id} -- {reason}", ensure_ascii=False)[1:-1]


@dataclass
class Outcome:
    generated: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # case id → the refusal
    wrong: dict[str, str] = field(default_factory=dict)  # case id → what went wrong


def generate_case(schema: object, package: str, out: Path):
    """The imported package of one case schema; GenerationError when refused."""
    path = out / f"{package}.json"
    document: dict[str, object] = {"$defs": {"Case": rebase(schema)}}
    if isinstance(schema, dict) and "$id" in schema:  # the case's base URI stays the document's
        document["$id"] = schema["$id"]
        document["$defs"] = {"Case": {key: value for key, value in rebase(schema).items() if key != "$id"}}
    path.write_text(json.dumps(document))
    module = build_module(load_schema(path), package, path.name)
    files = render_package(module, {"generator": "test", "black": "none"})
    directory = out / package
    directory.mkdir()
    for name, units in files.items():
        (directory / name).write_text("\n\n\n".join(units))
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


def check_case(package, tests: list[dict]) -> str | None:
    """What the package answers wrongly, or None."""
    for test in tests:
        data = test["data"]
        try:
            value = package.decode("Case", data, strict=True)
        except package.DecodeError as error:
            if test["valid"]:
                return f"{test['description']!r}: rejected a valid value ({error})"
            continue
        if not test["valid"]:
            return f"{test['description']!r}: accepted an invalid value"
        encoded = json.loads(json.dumps(package.encode(value)))
        difference = json_difference(encoded, data)  # type-exact: 1.0 stays 1.0, true stays true
        if difference:
            return f"{test['description']!r}: round trip gave {encoded!r} ({difference})"
    return None


def run_suite(out: Path) -> Outcome:
    outcome = Outcome()
    for path in sorted(CASES.glob("*.json")):
        for index, case in enumerate(json.loads(path.read_text())):
            case_id = f"{path.stem} #{index}: {case['description']}"
            package = f"suite_{path.stem.replace('-', '_')}_{index}"
            try:
                generated = generate_case(case["schema"], package, out)
            except GenerationError as error:
                if error.pointer == CASE_POINTER or error.pointer.startswith(CASE_POINTER + "/"):
                    outcome.refused[case_id] = error.message
                else:
                    outcome.wrong[case_id] = f"refused outside the case: {error}"
                continue
            except Exception as error:  # a crash is a wrong answer, whatever it is
                outcome.wrong[case_id] = f"crashed: {type(error).__name__}: {error}"
                continue
            try:
                problem = check_case(generated, case["tests"])
            except Exception as error:
                problem = f"crashed: {type(error).__name__}: {error}"
            if problem is None:
                outcome.generated.append(case_id)
            else:
                outcome.wrong[case_id] = problem
    return outcome


def test_every_case_is_answered_as_the_suite_says_or_is_a_listed_refusal(
    tmp_path_factory: pytest.TempPathFactory, record_property: Callable[[str, object], None]
):
    """One test, not one per claim: the suite is generated once (pytest-xdist would run a
    shared fixture once per worker)."""
    outcome = run_suite(tmp_path_factory.mktemp("suite"))
    counts = f"{len(outcome.generated)} generated, {len(outcome.refused)} refused, {len(outcome.wrong)} wrong"
    record_property(SUMMARY, f"JSON-Schema-Test-Suite draft2020-12: {counts}")
    assert outcome.wrong == {}
    listed = [line for line in REFUSED.read_text().splitlines() if line and not line.startswith("#")]
    assert [refusal_line(case_id, reason) for case_id, reason in outcome.refused.items()] == listed
