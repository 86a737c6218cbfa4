"""Fuzz: decoding any input raises DecodeError or nothing, never anything else."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA, import_package
from tests.support.strategies import JSON_VALUES, Strategies

acp = import_package(ROOT / "generated", "acp_v2")
MODULE = build_ir(V2_SCHEMA, "acp_v2", ROOT)
NAMES = sorted(named.name for named in MODULE.types)
STRATEGIES = Strategies(MODULE)
SETTINGS = settings(max_examples=300, deadline=None, database=None)
ODD_VALUES = st.sampled_from([float("nan"), float("inf"), -0.0, 2**70, -(2**70), 1.5, True, "", {1: 2}, {(): None}])


def decode_quietly(name: str, value: object, strict: bool) -> None:
    with contextlib.suppress(acp.DecodeError):
        acp.decode(name, value, strict=strict, on_salvage=lambda report: None)


def mutate(value: object, data: st.DataObject) -> object:
    """`value` with one nested value replaced by random JSON (or an odd Python value)."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        return {**value, key: mutate(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], mutate(value[index], data), *value[index + 1 :]]
    return data.draw(JSON_VALUES | ODD_VALUES)


@SETTINGS
@given(st.sampled_from(NAMES), JSON_VALUES | ODD_VALUES, st.booleans())
def test_random_json_raises_only_decode_error(name, value, strict):
    decode_quietly(name, value, strict)


@SETTINGS
@given(st.sampled_from(NAMES), st.booleans(), st.data())
def test_mutated_valid_values_raise_only_decode_error(name, strict, data):
    decode_quietly(name, mutate(data.draw(STRATEGIES.named(name)), data), strict)


@pytest.mark.parametrize("strict", [False, True])
def test_deep_nesting_raises_only_decode_error(strict):
    deep_object: object = {}
    deep_array: object = []
    for _ in range(50_000):
        deep_object = {"content": deep_object, "type": "resource", "resource": deep_object}
        deep_array = [deep_array]
    for name in NAMES:
        decode_quietly(name, deep_object, strict)
        decode_quietly(name, deep_array, strict)


ENVELOPE_KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "extra"])
METHOD_NAMES = st.sampled_from([*sorted({m.name for m in MODULE.methods}), "_ext", "nope"])


@SETTINGS
@given(
    st.dictionaries(ENVELOPE_KEYS, JSON_VALUES | ODD_VALUES | METHOD_NAMES | st.just("2.0"), max_size=6) | JSON_VALUES,
    st.booleans(),
)
def test_decode_message_raises_only_decode_error(message, strict):
    with contextlib.suppress(acp.DecodeError):
        acp.decode_message(message, strict=strict)


SIDES = st.sampled_from(["agent", "client"])


@SETTINGS
@given(
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": METHOD_NAMES,
            "params": st.dictionaries(st.text(max_size=8), JSON_VALUES),
        },
        optional={"id": JSON_VALUES | st.integers(), "extra": JSON_VALUES},
    ),
    SIDES,
    st.booleans(),
)
def test_a_connections_decoder_reads_what_decode_message_reads(message, side, strict):
    """The decoder a connection reads with takes the common envelopes of its side's methods by a
    shorter path: the message it gives, or the error it raises, is decode_message's."""

    def outcome(decode: object) -> object:
        try:
            return decode(message)  # type: ignore[operator]
        except acp.DecodeError as error:
            return type(error), error.code, error.path, str(error)

    decoder = acp.rpc._ENVELOPES.decoder(side, strict, None)
    assert outcome(decoder) == outcome(lambda value: acp.decode_message(value, side=side, strict=strict))
