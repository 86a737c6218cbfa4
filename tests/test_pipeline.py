"""generator/pipeline.py: the rendered units are cached while everything they depend on is unchanged."""

from __future__ import annotations

import pytest

from generator import pipeline
from generator.config import SchemaOptions
from generator.output import cache
from tests.support.helpers import FIXTURES, ROOT

RULES = FIXTURES / "rules.json"


def generate(cache_dir):
    return pipeline.generate(RULES, "rules_pkg", ROOT, cache_dir).files


def refuse_to_render(*args):
    raise AssertionError("rendered again")


def test_the_rendered_units_are_reused_while_the_ir_and_the_templates_are_unchanged(tmp_path, monkeypatch):
    first = generate(tmp_path)
    monkeypatch.setattr(pipeline, "render_package", refuse_to_render)
    assert generate(tmp_path) == first


def test_a_change_of_templates_renders_again(tmp_path, monkeypatch):
    first = generate(tmp_path)
    monkeypatch.setattr(pipeline, "_templates_fingerprint", lambda: "other templates")
    rendered = []
    render = pipeline.render_package
    monkeypatch.setattr(pipeline, "render_package", lambda *args: rendered.append(1) or render(*args))
    assert generate(tmp_path) == first and rendered == [1]


def test_another_schema_renders_again(tmp_path, monkeypatch):
    generate(tmp_path)
    monkeypatch.setattr(pipeline, "render_package", refuse_to_render)
    with pytest.raises(AssertionError, match="rendered again"):
        pipeline.generate(FIXTURES / "hostile.json", "hostile_pkg", ROOT, tmp_path)


@pytest.mark.parametrize("stored", [{"models.py": "not a list"}, {"models.py": [1]}, ["models.py"]])
def test_rendered_units_of_the_wrong_shape_are_rendered_again(tmp_path, stored):
    first = generate(tmp_path)
    (path,) = tmp_path.glob("render-*.json")
    cache.write(path, stored)
    assert generate(tmp_path) == first
    assert cache.read(path) != stored


def test_the_cached_ir_is_rebuilt_when_a_document_its_refs_read_changes(tmp_path, monkeypatch):
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    (remotes / "id.json").write_text('{"type": "string"}')
    schema = tmp_path / "schema.json"
    schema.write_text('{"$defs": {"Id": {"$ref": "http://example.com/id.json"}}}')
    options = SchemaOptions(schema_dirs=(("http://example.com/", remotes),))

    def build():
        return pipeline.build_ir(schema, "pkg", ROOT, options, tmp_path / "cache")

    first = build()
    load = pipeline.load_schema
    monkeypatch.setattr(pipeline, "load_schema", lambda *args: pytest.fail("loaded again"))
    assert build() == first  # from the cache
    monkeypatch.setattr(pipeline, "load_schema", load)
    (remotes / "id.json").write_text('{"type": "integer"}')
    assert build() != first


@pytest.fixture
def fresh_fingerprint():
    """`_generator_fingerprint` computed again in the test, and after it."""
    pipeline._generator_fingerprint.cache_clear()
    yield
    pipeline._generator_fingerprint.cache_clear()


def test_the_cached_ir_is_rebuilt_under_another_unicode_database(tmp_path, monkeypatch, fresh_fingerprint):
    first = pipeline.build_ir(RULES, "rules_pkg", ROOT, cache_dir=tmp_path)
    monkeypatch.setattr(pipeline, "load_schema", lambda *args: pytest.fail("loaded again"))
    assert pipeline.build_ir(RULES, "rules_pkg", ROOT, cache_dir=tmp_path) == first  # from the cache
    monkeypatch.setattr(pipeline.unicodedata, "unidata_version", "0.0.0")  # names are spelled by it
    pipeline._generator_fingerprint.cache_clear()
    with pytest.raises(pytest.fail.Exception, match="loaded again"):
        pipeline.build_ir(RULES, "rules_pkg", ROOT, cache_dir=tmp_path)
