"""The official JSON-Schema-Test-Suite (draft 2020-12), vendored in json_schema_suite/.

Every case either generates a package that answers each of its tests as the
suite says (valid: strict decode, then encode gives the same JSON back;
invalid: DecodeError), or is refused with a GenerationError whose pointer lies
inside the case or inside one of the suite's remote documents it references. The
refused cases are listed, pointer and message, in json_schema_suite/refused.txt:
a change in coverage shows up in review as a change of that file.

Each case schema becomes `$defs/Case` of a document of its own. A case with an
`$id` is an embedded schema resource there, so its references resolve against its
own URI as they would at a document root; in a case without one, the `#`
references of its own resource are rebased to `#/$defs/Case`. The suite's remote
documents (`json_schema_suite/remotes/`) are what `http://localhost:1234/` maps to,
as the suite prescribes. Packages are rendered but not formatted (black is not what
is under test) and imported from a temporary directory.
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
from tests.support.helpers import ROOT, SUMMARY, json_difference

SUITE = ROOT / "tests" / "json_schema_suite"
CASES = SUITE / "draft2020-12"
REFUSED = SUITE / "refused.txt"
REMOTES = (("http://localhost:1234/", SUITE / "remotes"),)
CASE_POINTER = "#/$defs/Case"


def rebase(schema: object, *, top: bool = True) -> object:
    """`schema` with every `#…` JSON-pointer `$ref` of its resource moved under
    `CASE_POINTER` (not those of embedded resources: they have an `$id` of their own)."""
    if not isinstance(schema, dict) or (not top and "$id" in schema):
        return schema
    result = dict(schema)
    ref = result.get("$ref")
    if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
        result["$ref"] = CASE_POINTER + ref[1:]
    for key in sorted(SCHEMA_KEYWORDS):
        if key in result:
            result[key] = rebase(result[key], top=False)
    for key in sorted(SCHEMA_LIST_KEYWORDS):
        if isinstance(result.get(key), list):
            result[key] = [rebase(item, top=False) for item in result[key]]
    for key in sorted(SCHEMA_MAP_KEYWORDS):
        if isinstance(result.get(key), dict):
            result[key] = {name: rebase(item, top=False) for name, item in result[key].items()}
    return result


def inside_case(pointer: str) -> bool:
    """Whether a refusal's pointer lies in the case, or in a remote document it references."""
    in_remote = any(pointer.startswith(prefix) for prefix, _ in REMOTES)
    return in_remote or pointer == CASE_POINTER or pointer.startswith(CASE_POINTER + "/")


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
    embedded = isinstance(schema, dict) and "$id" in schema  # a resource of its own: nothing to rebase
    document = {"$defs": {"Case": schema if embedded else rebase(schema)}}
    path.write_text(json.dumps(document))
    module = build_module(load_schema(path, REMOTES), package, path.name)
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
                if inside_case(error.pointer):
                    outcome.refused[case_id] = str(error)
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
