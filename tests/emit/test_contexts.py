"""Typed template contexts: a template sees each field of its contexts as a variable; a
module imports the names its code uses."""

from __future__ import annotations

import io
import re
import sys
import tokenize
from dataclasses import dataclass

import pytest

from generator.emit.contexts import names_in_code, variables
from tests.support.helpers import ROOT


@dataclass(frozen=True)
class _Names:
    exported: list[str]
    rpc: bool


@dataclass(frozen=True)
class _Imports:
    rpc_imports: list[str]


def test_the_fields_of_every_context_become_variables():
    merged = variables(_Names(exported=["A"], rpc=True), _Imports(rpc_imports=["B"]))

    assert merged == {"exported": ["A"], "rpc": True, "rpc_imports": ["B"]}


def test_two_contexts_may_not_define_one_variable():
    with pytest.raises(ValueError, match="define 'exported'"):
        variables(_Names(exported=[], rpc=True), _Names(exported=[], rpc=False))


def test_a_module_imports_the_names_its_code_uses_but_not_those_in_strings_or_comments():
    units = [
        'def f(x: Foo) -> Bar:\n    """Baz, Qux."""\n    return cast(Bar, x)  # Quux\n',
        'TABLE = {"Baz": Corge}\n',
    ]
    candidates = ["Foo", "Bar", "Baz", "Qux", "Quux", "Corge", "Unused"]
    assert names_in_code(units, candidates) == ["Bar", "Corge", "Foo"]


def test_a_name_used_only_inside_an_f_string_is_imported_on_every_version():
    units = [
        "def f(x):\n    return f\"{Foo!r:>{Bar}} Baz {{Qux}} {x != Corge} {x['Quux:']:%Y}\"\n",
        "LABEL = rf'''{Grault\n}{f'{Garply}'}'''  # Waldo\n",
    ]
    candidates = ["Foo", "Bar", "Baz", "Qux", "Corge", "Quux", "Y", "Grault", "Garply", "Waldo"]
    assert names_in_code(units, candidates) == ["Bar", "Corge", "Foo", "Garply", "Grault"]


# Before 3.12 the tokenizer yields an f-string as one STRING token, the names inside it unseen.
@pytest.mark.skipif(sys.version_info < (3, 12), reason="the tokenizer yields f-strings' names since 3.12")
@pytest.mark.parametrize(
    "source", ["generated/acp_v2/_codec.py", "generator/emit/render.py", "tests/output/test_project.py"]
)
def test_the_names_in_code_are_the_name_tokens_of_the_python_tokenizer(source: str):
    text = (ROOT / source).read_text()
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    names, previous = set(), None
    for token in tokens:  # a conversion (the r of `{x!r}`) is a NAME token but names nothing
        if token.type == tokenize.NAME and not (previous and previous.string == "!"):
            names.add(token.string)
        previous = token
    words = sorted(set(re.findall(r"[^\W\d]\w*", text)))  # in strings, comments and numbers too
    assert set(names_in_code([text], words)) == names
