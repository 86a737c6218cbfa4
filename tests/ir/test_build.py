"""build_module: every `$defs` entry a public name, and the names of the real schema."""

from __future__ import annotations

from tests.support.helpers import error_for, ir_of


def test_every_def_becomes_a_public_name(rules):
    for name in ("ItemId", "Port", "Color", "Size", "Item", "Shape", "Circle", "Id", "Anything"):
        assert name in rules


def test_no_numbered_names_in_the_real_schema(tmp_path):
    from tests.support.helpers import V2_SCHEMA

    module = ir_of(V2_SCHEMA, tmp_path)
    assert len(module.public_names) == 262
    numbered = [t.name for t in module.types if t.name[-1].isdigit()]
    assert numbered == []


def test_defs_names_map_to_python_names_and_are_kept_for_decode(tmp_path):
    schema = {"$defs": {"class": {"type": "string"}, "Any": {"type": "string"}, "Ok": {"type": "string"}}}
    module = ir_of(schema, tmp_path)
    assert module.public_names == (("class", "Class"), ("Any", "Any_"), ("Ok", "Ok"))
    assert {named.name for named in module.types} == {"Class", "Any_", "Ok"}


def test_generation_errors_are_one_line_whatever_the_names(tmp_path):
    error = error_for({"$defs": {"a\nb": {"type": "string"}, "A\rB": {"type": "string"}}}, tmp_path)
    assert "\n" not in str(error) and "\r" not in str(error) and "\\n" in str(error)
