"""The templates lay out what depends on the schema, nothing else: static Python lives in
`generator/runtime/` and `generator/static/`, where it is linted, type-checked and tested.

A template line that carries no template syntax (no `{{ }}`, `{% %}` or `{# #}`, read with
Jinja's own lexer) is static text; a long run of them is code that belongs in a module."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from generator.emit.pytypes import Queries
from generator.emit.render import TEMPLATES, environment
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA

MAX_RUN = 40  # the longest run of static lines one template may hold
MAX_TOTAL = 700  # static lines in all templates together


@dataclass(frozen=True)
class Static:
    """The static lines of one template: how many, and its longest run (first line, length)."""

    lines: int
    run_start: int
    run: int


def static_lines(env: jinja2.Environment, source: str) -> Static:
    """Count the lines of `source` that no template token (any but plain data) touches."""
    tagged: set[int] = set()
    for lineno, token, value in env.lex(source):
        if token != "data":
            # a block's end takes the newline after it (trim_blocks): that is not another line
            tagged.update(range(lineno, lineno + value.rstrip("\n").count("\n") + 1))
    count = run = longest = longest_start = 0
    for number in range(1, len(source.splitlines()) + 1):
        if number in tagged:
            run = 0
            continue
        count += 1
        run += 1
        if run > longest:
            longest, longest_start = run, number - run + 1
    return Static(count, longest_start, longest)


def _figures() -> dict[str, Static]:
    env = environment(Queries(build_ir(V2_SCHEMA, "acp_v2", ROOT)))
    return {
        str(path.relative_to(TEMPLATES)): static_lines(env, path.read_text(encoding="utf-8"))
        for path in sorted(Path(TEMPLATES).rglob("*.jinja"))
    }


def _report(figures: dict[str, Static]) -> str:
    rows = [
        f"{name:32} {f.lines:4} static lines, longest run {f.run:3} (line {f.run_start})" for name, f in figures.items()
    ]
    rows.append(f"{'all templates':32} {sum(f.lines for f in figures.values()):4} static lines")
    return "\n".join(rows)


def test_the_lexer_counts_only_lines_no_template_syntax_touches():
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    source = "a = 1\nb = {{ x }}\n{% if y %}\nc = 2\nd = 3\n{% endif %}\n{# a\nb #}\ne = 4\n"
    assert static_lines(env, source) == Static(lines=4, run_start=4, run=2)


def test_no_template_holds_a_long_run_of_static_python(capsys):
    figures = _figures()
    with capsys.disabled():
        print(f"\n{_report(figures)}")
    too_long = {name: f.run for name, f in figures.items() if f.run > MAX_RUN}
    assert not too_long, f"runs of more than {MAX_RUN} static lines: {too_long}"


def test_the_templates_hold_little_static_text_in_all():
    total = sum(f.lines for f in _figures().values())
    assert total <= MAX_TOTAL, f"{total} static template lines, at most {MAX_TOTAL}"
