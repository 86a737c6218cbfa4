"""`from_json` / `to_json` with orjson and with the standard library alone: the same
text, the same values and the same errors (the orjson path runs when it is installed,
and the test dependencies install it)."""

from __future__ import annotations

import math
import subprocess
import sys

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers import ROOT, import_package, runtime_module

acp = import_package(ROOT / "generated", "acp_v2")
rt = runtime_module("_runtime")
DecodeError = acp.DecodeError
SETTINGS = settings(max_examples=500, deadline=None, database=None)

# Floats that orjson writes its own way, and the edges of 64-bit integers and of floats.
SMALL_FLOATS = [1e-4, 1e-5, 3.074291971619276e-05, 1e-7, 2.3523573848418126e-9, 1e-10]
EDGES = [0, -0.0, 1e16, 1e22, 5e-324, 1.5e300, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30]
NUMBERS = st.sampled_from([*SMALL_FLOATS, *EDGES, -(10**30), float("nan"), float("inf")])
ODD_TEXT = st.sampled_from(["\ud800", "\udfff\ud800", "\x00\x1f\x7f", "\u2028", "😀", '"\\/', "e-5", "0.0000", "null"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | NUMBERS
    | st.text(max_size=8)
    | ODD_TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=4) | ODD_TEXT, children, max_size=4)
        | st.dictionaries(st.integers(0, 3) | st.booleans(), children, max_size=2)
    ),
    max_leaves=12,
)
# Pieces of JSON text: valid ones, ones that the two libraries read differently or only one refuses, invalid ones.
VALID_PIECES = ["{", "}", "[", "]", ",", ":", '"a"', '"k"', "1", "1e-7", "true", "null", " ", "\t", "-0"]
ODD_PIECES = [
    "1e400",
    "-1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "1" * 30,
    '"\\ud800"',
    '"\\ud83d\\ude00"',
]
INVALID_PIECES = ["01", "1.", ".5", "NaN", "Infinity", "\ufeff", "\x0c", '"\x1f"', "[1,]", "\x00"]
JSON_PIECES = st.sampled_from([*VALID_PIECES, *ODD_PIECES, *INVALID_PIECES])


@pytest.fixture(params=["orjson", "stdlib"])
def backend(request, monkeypatch):
    """Runs a test with orjson and with the standard library alone."""
    if request.param == "stdlib":
        monkeypatch.setattr(rt, "ORJSON", None)
    return request.param


def outcome(function, *args):
    """What a call gives: ("value", type-exact repr) or ("error", type, message)."""
    try:
        result = function(*args)
    except Exception as error:
        return ("error", type(error), str(error))
    return ("value", typed(result))


