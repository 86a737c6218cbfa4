"""Differential: on every `$defs` type of the ACP v2 schema, strict decoding accepts a JSON
value exactly when jsonschema (Draft 2020-12) does.

Values are drawn valid (tests/support/strategies.py, from the IR) and then mutated near the
boundaries a decoder can get wrong: a property dropped, a value of another JSON type, a
known tag or enum string of another type, a number just outside an integer format's
range, an extra or a missing level of nesting, null, an empty list or string, another
part of the same value. jsonschema is the oracle, with these documented differences:

- Integer formats (`uint16`, `int64`, ...) are bounds (docs/guides/package.md, "Strict vs lenient"), which
  jsonschema does not check: the validator gets a format checker that enforces each
  `[u]intN` range, written here from the format's name, not taken from the generator.
- Every other format (`uri`, `date-time`, `regex`, `double`) is an annotation in 2020-12
  and to the generator (generator/schema/keywords.py, ANNOTATIONS): neither side checks it.
- Non-finite numbers are not JSON; they are rejected by the codec (tests/package/test_codec.py)
  and are not drawn here.

A value both accept must also round-trip type-exactly.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from referencing import Registry, Resource

from generator.ir.model import Checked, EnumType, Nullable, ObjectType, Ref, TypeExpr
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA, assert_json_identical, import_package, json_difference
from tests.support.strategies import Strategies

acp = import_package(ROOT / "generated", "acp_v2")
SCHEMA = json.loads(V2_SCHEMA.read_text())
DEFS: dict[str, Any] = SCHEMA["$defs"]
MODULE = build_ir(V2_SCHEMA, "acp_v2", ROOT)
STRATEGIES = Strategies(MODULE)
# No shrinking: a failure prints the value, the edits and both verdicts, which is what one
# needs; shrinking a drawn value together with its seed can take minutes per failing type.
SETTINGS = settings(max_examples=4, deadline=None, database=None, phases=[Phase.explicit, Phase.generate])
MUTATIONS_PER_VALUE = 10


def walk(node: object) -> Iterator[dict[str, Any]]:
    """Every schema object below `node` (property maps' keys are names, not schemas, but
    their values are; walking all dict values covers both)."""
    if isinstance(node, dict):
        yield node
        for child in node.values():
            yield from walk(child)
    elif isinstance(node, list):
        for child in node:
            yield from walk(child)


# --- the oracle ----------------------------------------------------------------

INTEGER_FORMAT = re.compile(r"(u?)int(8|16|32|64)")
ANNOTATION_FORMATS = {"uri", "date-time", "regex", "double"}
FORMATS = {node["format"] for node in walk(DEFS) if isinstance(node.get("format"), str)}


def integer_format_range(form: str) -> tuple[int, int]:
    """`uint16` → [0, 2**16 - 1], `int64` → [-2**63, 2**63 - 1]."""
    match = INTEGER_FORMAT.fullmatch(form)
    assert match, form
    bits = int(match[2])
    return (0, 2**bits - 1) if match[1] else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
for _form in sorted(FORMATS - ANNOTATION_FORMATS):

    def _in_range(instance: object, bounds: tuple[int, int] = integer_format_range(_form)) -> bool:
        if isinstance(instance, bool) or not isinstance(instance, (int, float)):
            return True  # the format says nothing about other types
        if isinstance(instance, float) and not instance.is_integer():
            return True  # not an integer: `type` decides
        return bounds[0] <= instance <= bounds[1]

    FORMAT_CHECKER.checks(_form)(_in_range)

URI = "urn:acp-codegen:v2"
REGISTRY = Registry().with_resource(URI, Resource.from_contents(SCHEMA))
VALIDATORS = {
    name: jsonschema.Draft202012Validator(
        {"$ref": f"{URI}#/$defs/{name}"}, registry=REGISTRY, format_checker=FORMAT_CHECKER
    )
    for name in DEFS
}


def test_the_schema_uses_only_formats_this_test_knows():
    """A new format must be classified here (bound or annotation) before this test trusts it."""
    assert {form for form in FORMATS if not INTEGER_FORMAT.fullmatch(form)} <= ANNOTATION_FORMATS


def test_the_oracle_enforces_integer_formats():
    assert VALIDATORS["TerminalSize"].is_valid({"cols": 65535, "rows": 1})
    assert not VALIDATORS["TerminalSize"].is_valid({"cols": 65536, "rows": 1})
    assert not VALIDATORS["TerminalSize"].is_valid({"cols": 65536.0, "rows": 1})
    assert not VALIDATORS["UsageUpdate"].is_valid({"used": 2**64, "size": 1})
    assert VALIDATORS["UsageUpdate"].is_valid({"used": 2**64 - 1, "size": 1})


# --- mutations -------------------------------------------------------------------

SCHEMA_STRINGS = sorted(
    {node["const"] for node in walk(DEFS) if isinstance(node.get("const"), str)}
    | {value for node in walk(DEFS) for value in node.get("enum", []) if isinstance(value, str)}
)
PROPERTY_NAMES = sorted({name for node in walk(DEFS) for name in node.get("properties", {})})
BOUNDS = sorted(
    {bound for form in FORMATS - ANNOTATION_FORMATS for bound in integer_format_range(form)}
    | {node[key] for node in walk(DEFS) for key in ("minimum", "maximum") if isinstance(node.get(key), (int, float))}
)
INTEGERS = sorted({value + step for value in BOUNDS for step in (-1, 0, 1)} | {0, 1, -1})
SCALARS = [None, True, False, 1.5, -0.5, 2.0, "", "_x", [], {}, [None], {"_x": None}]


def replacement(rng: random.Random, found: list[tuple[Path, object]]) -> object:
    """A value to put somewhere: a JSON scalar, an integer near a bound (or that integer as
    a float), a string the schema names (a tag, an enum value), another node of the same
    value, or a small random JSON value."""
    pool = rng.randrange(6)
    if pool == 0:
        return rng.choice(SCALARS)
    if pool == 1:
        return rng.choice(INTEGERS)
    if pool == 2:
        return float(rng.choice(INTEGERS))
    if pool == 3:
        return rng.choice(SCHEMA_STRINGS)
    if pool == 4:
        return rng.choice(found)[1]
    return random_json(rng, 2)


def random_json(rng: random.Random, depth: int) -> object:
    kind = rng.randrange(8 if depth else 6)
    if kind < 5:
        return [None, rng.random() < 0.5, rng.randint(-(2**53), 2**53), rng.uniform(-1e6, 1e6), "s" * rng.randrange(3)][
            kind
        ]
    if kind == 5:
        return rng.choice(SCHEMA_STRINGS)
    if kind == 6:
        return [random_json(rng, depth - 1) for _ in range(rng.randrange(3))]
    return {rng.choice(PROPERTY_NAMES): random_json(rng, depth - 1) for _ in range(rng.randrange(3))}


Path = tuple[str | int, ...]


def nodes(value: object, path: Path = ()) -> Iterator[tuple[Path, object]]:
    yield path, value
    if type(value) is dict:
        for key, item in value.items():
            yield from nodes(item, (*path, key))
    elif type(value) is list:
        for index, item in enumerate(value):
            yield from nodes(item, (*path, index))


def replaced(value: object, path: Path, new: object, delete: bool = False) -> object:
    """`value` with the node at `path` replaced by `new` (or removed from its parent)."""
    if not path:
        return new
    head, *rest = path
    if type(value) is dict:
        copy = dict(value)
        if delete and not rest:
            del copy[head]
        else:
            copy[head] = replaced(value[head], tuple(rest), new, delete)
        return copy
    assert type(value) is list and isinstance(head, int)
    copy_list = list(value)
    if delete and not rest:
        del copy_list[head]
    else:
        copy_list[head] = replaced(value[head], tuple(rest), new, delete)
    return copy_list


def mutate(value: object, rng: random.Random) -> tuple[object, str]:
    """One edit of `value` at a random node, and what it was."""
    found = list(nodes(value))
    path, node = rng.choice(found)
    kinds = ["replace", "replace", "replace", "wrap"]
    if path:
        kinds += ["delete", "delete"]
    if type(node) in (dict, list) and node:
        kinds.append("unwrap")
    if type(node) is dict:
        kinds += ["add", "add"]
    if type(node) in (dict, list, str) and node:
        kinds.append("empty")
    if type(node) in (int, float):
        kinds += ["nudge", "edge", "edge"]
    kind = rng.choice(kinds)
    where = "$" + "".join(f"[{step!r}]" for step in path)
    if kind == "delete":
        return replaced(value, path, None, delete=True), f"deleted {where}"
    if kind == "replace":
        new = replacement(rng, found)
    elif kind == "wrap":
        new = rng.choice([[node], {"_x": node}, {rng.choice(PROPERTY_NAMES): node}])
    elif kind == "unwrap":
        new = rng.choice(list(node.values()) if type(node) is dict else node)  # type: ignore[union-attr, arg-type]
    elif kind == "add":
        key = rng.choice(PROPERTY_NAMES) if rng.random() < 0.8 else rng.choice(["", "_x", "type"])
        new = {**node, key: replacement(rng, found)}  # type: ignore[dict-item]
    elif kind == "empty":
        new = type(node)()
    elif kind == "nudge":
        assert isinstance(node, (int, float)) and not isinstance(node, bool)
        new = rng.choice([node + 1, node - 1, -node - 1, node + 0.5, float(node), int(node)])
    else:  # the bounds on either side of the number, and just past them
        assert isinstance(node, (int, float)) and not isinstance(node, bool)
        above = min((bound for bound in BOUNDS if bound >= node), default=node)
        below = max((bound for bound in BOUNDS if bound <= node), default=node)
        new = rng.choice([above, above + 1, below, below - 1])
        new = float(new) if rng.random() < 0.2 else new
    return replaced(value, path, new), f"{kind} at {where}: {new!r}"


# --- the property ------------------------------------------------------------------


def verdicts(name: str, value: object) -> tuple[bool, bool, object]:
    """Whether jsonschema accepts `value`, whether strict decoding does, what it decoded."""
    valid = VALIDATORS[name].is_valid(value)
    try:
        decoded = acp.decode(name, value, strict=True)
    except acp.DecodeError:
        return valid, False, None
    return valid, True, decoded


def disagreement(name: str, value: object) -> str:
    """Both sides' reasons, for the failure message."""
    error = jsonschema.exceptions.best_match(VALIDATORS[name].iter_errors(value))
    try:
        acp.decode(name, value, strict=True)
        codec_says = "valid"
    except acp.DecodeError as rejected:
        codec_says = str(rejected)
    schema_says = "valid" if error is None else f"{error.json_path}: {error.message}"
    return f"value: {value!r}\njsonschema: {schema_says}\nstrict decoding: {codec_says}"


