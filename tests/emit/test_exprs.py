"""Type expressions without a module: their parts, and how `diff` shows and compares them."""

from __future__ import annotations

from generator.emit.exprs import breaking, children, describe, expressions, normal, show
from generator.ir.model import Alias, ListOf, Nullable, Primitive, Ref, TupleOf

INT, STR = Primitive("int"), Primitive("str")


def test_expressions_walk_every_part_depth_first():
    alias = Alias("A", "#/$defs/A", None, Nullable(TupleOf((ListOf(INT), Ref("B")))))
    assert list(expressions(alias)) == [
        alias.target,
        TupleOf((ListOf(INT), Ref("B"))),
        ListOf(INT),
        INT,
        Ref("B"),
    ]
    assert children(TupleOf((INT, STR))) == (INT, STR)


def test_diff_shows_annotations_with_the_bounds_they_validate():
    assert show(TupleOf((Primitive("int", minimum=0), ListOf(STR, min_items=1)))) == "tuple[int(0..), list[str](min 1)]"
    assert describe(TupleOf((INT,))) == "array of 1 item"


def test_tuples_compare_element_by_element():
    old = TupleOf((Primitive("int", minimum=0), Ref("Old"), Primitive("str", format="uri")))
    assert normal(old, {"Old": "New"}) == TupleOf((Primitive("int", minimum=0), Ref("New"), STR))
    assert not breaking(TupleOf((Primitive("int", minimum=0), STR)), TupleOf((INT, STR)))  # widened
    assert breaking(TupleOf((INT, STR)), TupleOf((Primitive("int", minimum=0), STR)))  # narrowed
    assert breaking(TupleOf((INT, STR)), TupleOf((INT, STR, STR)))  # another length
