"""Literals and docstrings: schema text can never break out of them."""

from __future__ import annotations

import ast

from generator.emit.literals import docstring, python_literal, string_block


def test_string_literals_round_trip_through_the_python_parser():
    for text in ['a"b', "it's", "both ' and \"", "back\\slash", "nul\0", "{{ x }}", "café\u2028"]:
        assert ast.literal_eval(python_literal(text)) == text


def test_string_blocks_evaluate_to_the_text():
    for text in ['ends with a quote"', 'triple """ inside', "trailing backslash \\", "tab\tand\nnewline\0"]:
        assert ast.literal_eval(string_block(text)) == text


def test_docstrings_evaluate_to_the_text_laid_out_as_black_does():
    for text in ['ends with a quote"', 'triple """ inside', "trailing backslash \\", "nul\0 and \u2028 in the middle"]:
        assert ast.literal_eval(docstring(text, 4)).strip() == text
    assert ast.literal_eval(docstring("first\n  second\n  third", 4)) == "first\n    second\n    third"


def test_tuples_are_written_as_black_writes_them():
    assert [python_literal(value) for value in [(), ("a",), ("a", 1)]] == ["()", '("a",)', '("a", 1)']