# A member of an integer enum is one Python value per JSON number: -32700.0, which JSON
# Schema calls the integer -32700, decodes to ErrorCode.PARSE_ERROR, which encodes as
# -32700 (docs/guides/package.md, "Lossless"). Where such an enum is expected, that integral float comes
# back as the member's int; everywhere else a number keeps its type.
INTEGER_ENUMS = {
    enum.name: frozenset(member.value for member in enum.members)
    for enum in MODULE.types
    if isinstance(enum, EnumType) and all(type(member.value) is int for member in enum.members)
}


def integer_enum(expr: TypeExpr) -> frozenset[object]:
    while isinstance(expr, (Nullable, Checked)):
        expr = expr.inner
    return INTEGER_ENUMS.get(expr.name, frozenset()) if isinstance(expr, Ref) else frozenset()


INTEGER_ENUM_PROPERTIES: dict[str, frozenset[object]] = {}
for _obj in MODULE.types:
    for _field in _obj.fields if isinstance(_obj, ObjectType) else ():
        if integer_enum(_field.type):
            INTEGER_ENUM_PROPERTIES[_field.wire_name] = INTEGER_ENUM_PROPERTIES.get(
                _field.wire_name, frozenset()
            ) | integer_enum(_field.type)


def as_decoding_gives_back(name: str, value: object) -> object:
    """`value` with each integral float where an integer enum expects one of its members as that int."""

    def back(node: object, members: frozenset[object]) -> object:
        if type(node) is float and node.is_integer() and int(node) in members:
            return int(node)
        if type(node) is dict:
            return {key: back(item, INTEGER_ENUM_PROPERTIES.get(key, frozenset())) for key, item in node.items()}
        if type(node) is list:
            return [back(item, frozenset()) for item in node]
        return node

    return back(value, INTEGER_ENUMS.get(name, frozenset()))


