"""generator/runtime/_runtime.py on its own: presence, errors, JSON text in and out, the
checks the generated decoders call and the encoding of values built in Python."""

from __future__ import annotations

import copy
import enum
import functools
import json
import pickle

import pytest

from generator.runtime import _runtime as rt
from tests.support.hostile_lines import DEEP

# --- presence ----------------------------------------------------------------------


def test_undefined_is_one_falsy_member_that_copies_and_pickles_as_itself():
    assert rt.Undefined() is rt.UNDEFINED and not rt.UNDEFINED and repr(rt.UNDEFINED) == "UNDEFINED"
    assert copy.copy(rt.UNDEFINED) is copy.deepcopy(rt.UNDEFINED) is pickle.loads(pickle.dumps(rt.UNDEFINED))


def test_the_logger_is_named_after_the_package_the_module_is_copied_into():
    assert rt.LOGGER == "generator.runtime"


# --- errors --------------------------------------------------------------------------


def test_a_path_is_written_as_json_path():
    path = (((((rt.ROOT, "update"), "content"), 2), "type"), "a b")
    assert rt.format_path(path) == '$.update.content[2].type["a b"]'
    assert rt.format_path(rt.ROOT) == "$"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "boolean True"),
        (7, "integer 7"),
        (1.5, "number 1.5"),
        ("x" * 100, f"string '{'x' * 59}..."),
        ([1], "array [1]"),
        ({}, "object {}"),
        (10**5000, "integer too large to print"),
    ],
    ids=["null", "boolean", "integer", "number", "long-string", "array", "object", "huge-integer"],
)
def test_describe_names_the_json_type_and_cuts_long_values(value, text):
    assert rt.describe(value) == text


class Unprintable:
    """A value whose description must never be asked for."""

    def __repr__(self) -> str:
        raise AssertionError("described a part of the value the description does not show")


@pytest.mark.parametrize(
    "value",
    [
        [*range(1000), Unprintable()],
        {**{f"k{i}": "v" * i for i in range(1000)}, "last": Unprintable()},
        [["x" * 10_000_000], Unprintable()],
        [[[[{"a": [1.5, None, True, [Unprintable()] * 100]}] * 1000]]] * 1000,
    ],
    ids=["wide-array", "wide-object", "long-string", "deep-and-wide"],
)
def test_describe_visits_only_the_part_it_shows(value):
    text = rt.describe(value)
    assert len(text) <= len("object ...") + rt.DESCRIBE_WIDTH and text.endswith("...")


def test_describe_shows_nested_values_in_pythons_notation():
    assert rt.describe({"a": [1, "b", {"c": None}]}) == "object {'a': [1, 'b', {'c': None}]}"
    assert rt.describe([10**5000]) == "array [<integer too large to print>]"


def test_a_decode_error_says_where_what_was_expected_and_what_was_found():
    error = rt.DecodeError(((rt.ROOT, "params"), "sessionId"), "string", 7)
    assert str(error) == "$.params.sessionId: expected string, found integer 7"
    assert (error.code, error.message) == (-32602, "Invalid params: " + str(error))
    assert error.data == {"path": "$.params.sessionId", "expected": "string", "found": "integer 7"}


def test_a_decode_error_keeps_its_code_through_pickle():
    error = rt.DecodeError("$.jsonrpc", "'2.0'", "1.0", code=rt.INVALID_REQUEST)
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.path, again.code, str(again)) == (rt.DecodeError, "$.jsonrpc", -32600, str(error))
    assert again.message.startswith("Invalid request: ")


def test_a_salvage_is_immutable_and_compared_by_value():
    error = rt.DecodeError("$.x", "string", 1)
    salvage = rt.Salvage("$.x", "default on error", error)
    assert salvage == rt.Salvage("$.x", "default on error", error) and len({salvage, copy.copy(salvage)}) == 1
    with pytest.raises(AttributeError, match="immutable"):
        salvage.path = "$.y"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(salvage)).path == "$.x"


# --- JSON text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "invalid JSON"),
        ("NaN", "invalid JSON"),
        ('{"a": 1} x', "invalid JSON"),
        (b"\xff", "invalid JSON"),
        ("1" * 5000, "invalid JSON"),
        ("[" * DEEP + "]" * DEEP, "deeper nesting"),
    ],
    ids=["truncated", "nan", "trailing", "not-utf8", "long-integer", "deep"],
)
def test_parse_json_raises_only_decode_error(text, expected):
    with pytest.raises(rt.DecodeError) as caught:
        rt.parse_json(text)
    assert caught.value.path == "$" and expected in str(caught.value)


def test_parse_json_reads_what_json_loads_reads():
    text = ' {"a": [1, 2.5, "é", null, true], "b": {"\\ud800": 1e300}}\n'
    assert rt.parse_json(text) == json.loads(text) == rt.parse_json(text.encode())


