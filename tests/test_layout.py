"""generator/layout.py and the macros that lay out its answers (macros/python.jinja): what they
write for short and long names is what black writes, so black finds it formatted."""

from __future__ import annotations

import textwrap

import black
import pytest

from generator.format import _mode
from generator.ir import Module
from generator.layout import bracket_layout
from generator.pytypes import Queries
from generator.render import environment

MACROS = environment(Queries(Module("pkg", "schema.json", "0" * 64, (), ()))).get_template("macros/python.jinja").module


def black_stable(text: str) -> bool:
    return black.format_str(text, mode=_mode()) == text


def builder(name: str, params: list[str]) -> str:
    """A class whose `builder` signature is laid out by the `signature` macro, as builder.jinja does."""
    signature = MACROS.signature("builder", params, f"{name}Builder[_{name}T]", 4)
    return f"class {name}:\n    @classmethod\n{textwrap.indent(signature, '    ')}\n        pass\n"


@pytest.mark.parametrize(
    ("name", "fields", "layout"),
    [
        ("Short", ["session_id: str"], "one_line"),
        (
            "ElicitationFormMode",
            ["requested_schema: ElicitationSchema", "variant: ElicitationFormModeVariant"],
            "exploded",
        ),
        ("SessionConfigSelectGroup", ["group_id: str", "name: str"], "hugged"),
        ("SessionAdditionalDirectoriesCapabilities", [], "exploded"),  # a lone parameter: black adds a comma
        ("PromptAudioCapabilities", [], "exploded"),
        ("Plan", [], "one_line"),
        ("A" * 45, ["x: int"], "hugged"),
        ("A" * 45, [], "exploded"),
    ],
)
def test_a_builder_signature_is_laid_out_as_black_lays_it_out(name, fields, layout):
    params = [f"_cls: builtins.type[_{name}T]", *(["*", *fields] if fields else [])]
    head, tail = "def builder(", f") -> {name}Builder[_{name}T]:"
    assert bracket_layout(4, head, params, tail, is_def=True) == layout
    assert black_stable(builder(name, params))


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("ToolCall", "one_line"),
        ("CreateElicitationRequestModeOther", "hugged"),
        ("SessionAdditionalDirectoriesCapabilities", "hugged"),
        ("A" * 60, "exploded"),
    ],
)
def test_a_call_is_laid_out_as_black_lays_it_out(name, layout):
    head, args = f"_{name}T = TypeVar(", [f'"_{name}T"', f'bound="{name}"']
    assert bracket_layout(0, head, args, ")") == layout
    assert black_stable(MACROS.bracketed(0, head, args, ")") + "\n")


@pytest.mark.parametrize(
    ("members", "layout"),
    [
        (["ToolCallContentContent", "ToolCallContentDiff"], "one_line"),
        (
            ["ToolCallContentContent", "ToolCallContentDiff", "ToolCallContentTerminal", "ToolCallContentOther"],
            "hugged",
        ),
        (["A" * 55, "B" * 55], "hugged"),
        (["A" * 55, f"list[{'B' * 49}]", "C"], "exploded"),
        ([f"Variant{n}OfALongUnionName" for n in range(8)], "exploded"),
    ],
)
def test_a_union_is_laid_out_as_black_lays_it_out(members, layout):
    head = "ToolCallContent: TypeAlias = "
    assert bracket_layout(0, head, members, "", " | ") == layout
    assert black_stable(MACROS.bracketed(0, head, members, "", " | ") + "\n")
