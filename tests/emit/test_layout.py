"""generator/emit/layout.py and the macros that lay out its answers (macros/python.jinja; the
encoders' expressions in macros/encode.jinja): what they write for short and long names is
what black writes, so black finds it formatted."""

from __future__ import annotations

import textwrap

import black
import pytest

from generator.emit.layout import bracket_layout
from generator.emit.pytypes import Queries
from generator.emit.render import environment
from generator.emit.views import Encoding
from generator.ir.model import Module
from generator.output.format import _mode

MACROS = environment(Queries(Module("pkg", "schema.json", "0" * 64, (), ()))).get_template("macros/python.jinja").module


def black_stable(text: str) -> bool:
    return black.format_str(text, mode=_mode()) == text


def within(opening: str, text: str, closing: str = "", indent: int = 4) -> str:
    """`text` (lines relative to the first) placed at `indent` columns between `opening` and `closing` lines."""
    return f"{opening}\n{textwrap.indent(text, ' ' * indent)}\n{closing}{chr(10) if closing else ''}"


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
def test_a_signature_is_laid_out_as_black_lays_it_out(name, fields, layout):
    params = [f"_cls: builtins.type[_{name}T]", *(["*", *fields] if fields else [])]
    returns = f"{name}Builder[_{name}T]"
    assert bracket_layout(4, "def builder(", params, f") -> {returns}:", "def") == layout
    signature = MACROS.signature("builder", params, returns, 4)
    assert black_stable(within(f"class {name}:\n    @classmethod", signature + "\n    pass"))


def test_a_coroutine_signature_counts_its_async():
    params = ["self", "params: SetSessionConfigOptionRequest"]
    returns = "SetSessionConfigOptionResponse | None"  # 118 columns with `def`, 124 with `async def`
    assert MACROS.signature("session_set_config_option", params, returns, 4).count("\n") == 0
    coroutine = MACROS.signature("session_set_config_option", params, returns, 4, "async def")
    assert coroutine.count("\n") == 2
    assert black_stable(within("class Agent:", coroutine + "\n    pass"))


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


@pytest.mark.parametrize(("message", "layout"), [("short", "one_line"), ("a" * 100, "hugged"), ("a" * 130, "hugged")])
def test_a_lone_argument_stays_between_the_brackets_even_when_too_long(message, layout):
    assert bracket_layout(8, "raise ValueError(", [f'"{message}"'], ")") == layout
    assert black_stable(within("def f():", MACROS.bracketed(4, "raise ValueError(", [f'"{message}"'], ")")))


@pytest.mark.parametrize(
    ("members", "layout"),
    [
        (["ToolCallContentVariant", "ToolCallContentDiff"], "one_line"),
        (
            ["ToolCallContentVariant", "ToolCallContentDiff", "ToolCallContentTerminal", "ToolCallContentOther"],
            "hugged",
        ),
        (["A" * 55, "B" * 55], "hugged"),
        (["A" * 55, f"list[{'B' * 49}]", "C"], "exploded"),
        ([f"Variant{n}OfALongUnionName" for n in range(8)], "exploded"),
    ],
)
def test_a_union_is_laid_out_as_black_lays_it_out(members, layout):
    head, operands = "ToolCallContent: TypeAlias = ", [members[0], *(f"| {member}" for member in members[1:])]
    assert bracket_layout(0, head, operands, "", "expression") == layout
    assert black_stable(MACROS.bracketed(0, head, operands, "", "expression") + "\n")


def conditional(name: str) -> list[str]:
    return [f"stored.{name}", f"if isinstance(patch.{name}, Undefined)", f"else patch.{name}"]


@pytest.mark.parametrize(
    ("name", "layout"), [("title", "one_line"), ("sender_session_id", "hugged"), ("additional_directories", "exploded")]
)
def test_a_conditional_expression_is_laid_out_as_black_lays_it_out(name, layout):
    """As a keyword argument (upserts.py), as an assignment's value and as a dict value (builders)."""
    assert bracket_layout(8, f"{name}=", conditional(name), ",", "expression") == layout
    argument = MACROS.bracketed(8, f"{name}=", conditional(name), ",", "expression")
    assert black_stable(within("def f():\n    return type(stored)(", argument, "    )", 8))
    assignment = MACROS.bracketed(4, f"{name} = ", conditional(name), "", "expression")
    assert black_stable(within("def f():", assignment))
    item = MACROS.bracketed(8, f'"{name}": ', conditional(name), ",", "expression")
    assert black_stable(within("def f():\n    return {", item, "    }", 8))


