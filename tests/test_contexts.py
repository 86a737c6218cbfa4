"""Typed template contexts: a template sees each field of its contexts as a variable."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from generator.contexts import variables


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
