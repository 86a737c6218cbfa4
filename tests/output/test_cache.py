"""The local caches: JSON checked against its digest, a miss for anything else, never executed."""

from __future__ import annotations

import hashlib
import json
import os
import pickle

import pytest

from generator.errors import GenerationError
from generator.ir.model import Module
from generator.output import cache
from tests.support.helpers import FIXTURES, V2_SCHEMA, ir_of
from tests.support.hostile_lines import DEEP


def test_a_written_document_reads_back(tmp_path):
    path = tmp_path / "entry.json"
    cache.write(path, {"a": [1, "two", None]})
    assert cache.read(path) == {"a": [1, "two", None]}
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]  # no temporary file left


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data.replace(b'"two"', b'"TWO"'),  # edited
        lambda data: b"",  # emptied
        lambda data: data.split(b"\n", 1)[1],  # digest line lost
        lambda data: data + b" ",  # appended to
    ],
)
def test_a_damaged_file_is_a_miss(tmp_path, damage):
    path = tmp_path / "entry.json"
    cache.write(path, {"a": [1, "two"]})
    path.write_bytes(damage(path.read_bytes()))
    assert cache.read(path) is None


def test_a_pickle_is_never_loaded_even_with_a_matching_digest(tmp_path):
    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('executed')",))

    payload = pickle.dumps(Boom())
    path = tmp_path / "entry.json"
    path.write_bytes(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert cache.read(path) is None


def test_absurd_nesting_is_a_miss(tmp_path):
    payload = b"[" * DEEP + b"]" * DEEP
    path = tmp_path / "entry.json"
    path.write_bytes(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert cache.read(path) is None


def test_missing_files_and_directories_are_misses(tmp_path):
    assert cache.read(tmp_path / "absent.json") is None
    assert cache.read(tmp_path) is None


def test_a_cache_directory_that_is_a_file_is_one_clear_error(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("")
    with pytest.raises(GenerationError, match=r"cannot use it as the cache directory.*--no-cache"):
        cache.prepare(blocker)


def test_only_the_newest_files_are_kept(tmp_path):
    for number in range(5):
        path = tmp_path / f"ir-{number}.json"
        path.write_text("")
        os.utime(path, (number, number))
    (tmp_path / cache.BLACK_FILE).write_text("")
    cache.keep_newest(tmp_path, "ir-*.json", 2)
    assert sorted(path.name for path in tmp_path.iterdir()) == [cache.BLACK_FILE, "ir-3.json", "ir-4.json"]


def test_the_black_cache_drops_an_edited_entry_and_keeps_the_others(tmp_path):
    black = cache.BlackCache(tmp_path)
    black.put("k1", "x = 1\n")
    black.put("k2", "y = 2\n")
    black.save()
    stored = cache.read(tmp_path / cache.BLACK_FILE)
    stored["k1"][1] = "x = 'edited'\n"  # the entry's own digest no longer matches
    cache.write(tmp_path / cache.BLACK_FILE, stored)
    reloaded = cache.BlackCache(tmp_path)
    assert reloaded.get("k1") is None
    assert reloaded.get("k2") == "y = 2\n"


@pytest.mark.parametrize("stored", [[], {"k": "no digest"}, {"k": [1, 2]}, {"k": ["a", "b", "c"]}, "text"])
def test_the_black_cache_ignores_entries_of_the_wrong_shape(tmp_path, stored):
    cache.write(tmp_path / cache.BLACK_FILE, stored)
    assert cache.BlackCache(tmp_path).entries == {}


def test_the_black_cache_is_written_only_after_new_entries(tmp_path):
    black = cache.BlackCache(tmp_path)
    black.save()
    assert not (tmp_path / cache.BLACK_FILE).exists()


@pytest.mark.parametrize("schema", [V2_SCHEMA, FIXTURES / "rules.json"], ids=["v2", "rules"])
def test_the_ir_survives_its_json_form_exactly(tmp_path, schema):
    module = ir_of(schema, tmp_path)
    data = json.loads(json.dumps(cache.ir_to_data(module)))
    assert cache.ir_from_data(data) == module
    assert isinstance(cache.ir_from_data(data), Module)


@pytest.mark.parametrize(
    "data",
    [
        {"class": "Popen", "fields": {"args": ["sh"]}},  # only generator.ir.model's dataclasses are ever built
        {"class": "Ref", "fields": {"no_such_field": 1}},
        {"something": "else"},
        {"dict": [[1]]},
        {"dict": [[[1], 2]]},  # an unhashable key
        {"tuple": [{"tuple": []}] * 2, "extra": 1},
    ],
)
def test_ir_data_it_did_not_write_is_refused(data):
    with pytest.raises(ValueError):
        cache.ir_from_data(data)