@pytest.mark.parametrize(
    ("sides", "layout"), [(["agent", "client"], "one_line"), (["proxy", "protocol", "client", "agent"], "exploded")]
)
def test_a_display_is_on_one_line_or_one_item_a_line(sides, layout):
    items = [f'**NOTIFICATIONS["{side}"]' for side in sides]
    assert bracket_layout(8, "None: {", items, "},", "display") == layout
    text = MACROS.bracketed(8, "None: {", items, "},", "display")
    assert black_stable(within("X = MappingProxyType(\n    {", text, "    }\n)", 8))


@pytest.mark.parametrize(
    ("operands", "layout"),
    [
        (["v is not UNDEFINED", "and v is not None", "and type(v) is not int"], "one_line"),
        (
            [
                "v is not UNDEFINED",
                "and v is not None",
                f"and (type(v) is not int or v < -{'9' * 19} or v > {'9' * 19})",
            ],
            "exploded",
        ),
        (["a" * 50, "and " + "b" * 60], "exploded"),  # black does not keep the operands together once split
    ],
)
def test_a_condition_is_on_one_line_or_one_operand_a_line(operands, layout):
    assert bracket_layout(4, "if ", operands, ":", "condition") == layout
    condition = MACROS.bracketed(4, "if ", operands, ":", "condition")
    assert black_stable(within("def f():", condition + "\n    pass"))


ENCODE = environment(Queries(Module("pkg", "schema.json", "0" * 64, (), ()))).get_template("macros/encode.jinja").module


def encodings(name: str) -> list[Encoding]:
    """The encodings of an enum, a class, str, and lists, maps and nullables of them, two levels deep."""
    leaves = [Encoding(exact_type=name, member_value=True), Encoding(f"_encode_{name}"), Encoding(exact_type="str")]
    once = [*leaves, *(Encoding(items=e) for e in leaves), *(Encoding(values=e) for e in leaves)]
    once += [Encoding(inner=e) for e in once]
    return [*once, *(Encoding(items=e) for e in once), *(Encoding(values=e) for e in once)]


@pytest.mark.parametrize("length", [4, 30, 40, 60, 75])  # with 90 an operand alone is too long: black splits it
@pytest.mark.parametrize(
    ("indent", "head", "place"),
    [(4, 'data["id"] = ', "subscript"), (8, 'data["additionalDirectories"] = ', "subscript"), (4, "return ", "name")],
)
def test_an_encoding_is_laid_out_as_black_lays_it_out(length, indent, head, place):
    """As an object encoder's `data[key] = ` and an alias encoder's `return `, for short and long names."""
    for encoding in encodings("N" * length):
        statement = ENCODE.encode_lines(encoding, "v", indent, head, place)
        assert black_stable(within("def f():" + "\n    if v:" * (indent // 4 - 1), statement, indent=indent))


LITERAL = 'Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]'
SHORTER = 'Literal["read", "edit", "delete", "move", "search", "execute", "think"]'
LONG_NAME = "kind_of_the_tool_call_reported_here"


@pytest.mark.parametrize(
    ("name", "annotation", "lines"),
    [
        ("kind", "ToolKind | Undefined", 1),
        ("kind", f"MaybeUndefined[ToolKind | {LITERAL}]", 4),  # inside the subscript, one operand a line
        (LONG_NAME, f"MaybeUndefined[ToolKind | {SHORTER}]", 3),  # inside the subscript, on one line
        ("kind", f"ToolKind | {LITERAL} | Undefined", 5),  # in brackets of its own, one operand a line
        (LONG_NAME, f"ToolKind | {SHORTER} | Undefined", 3),  # in brackets of its own, on one line
        ("kind", f"dict[str, {LITERAL}]", 4),  # a lone subscript of several items: one a line
        ("kind", f"list[{LITERAL}]", 3),  # a lone subscript of one item: on a line of its own
    ],
)
def test_a_long_parameter_annotation_is_split_as_black_splits_it(name, annotation, lines):
    for tail in (" = UNDEFINED,", ","):
        param = MACROS.annotated(8, name, annotation, tail)
        assert param.count("\n") + 1 == lines
        signature = within(
            "class A:\n    def __init__(\n        self,\n        *,", param, "    ) -> None:\n        pass", 8
        )
        assert black_stable(signature), signature
