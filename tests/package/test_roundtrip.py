"""Property: every schema-valid value of every `$defs` type round-trips losslessly,
whether it comes from JSON or is built in Python."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.pipeline import build_ir
from tests.support.helpers import FIXTURES, ROOT, V2_SCHEMA, assert_json_identical, import_package
from tests.support.strategies import Strategies, built_in_python

acp = import_package(ROOT / "generated", "acp_v2")
DEFS = json.loads(V2_SCHEMA.read_text())["$defs"]
STRATEGIES = Strategies(build_ir(V2_SCHEMA, "acp_v2", ROOT))
SETTINGS = settings(max_examples=25, deadline=None, database=None)


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DEFS})


@SETTINGS
@given(st.sampled_from(sorted(DEFS)), st.data())
def test_json_text_round_trips_through_from_json_and_to_json(name, data):
    cls = getattr(acp, name)
    if not isinstance(cls, type) or not issubclass(cls, acp.Model):
        return
    value = data.draw(STRATEGIES.named(name))
    assert_json_identical(json.loads(cls.from_json(json.dumps(value)).to_json()), value)


JSON_TYPES = (dict, list, str, int, float, bool, type(None))


def not_plain(value: object, path: str = "$") -> list[str]:
    """Where `value` holds anything but plain JSON types (enum members, subclasses...)."""
    if type(value) not in JSON_TYPES:
        return [f"{path}: {type(value).__name__}"]
    if type(value) is dict:
        keys = [f"{path}: key {type(key).__name__}" for key in value if type(key) is not str]
        return keys + [found for key, item in value.items() for found in not_plain(item, f"{path}.{key}")]
    if type(value) is list:
        return [found for index, item in enumerate(value) for found in not_plain(item, f"{path}[{index}]")]
    return []


def assert_built_value_round_trips(
    package, name: str, value: object, check: jsonschema.Draft202012Validator, source: object
) -> None:
    """`value`, built in Python from the decoded JSON value `source`, encodes to `source` again,
    type for type, and decodes back equal."""
    encoded = package.encode(value)
    assert not_plain(encoded) == []
    assert_json_identical(encoded, source)
    decoded = package.decode(name, encoded, strict=True)
    assert decoded == value
    assert_json_identical(package.encode(decoded), encoded)
    if isinstance(value, package.Model):
        assert_json_identical(value.to_dict(), encoded, ordered=True)
        assert type(value).from_json(value.to_json(), strict=True) == value
        assert_json_identical(json.loads(value.to_json()), encoded, ordered=True)
    check.validate(encoded)


@pytest.mark.parametrize("name", sorted(DEFS))
def test_every_value_round_trips_from_json_and_built_in_python(name):
    """A schema-valid JSON value decodes and encodes back losslessly in both modes; the
    same value built in Python (constructors, builders, enum members, subclasses)
    encodes to plain JSON and decodes back equal. One test for both, so that the
    costly value is drawn once."""
    check = validator(name)

    @SETTINGS
    @given(STRATEGIES.named(name), st.data())
    def round_trip(value, data):
        errors = [error.message for error in check.iter_errors(value)]
        assert errors == [], f"the strategy made an invalid {name}: {value!r}"
        for strict in (False, True):
            encoded = acp.encode(acp.decode(name, value, strict=strict))
            assert_json_identical(encoded, value)
        check.validate(encoded)
        built = data.draw(built_in_python(acp.decode(name, value, strict=True)), label="built in Python")
        assert_built_value_round_trips(acp, name, built, check, value)

    round_trip()


RULES_SCHEMA = json.loads((FIXTURES / "rules.json").read_text())
RULES_STRATEGIES = Strategies(build_ir(FIXTURES / "rules.json", "rules_pkg", ROOT))


@pytest.mark.parametrize("name", sorted(RULES_SCHEMA["$defs"]))
def test_rules_values_built_in_python_encode_to_plain_json_and_decode_back(rules_pkg, name):
    check = jsonschema.Draft202012Validator({**RULES_SCHEMA, "$ref": f"#/$defs/{name}"})

    @SETTINGS
    @given(RULES_STRATEGIES.named(name), st.data())
    def round_trip(source, data):
        value = data.draw(built_in_python(rules_pkg.decode(name, source, strict=True)), label="built in Python")
        assert_built_value_round_trips(rules_pkg, name, value, check, source)

    round_trip()
