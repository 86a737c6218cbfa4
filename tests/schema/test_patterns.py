"""ECMA-262 patterns translated to Python `re`, or refused."""

from __future__ import annotations

import pytest

from generator.errors import GenerationError
from generator.ir.model import Primitive
from generator.schema.patterns import python_pattern
from tests.support.helpers import error_for, ir_of


def test_string_patterns_are_recorded_in_python_syntax(rules):
    assert rules["Currency"].target == Primitive("str", pattern="^[A-Z]{3}\\Z")


def test_a_pattern_python_cannot_compile_is_an_error(tmp_path):
    error = error_for({"$defs": {"A": {"type": "string", "pattern": "(unclosed"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/pattern"


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("^a.b$", "^a[^\\n\\r\\u2028\\u2029]b\\Z"),
        ("\\d+[\\w-]", "[0-9]+[a-zA-Z0-9_-]"),
        ("\\p", None),
        ("\\s", None),
        ("(?<n>a)", None),
        ("[\\D]", None),
    ],
)
def test_patterns_translate_from_ecma_262_or_are_refused(tmp_path, pattern, python):
    schema = {"$defs": {"A": {"type": "string", "pattern": pattern}}}
    if python is None:
        assert error_for(schema, tmp_path).pointer == "#/$defs/A/pattern"
    else:
        assert ir_of(schema, tmp_path).by_name()["A"].target.pattern == python


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("a\\x41\\u00e9", "a\\x41\\u00e9"),
        ("[^\\d.]", "[^0-9.]"),
        ("\\t\\.", "\\t\\."),
        ("(?:a)(?=b)(?!c)", "(?:a)(?=b)(?!c)"),
        ("[[]", "[\\[]"),
    ],
)
def test_python_pattern_translates_escapes_classes_and_groups(pattern, python):
    assert python_pattern("#/p", pattern) == python


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a\\", "lone backslash"),
        ("[ab", "unterminated character class"),
        ("\\x4", "without 2 hex digits"),
        ("[]a]", "starting with `]`"),
        ("a{,3}", "`{,`"),
        (1, "expected a string"),
    ],
)
def test_python_pattern_refuses_what_it_cannot_translate_at_the_pointer(pattern, message):
    with pytest.raises(GenerationError, match=message) as caught:
        python_pattern("#/p", pattern)
    assert caught.value.pointer == "#/p"
