"""Property: every schema-valid value of every `$defs` type round-trips losslessly."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.pipeline import build_ir
from tests.helpers import ROOT, V2_SCHEMA, import_package
from tests.strategies import Strategies

acp = import_package(ROOT / "generated", "acp_v2")
DEFS = json.loads(V2_SCHEMA.read_text())["$defs"]
STRATEGIES = Strategies(build_ir(V2_SCHEMA, "acp_v2", ROOT))
SETTINGS = settings(max_examples=25, deadline=None, database=None)


def same_keys(left: object, right: object) -> bool:
    """The same property names everywhere (`==` alone ignores 1 vs 1.0, not keys)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_keys(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same_keys, left, right))
    return True


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DEFS})


@pytest.mark.parametrize("name", sorted(DEFS))
def test_round_trip_is_lossless(name):
    check = validator(name)

    @SETTINGS
    @given(STRATEGIES.named(name))
    def round_trip(value):
        errors = [error.message for error in check.iter_errors(value)]
        assert errors == [], f"the strategy made an invalid {name}: {value!r}"
        for strict in (False, True):
            encoded = acp.encode(acp.decode(name, value, strict=strict))
            assert encoded == value
            assert same_keys(encoded, value)
        check.validate(encoded)

    round_trip()


@SETTINGS
@given(st.sampled_from(sorted(DEFS)), st.data())
def test_json_text_round_trips_through_from_json_and_to_json(name, data):
    cls = getattr(acp, name)
    if not isinstance(cls, type) or not issubclass(cls, acp.Model):
        return
    value = data.draw(STRATEGIES.named(name))
    assert json.loads(cls.from_json(json.dumps(value)).to_json()) == value
