"""Tuples (tests/fixtures/tuples.json): `prefixItems` of a fixed length decode to `tuple[...]`,
encode to JSON arrays, build from Python tuples, and name the bad item in a DecodeError."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from generator.ir.model import AnyValue, Checked, ListOf, Primitive, Ref, TupleOf
from tests.support.helpers import FIXTURES, MYPY_CACHE, assert_json_identical, generate_package, import_package, ir_of


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("tuples")
    generate_package(FIXTURES / "tuples.json", out, "tuples_pkg")
    return out


@pytest.fixture(scope="module")
def pkg(out):
    return import_package(out, "tuples_pkg")


def rejection(pkg, name: str, value: object):
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(name, value, strict=True)
    return caught.value


def test_only_prefix_items_that_fix_the_length_are_tuples(tmp_path):
    types = ir_of(FIXTURES / "tuples.json", tmp_path).by_name()
    fields = {item.name: item.type for item in types["Span"].fields}
    assert types["Point"].target == TupleOf((Primitive("float"), Primitive("float")))
    assert fields["range"] == TupleOf((Primitive("int", minimum=0), Primitive("int", minimum=0)))
    assert fields["entry"] == TupleOf((Ref("Kind"), Primitive("str"), ListOf(Primitive("str"))))
    assert isinstance(fields["single"], Checked) and isinstance(fields["single"].inner, TupleOf)
    assert isinstance(fields["open"], Checked) and fields["open"].inner == ListOf(AnyValue())


def test_annotations_are_tuples(pkg):
    annotations = pkg.Span.__annotations__
    assert pkg.Point == tuple[float, float]  # a type alias, as every alias is
    assert annotations["range"] == "tuple[int, int]"
    assert annotations["entry"] == "MaybeUndefined[tuple[Kind, str, list[str]]]"
    assert annotations["single"] == "tuple[SpanSingleItem0] | Undefined"
    assert annotations["open"] == "list[Any] | Undefined"


def test_decode_gives_tuples_and_encode_gives_arrays_back(pkg):
    data = {
        "range": [1, 5],
        "entry": ["dir", "src", ["a.py", "b.py"]],
        "points": [[0, 1.5], [2.0, -1]],
        "single": [{"n": 3}],
        "open": [7],
    }
    span = pkg.decode("Span", data, strict=True)
    assert span.range == (1, 5) and type(span.range) is tuple
    assert span.entry == (pkg.Kind.DIR, "src", ["a.py", "b.py"])
    assert span.points == [(0.0, 1.5), (2.0, -1.0)]
    assert span.single == (pkg.SpanSingleItem0(n=3),)
    assert span.open == [7]
    encoded = pkg.encode(span)
    assert_json_identical(json.loads(json.dumps(encoded)), data)
    assert type(encoded["range"]) is list and type(encoded["entry"][0]) is str
    assert_json_identical(
        pkg.encode(pkg.decode("Span", {"range": [0, 0], "entry": None})), {"range": [0, 0], "entry": None}
    )


def test_values_built_in_python_round_trip(pkg):
    span = pkg.Span.builder(range=(2, 3)).entry(("file", "x", ["c", "d"])).points([(1, 2)]).build()
    assert span.entry == (pkg.Kind.FILE, "x", ["c", "d"])
    assert pkg.decode("Span", pkg.encode(span), strict=True) == span
    assert pkg.encode(pkg.Span(range=(4, 5), entry=(pkg.Kind.DIR, "y", []))) == {
        "range": [4, 5],
        "entry": ["dir", "y", []],
    }


def test_a_tuple_of_the_wrong_length_is_encoded_whole_and_rejected_by_build(pkg):
    assert pkg.encode(pkg.Span(range=(1, 2, 3)))["range"] == [1, 2, 3]  # nothing dropped
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.Span.builder(range=(1,)).build()
    assert (caught.value.path, caught.value.expected) == ("$.range", "array of 2 items")


@pytest.mark.parametrize(
    ("value", "path", "expected"),
    [
        ({"range": [1]}, "$.range", "array of 2 items"),
        ({"range": [1, 2, 3]}, "$.range", "array of 2 items"),
        ({"range": {"0": 1, "1": 2}}, "$.range", "array of 2 items"),
        ({"range": [1, -2]}, "$.range[1]", "integer >= 0"),
        ({"range": [1, 2], "entry": ["link", "x", []]}, "$.entry[0]", 'one of "file", "dir"'),
        ({"range": [1, 2], "entry": ["dir", "x", [1]]}, "$.entry[2][0]", "string"),
        ({"range": [1, 2], "points": [[0, 0], [1]]}, "$.points[1]", "array of 2 items"),
        ({"range": [1, 2], "single": [{}]}, "$.single[0].n", "a value (required)"),
    ],
)
def test_bad_items_are_named_by_their_path(pkg, value, path, expected):
    error = rejection(pkg, "Span", value)
    assert (error.path, error.expected) == (path, expected)


def test_checks_beside_the_tuple_still_apply(pkg):
    assert rejection(pkg, "Point", [1, "2"]).path == "$[1]"
    assert rejection(pkg, "Span", {"range": [1, 2], "open": [1, 2]}).path == "$.open[1]"


def test_the_tuple_types_are_checked_by_mypy_strict(out):
    usage = out / "usage.py"
    usage.write_text(
        textwrap.dedent(
            """
            from tuples_pkg import Kind, Span

            span = Span.builder(range=(1, 2)).entry(("dir", "src", [])).build()
            first: int = span.range[0]
            Span(range=(1, "2"))
            """
        )
    )
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), "tuples_pkg", "usage.py"]
    result = subprocess.run(command, cwd=out, capture_output=True, text=True)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("usage.py:6:"), result.stdout
    assert '"tuple[int, str]"' in errors[0] and '"tuple[int, int]"' in errors[0]