def typed(value: object) -> object:
    """A comparable form that keeps types (1 vs 1.0 vs True), key order and -0.0. It recurses
    once per level: values as deep as Python 3.13 parses (9,998 levels) need a higher limit."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 12_000))
    try:
        return _typed(value)
    finally:
        sys.setrecursionlimit(limit)


def _typed(value: object) -> object:
    if isinstance(value, dict):
        return ("dict", [(_typed(key), _typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


def both(function, *args):
    """The outcome of `function(*args)` with orjson and with the standard library alone."""
    with_orjson = outcome(function, *args)
    saved, rt.ORJSON = rt.ORJSON, None
    try:
        alone = outcome(function, *args)
    finally:
        rt.ORJSON = saved
    return with_orjson, alone


def test_orjson_is_installed_for_the_tests_and_used():
    assert rt.ORJSON is orjson


@SETTINGS
@given(VALUES)
def test_dump_json_writes_the_standard_librarys_text_or_raises_its_error(value):
    with_orjson, alone = both(rt.dump_json, value)
    assert with_orjson == alone


@SETTINGS
@given(VALUES)
def test_parse_json_reads_any_text_the_standard_library_writes_the_same_way(value):
    try:
        text = rt.dump_json(value)
    except (ValueError, TypeError):
        return
    for document in (text, text.encode("utf-8", "surrogatepass")):
        with_orjson, alone = both(rt.parse_json, document)
        assert with_orjson == alone


@SETTINGS
@given(st.lists(JSON_PIECES, max_size=12).map("".join))
def test_parse_json_gives_the_same_value_or_error_on_any_text(text):
    for document in (text, text.encode("utf-8", "surrogatepass")):
        with_orjson, alone = both(rt.parse_json, document)
        assert with_orjson == alone


# JSON's whitespace, and characters that look like it but are not.
WHITESPACE_PIECES = st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\xa0", "\u2028"])


def parse_with_the_standard_library(text: str) -> object:
    """parse_json without orjson; its DecodeError as a ValueError of what it found."""
    saved, rt.ORJSON = rt.ORJSON, None
    try:
        return rt.parse_json(text)
    except rt.DecodeError as error:
        raise ValueError(error.found) from None
    finally:
        rt.ORJSON = saved


@SETTINGS
@given(st.lists(JSON_PIECES | WHITESPACE_PIECES, max_size=12).map("".join))
def test_the_standard_library_path_reads_text_as_its_decoder_does(text):
    """Its scanner fast path gives what `JSONDecoder.decode` gives: the value, or that error."""
    expected = outcome(rt._JSON_DECODER.decode, text)
    if expected[0] == "error":
        expected = ("error", ValueError, f"invalid JSON ({expected[2]})")
    assert outcome(parse_with_the_standard_library, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1e400",  # a float past the largest double
        '{"a": [-1e400]}',
        "NaN",
        "Infinity",
        "9" * 5000,  # past Python's 4,300 digits
        "18446744073709551616",  # orjson would read these two as floats
        "-9223372036854775809",
        '"\\ud800"',  # orjson refuses lone surrogates, the standard library keeps them
        "\ufeff{}",
        b"\xff",
        b'"\xed\xa0\x80"',
        "[" * 2000 + "]" * 2000,  # past orjson's depth limit
        "[1,]",
        "",
        '{"a": 1, "a": 2}',
        "-0",
    ],
)
def test_parse_json_edge_cases_agree(text):
    with_orjson, alone = both(rt.parse_json, text)
    assert with_orjson == alone


@pytest.mark.parametrize(
    "value",
    [float("nan"), [float("inf")], {"k": 1e-7}, 3e-5, 2**64, -(2**63) - 1, "\ud800", {1: "a"}, {None: 1}, (1, 2)],
)
def test_dump_json_edge_cases_agree(value):
    with_orjson, alone = both(rt.dump_json, value)
    assert with_orjson == alone


NOTE = (
    '{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":null,'
    '"status":"completed","rawOutput":{"exitCode":0,"big":18446744073709551616,"small":1e-07,"text":"é😀"},'
    '"_meta":{"k":1}},"x-extra":[1.5,-0.0]}'
)


def test_from_json_and_to_json_round_trip_on_both_paths(backend):
    note = acp.UpdateSessionNotification.from_json(NOTE)
    assert note.update.raw_output["big"] == 2**64
    assert type(note.update.raw_output["small"]) is float
    assert note.to_json() == NOTE
    assert acp.UpdateSessionNotification.from_json(NOTE.encode()).to_json() == NOTE


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("{", "invalid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ('{"used": 1e400, "size": 1}', "invalid JSON (1e400 is too large for a float)"),
        ('{"used": NaN, "size": 1}', "invalid JSON (NaN is not valid JSON)"),
        (b"\xff", "invalid JSON ('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"),
    ],
)
def test_from_json_errors_are_the_same_decode_errors_on_both_paths(backend, text, found):
    with pytest.raises(DecodeError) as caught:
        acp.UsageUpdate.from_json(text)
    assert (caught.value.path, caught.value.expected, caught.value.found) == ("$", "a JSON document", found)


def test_from_json_decodes_the_top_level_value_with_the_types_decoder_on_both_paths(backend):
    with pytest.raises(DecodeError) as caught:
        acp.UsageUpdate.from_json("[]")
    assert str(caught.value) == "$: expected UsageUpdate (an object), found array []"
    with pytest.raises(DecodeError) as caught:
        acp.UsageUpdate.from_json('{"used": 18446744073709551616, "size": 1}', strict=True)
    assert caught.value.path == "$.used"


def test_to_json_errors_are_the_same_on_both_paths(backend):
    cost = acp.Cost(amount=float("nan"), currency="USD")
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        cost.to_json()


def test_the_package_needs_only_the_standard_library():
    script = (
        "import sys; sys.modules['orjson'] = None; import acp_v2, acp_runtime._runtime as rt; assert rt.ORJSON is None; "
        'print(acp_v2.UsageUpdate.from_json(\'{"used": 1, "size": 2}\').to_json())'
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT / "generated", capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, '{"used":1,"size":2}\n', "")
