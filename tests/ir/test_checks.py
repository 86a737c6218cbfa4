"""Keywords the structural type does not express become checks on the JSON value."""

from __future__ import annotations

from generator.ir.assertions import Checks, Evaluates, EvaluatesWhen
from generator.ir.model import AnyValue, Checked, JsonObject, Primitive
from tests.support.helpers import ir_of


def test_keywords_beside_any_of_and_enum_are_checks(tmp_path):
    types = ir_of(
        {
            "$defs": {
                "A": {"anyOf": [{"type": "integer"}, {"type": "string"}], "minimum": 2},
                "B": {"enum": ["ab", "abc"], "minLength": 3},
            }
        },
        tmp_path,
    ).by_name()
    assert types["A"].checks == Checks(minimum=2)
    assert types["B"].checks == Checks(min_length=3)


def test_required_without_properties_is_a_check(tmp_path):
    types = ir_of({"$defs": {"A": {"type": "object", "required": ["x"]}}}, tmp_path).by_name()
    assert types["A"].target == Checked(JsonObject(), Checks(required=("x",)))


def test_constants_of_any_json_value_are_checks(tmp_path):
    types = ir_of({"$defs": {"A": {"const": {"a": [1, None]}}, "B": {"enum": [1, "x", None]}}}, tmp_path).by_name()
    assert types["A"].target == Checked(AnyValue(), Checks(const='{"a": [1, null]}'))
    assert types["B"].target == Checked(AnyValue(), Checks(enum=("1", '"x"', "null")))


def test_a_schema_without_type_is_any_value_with_its_checks(tmp_path):
    types = ir_of({"$defs": {"A": {"maxLength": 2, "maximum": 5}}}, tmp_path).by_name()
    assert types["A"].target == Checked(AnyValue(), Checks(maximum=5, max_length=2))


def test_properties_without_type_object_are_checks_that_pass_other_values(tmp_path):
    types = ir_of({"$defs": {"A": {"properties": {"x": {"type": "integer"}}}}}, tmp_path).by_name()
    assert types["A"].target == Checked(AnyValue(), Checks(properties=(("x", "AValueProperty0"),)))
    assert types["AValueProperty0"].target == Primitive("int")


def test_unevaluated_properties_know_what_the_in_place_subschemas_evaluate(tmp_path):
    schema = {
        "$defs": {
            "A": {
                "properties": {"a": {}},
                "allOf": [{"patternProperties": {"^x": {}}}],
                "anyOf": [{"properties": {"b": {}}}, {"additionalProperties": True}],
                "unevaluatedProperties": False,
            }
        }
    }
    checks = ir_of(schema, tmp_path).by_name()["A"].checks
    _name, plan = checks.unevaluated_properties
    assert plan == Evaluates(
        keys=("a",),
        parts=(
            EvaluatesWhen(Evaluates(patterns=("^x",))),
            EvaluatesWhen(Evaluates(keys=("b",)), valid="ValidDefsAAnyOf0"),
            EvaluatesWhen(Evaluates(everything=True), valid="ValidDefsAAnyOf1"),
        ),
    )
