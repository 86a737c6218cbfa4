"""generator/output/format.py: a whole file cut into top-level units and joined back; which units
black reshapes; the vendored schema's units, which black finds formatted."""

from __future__ import annotations

import pytest

from generator.config import load_config
from generator.emit.render import render_package, render_runtime, shared_runtime_modules, without_runtime
from generator.emit.units import join_units, split_units
from generator.output.format import _batches, reshaped, unit_key
from generator.output.manifest import proven_units
from generator.pipeline import build_ir, versions, with_commands
from tests.support.helpers import CACHE, ROOT

GENERATED = ROOT / "generated" / "acp_v2"

FILE = '''"""A module."""

import dataclasses


# The comment of the class that follows.
@dataclasses.dataclass
class A:
    """Two blank lines in a string do not cut it:


not even before text at column 0."""

    x: int = 0


TABLE = [
    1,


    2,
]
MESSAGE = f"""{
    1


}"""


def f() -> None:
    pass
'''


def test_a_file_is_cut_before_each_top_level_statement_after_two_blank_lines():
    units = split_units(FILE)
    assert [unit.splitlines()[0] for unit in units] == [
        '"""A module."""',
        "# The comment of the class that follows.",
        "TABLE = [",
        "def f() -> None:",
    ]
    assert all(unit.endswith("\n") and not unit.endswith("\n\n") for unit in units)
    assert join_units(units) == FILE


@pytest.mark.parametrize("name", sorted(path.name for path in GENERATED.glob("*.py")))
def test_join_units_puts_the_units_of_a_generated_file_back_together(name):
    text = (GENERATED / name).read_text()
    assert join_units(split_units(text)) == text


@pytest.mark.parametrize("text", ["", "x = 1\n", "def f(:\n\n\nx = 1\n", "\n\n\nx = 1\n"])
def test_text_without_two_top_level_units_is_one_unit(text):
    assert split_units(text) == [text]


def test_a_unit_is_reshaped_when_black_s_text_differs_from_it():
    assert not reshaped("\nx = 1\n\n", "x = 1\n")  # black's input has no blank lines around it
    assert reshaped("x = (1)\n", "x = 1\n")


@pytest.mark.parametrize("index", [0, 1], ids=["acp_v2", "acp_v1"])
def test_black_finds_every_unit_of_the_vendored_schemas_formatted(index):
    """The committed format manifest holds black's text of each unit: each is the unit
    itself, so black formats it once (`black.format_str` runs twice on what it changes)."""
    config = load_config(ROOT)
    package = config.packages[index]
    module = build_ir(package.schema, package.package, ROOT, config.options, CACHE, package.protocol_version)
    module = with_commands(module, config.commands)  # the headers name the project's commands
    black_texts = proven_units(ROOT / "generated" / package.package)
    files = render_package(module, versions())
    if config.runtime_package is not None:  # as generate writes it: importing the shared runtime
        files = without_runtime(files, package.package, config.runtime_package)
    for name, units in files.items():
        if name.endswith(".py"):
            for unit in units:
                assert unit_key(unit) in black_texts, f"{name} is not generated from this code: make generate"
                assert not reshaped(unit, black_texts[unit_key(unit)]), f"black reshapes this unit of {name}:\n{unit}"


def test_black_finds_every_unit_of_the_shared_runtime_formatted():
    config = load_config(ROOT)
    assert config.runtime_package is not None
    modules = [
        with_commands(build_ir(p.schema, p.package, ROOT, config.options, CACHE, p.protocol_version), config.commands)
        for p in config.packages
    ]
    used = frozenset().union(*(render_package(module, versions()).keys() for module in modules))
    files = render_runtime(modules[0], versions(), used & shared_runtime_modules(), [m.package for m in modules])
    black_texts = proven_units(ROOT / "generated" / config.runtime_package)
    for name, units in files.items():
        for unit in units:
            assert unit_key(unit) in black_texts, f"{name} is not generated from this code: make generate"
            assert not reshaped(unit, black_texts[unit_key(unit)]), f"black reshapes this unit of {name}:\n{unit}"


def test_units_are_shared_out_in_batches_of_about_equal_lines_the_largest_first():
    units = ["x = 1\n" * lines for lines in (1, 50, 3, 20, 2, 8, 5, 1, 30, 4)]
    batches = _batches(units, 4)
    assert sorted(index for batch in batches for index in batch) == list(range(len(units)))
    sizes = [units[index].count("\n") for batch in batches for index in batch]
    assert sizes == sorted(sizes, reverse=True)
    assert 3 <= len(batches) <= 5