def test_the_integer_enum_exception_is_narrow():
    """Only error codes: a `code` property (at any depth) or an ErrorCode itself, holding a member's value."""
    assert set(INTEGER_ENUMS) == {"ErrorCode"} and set(INTEGER_ENUM_PROPERTIES) == {"code"}
    value = {"code": -32700.0, "x": -32700.0, "data": {"code": 7.0}}
    assert_json_identical(as_decoding_gives_back("Error", value), {**value, "code": -32700})
    assert_json_identical(as_decoding_gives_back("ErrorCode", -32600.0), -32600)


def check(name: str, value: object, how: str) -> None:
    valid, accepted, decoded = verdicts(name, value)
    assert valid == accepted, f"{name} {how}\n{disagreement(name, value)}"
    if valid:
        difference = json_difference(acp.encode(decoded), as_decoding_gives_back(name, value))
        assert difference is None, f"{name} {how}: round trip changed {value!r}: {difference}"


@pytest.mark.parametrize("name", sorted(DEFS))
def test_strict_decoding_rejects_exactly_what_the_schema_rejects(name):
    @SETTINGS
    @given(STRATEGIES.named(name), st.integers(0, 2**32))
    def agree(value, seed):
        rng = random.Random(seed)  # cheaper than a hypothesis draw per edit, and as reproducible
        check(name, value, "as drawn")
        for _ in range(MUTATIONS_PER_VALUE):
            mutated, how = mutate(value, rng)
            if rng.random() < 0.3:
                mutated, again = mutate(mutated, rng)
                how = f"{how}, then {again}"
            check(name, mutated, how)

    agree()