def test_dump_json_is_compact_and_refuses_nan():
    assert rt.dump_json({"a": [1, 2.0, "é"]}) == '{"a":[1,2.0,"é"]}'
    with pytest.raises(ValueError):
        rt.dump_json(float("nan"))


def test_dump_json_gives_the_encoders_errors_with_its_cached_encoder():
    cyclic: list[object] = []
    cyclic.append(cyclic)
    saved, rt.ORJSON = rt.ORJSON, None
    try:
        with pytest.raises(ValueError, match="Circular reference detected"):
            rt.dump_json({"a": cyclic})
        with pytest.raises(RecursionError):
            rt.dump_json(functools.reduce(lambda inner, _: [inner], range(100_000), []))
        assert rt.dump_json("é") == json.dumps("é", ensure_ascii=False)
        assert rt.dump_json([1.5, 2**70, True, None]) == "[1.5,1180591620717411303424,true,null]"
    finally:
        rt.ORJSON = saved


def test_dump_json_bytes_escapes_lone_surrogates_as_json_stringify_does():
    data = {"\udfff": "x\ud800y", "ok": "é😀"}
    written = rt.dump_json_bytes(data)
    assert written == b'{"\\udfff":"x\\ud800y","ok":"\xc3\xa9\xf0\x9f\x98\x80"}'
    assert json.loads(written.decode()) == data


# --- checks --------------------------------------------------------------------------


def test_integers_keep_their_json_type_and_bounds_name_the_limit():
    assert type(rt.decode_int(2.0, rt.ROOT, 0, None)) is float
    with pytest.raises(rt.DecodeError, match="expected integer >= 0, found integer -1"):
        rt.decode_int(-1, rt.ROOT, 0, None)
    with pytest.raises(rt.DecodeError, match="expected integer, found boolean True"):
        rt.decode_int(True, rt.ROOT, None, None)


def test_multiple_of_is_exact_for_floats():
    assert rt.is_multiple(0.3, 0.1) and not rt.is_multiple(0.31, 0.1)
    assert rt.is_multiple(10**30, 7) is (10**30 % 7 == 0)


def test_merge_by_key_keeps_clears_and_patches_key_by_key():
    stored = {"a": 1, "b": 2}
    assert rt.merge_by_key(stored, rt.UNDEFINED) is stored
    assert rt.merge_by_key(stored, None) is None
    assert rt.merge_by_key(stored, {"a": None, "c": 3}) == {"b": 2, "c": 3} and stored == {"a": 1, "b": 2}


# --- encoding values built in Python -----------------------------------------------------


class Color(str, enum.Enum):  # noqa: UP042 -- the mixin users wrote before StrEnum, still common
    RED = "red"


class Shade(enum.StrEnum):
    DARK = "dark"


class Id(str):
    pass


class Count(int):
    pass


def test_encode_value_gives_plain_json_types_for_enum_members_and_subclasses():
    encoded = rt.encode_value({Id("k"): [Color.RED, Shade.DARK, Id("x"), Count(3), (1.5, True)]})
    assert encoded == {"k": ["red", "dark", "x", 3, [1.5, True]]}
    key, items = next(iter(encoded.items()))
    assert [type(key), *map(type, items)] == [str, str, str, str, int, list]


@pytest.mark.parametrize("value", [object(), {1: "x"}, {1, 2}])
def test_encode_value_refuses_what_is_not_json(value):
    with pytest.raises(TypeError):
        rt.encode_value(value)


def test_a_lazy_attribute_is_a_module_or_a_name_it_defines_kept_once_imported():
    namespace: dict[str, object] = {}
    modules, defined_in = frozenset(["_runtime"]), {"encode_value": "_runtime"}
    assert rt.lazy_attribute("generator.runtime", namespace, "_runtime", modules, defined_in) is rt
    assert namespace == {}
    value = rt.lazy_attribute("generator.runtime", namespace, "encode_value", modules, defined_in)
    assert value is rt.encode_value and namespace == {"encode_value": rt.encode_value}
    with pytest.raises(AttributeError, match=r"module 'generator\.runtime' has no attribute 'nothing'"):
        rt.lazy_attribute("generator.runtime", namespace, "nothing", modules, defined_in)


def test_merge_upsert_calls_the_merger_of_the_patchs_type_and_refuses_other_types():
    mergers = {int: lambda stored, patch: (stored or 0) + patch}
    assert rt.merge_upsert(mergers, None, 2) == 2
    assert rt.merge_upsert(mergers, 1, 2) == 3
    with pytest.raises(TypeError, match="str is not an upsert type"):
        rt.merge_upsert(mergers, None, "x")
