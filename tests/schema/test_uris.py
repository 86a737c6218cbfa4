"""URI resolution as draft 2020-12 says: base URIs from `$id`s, `$ref`s joined by
RFC 3986, anchors per resource, other documents read from local directories only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.errors import GenerationError
from generator.schema.load import Schema, join_uri, load_schema, pointer_tokens


def load(tmp_path: Path, document: dict, schema_dirs: tuple[tuple[str, Path], ...] = ()) -> Schema:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(document))
    return load_schema(path, schema_dirs)


def refused(schema: Schema, pointer: str, ref: str) -> GenerationError:
    with pytest.raises(GenerationError) as caught:
        schema.resolve(pointer, ref)
    return caught.value


@pytest.mark.parametrize(
    ("base", "reference", "expected"),
    [
        ("http://example.com/a/b.json", "c.json", "http://example.com/a/c.json"),
        ("http://example.com/a/b.json", "../c.json#/x", "http://example.com/c.json#/x"),
        ("http://example.com/a/b.json", "/absref/c.json", "http://example.com/absref/c.json"),
        ("http://example.com/a/b.json", "#foo", "http://example.com/a/b.json#foo"),
        ("http://example.com/a/b.json#", "", "http://example.com/a/b.json"),
        ("http://example.com/a/", "urn:uuid:1234#/$defs/x", "urn:uuid:1234#/$defs/x"),
        ("urn:uuid:deadbeef-1234", "#/$defs/bar", "urn:uuid:deadbeef-1234#/$defs/bar"),  # urljoin gives "#/$defs/bar"
        ("urn:uuid:deadbeef-1234", "#something", "urn:uuid:deadbeef-1234#something"),
        ("file:///s/schema.json", "other.json", "file:///s/other.json"),
    ],
)
def test_a_reference_is_joined_with_its_base_as_rfc_3986_says(base, reference, expected):
    assert join_uri(base, reference) == expected


def test_a_relative_path_against_a_urn_cannot_be_resolved():
    with pytest.raises(ValueError, match="urn: has no paths"):
        join_uri("urn:uuid:deadbeef-1234", "other.json")


def test_relative_ids_resolve_against_the_nearest_id_above_not_the_immediate_parent(tmp_path):
    schema = load(
        tmp_path,
        {
            "$id": "http://example.com/root/a.json",
            "$defs": {
                "x": {
                    "$id": "b/c.json",  # http://example.com/root/b/c.json
                    "not": {"$defs": {"y": {"$id": "d.json", "type": "number"}}},  # .../root/b/d.json
                }
            },
            "allOf": [{"$ref": "http://example.com/root/b/d.json"}, {"$ref": "b/c.json"}],
        },
    )
    target = schema.resolve("#/allOf/0/$ref", "http://example.com/root/b/d.json")
    assert target.pointer == "#/$defs/x/not/$defs/y" and target.schema == {"$id": "d.json", "type": "number"}
    assert schema.resolve("#/allOf/1/$ref", "b/c.json").pointer == "#/$defs/x"
    # inside the embedded resource, `#` is that resource, not the document
    assert schema.resolve("#/$defs/x/not/$ref", "#/not").pointer == "#/$defs/x/not"
    assert schema.resolve("#/$defs/x/not/$defs/y/$ref", "c.json").pointer == "#/$defs/x"


def test_without_an_id_the_base_is_the_files_own_uri(tmp_path):
    schema = load(tmp_path, {"$defs": {"a": {"type": "string"}}})
    uri = (tmp_path / "schema.json").resolve().as_uri()
    assert schema.resolve("#/$ref", f"{uri}#/$defs/a").pointer == "#/$defs/a"
    assert schema.resolve("#/$ref", "schema.json#/$defs/a").pointer == "#/$defs/a"


def test_a_urn_base_takes_pointer_and_anchor_fragments(tmp_path):
    schema = load(
        tmp_path,
        {
            "$id": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed",
            "$defs": {"bar": {"type": "string"}, "baz": {"$anchor": "something", "type": "integer"}},
        },
    )
    assert schema.resolve("#/$ref", "#/$defs/bar").pointer == "#/$defs/bar"
    assert schema.resolve("#/$ref", "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed#/$defs/bar").pointer == "#/$defs/bar"
    assert schema.resolve("#/$ref", "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed#something").pointer == "#/$defs/baz"
    assert schema.resolve("#/$ref", "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed").pointer == "#"
    error = refused(schema, "#/$defs/bar/$ref", "other.json")
    assert error.pointer == "#/$defs/bar/$ref" and "cannot be resolved against the base URI urn:uuid:" in error.message


def test_fragments_are_percent_decoded_and_pointer_escapes_honoured(tmp_path):
    schema = load(tmp_path, {"$defs": {"a%b": {"type": "string"}, "c/d": {"type": "integer"}, "e~f": {}}})
    assert schema.resolve("#/$ref", "#/$defs/a%25b").pointer == "#/$defs/a%b"
    assert schema.resolve("#/$ref", "#/$defs/c~1d").pointer == "#/$defs/c~1d"
    assert schema.resolve("#/$ref", "#/$defs/e~0f").schema == {}
    assert "has no 'nope' there" in refused(schema, "#/$ref", "#/$defs/nope").message


def test_an_anchor_belongs_to_its_resource(tmp_path):
    schema = load(
        tmp_path,
        {
            "$id": "http://example.com/root",
            "$defs": {
                "A": {"$anchor": "my_anchor", "type": "string"},
                "B": {"$id": "child1", "$defs": {"x": {"$anchor": "my_anchor", "type": "number"}}},
            },
        },
    )
    assert schema.resolve("#/$ref", "#my_anchor").pointer == "#/$defs/A"
    assert schema.resolve("#/$ref", "child1#my_anchor").pointer == "#/$defs/B/$defs/x"
    assert schema.resolve("#/$defs/B/$ref", "#my_anchor").pointer == "#/$defs/B/$defs/x"
    error = refused(schema, "#/$ref", "child1#nope")
    assert error.message == "dangling $ref 'child1#nope': http://example.com/child1 has no $anchor 'nope'"


def test_ids_that_collide_are_an_error_at_the_second_one(tmp_path):
    document = {
        "$id": "http://example.com/root.json",
        "$defs": {"A": {"$id": "same.json"}, "B": {"$id": "http://example.com/same.json"}},
    }
    with pytest.raises(GenerationError) as caught:
        load(tmp_path, document)
    assert caught.value.pointer == "#/$defs/B/$id"
    assert (
        caught.value.message == "the URI http://example.com/same.json is also the $id of #/$defs/A: $ids must be unique"
    )


def test_an_anchor_twice_in_one_resource_is_an_error(tmp_path):
    with pytest.raises(GenerationError) as caught:
        load(tmp_path, {"$defs": {"A": {"$anchor": "x"}, "B": {"$anchor": "x"}}})
    assert caught.value.pointer == "#/$defs/B/$anchor" and "at #/$defs/A too" in caught.value.message


@pytest.mark.parametrize(
    ("ident", "message"),
    [(3, "expected a string"), ("http://example.com/a#frag", "has a fragment; name a place with $anchor instead")],
)
def test_an_id_is_a_uri_reference_without_a_fragment(tmp_path, ident, message):
    with pytest.raises(GenerationError) as caught:
        load(tmp_path, {"$defs": {"A": {"$id": ident}}})
    assert caught.value.pointer == "#/$defs/A/$id" and message in caught.value.message


def test_an_unmapped_remote_ref_is_one_line_naming_the_uri_and_the_pointer(tmp_path):
    schema = load(tmp_path, {"$defs": {"A": {"$ref": "http://example.com/schemas/other.json#/$defs/x"}}})
    error = refused(schema, "#/$defs/A/$ref", "http://example.com/schemas/other.json#/$defs/x")
    assert str(error) == (
        "#/$defs/A/$ref: $ref 'http://example.com/schemas/other.json#/$defs/x' names the document "
        "http://example.com/schemas/other.json, which no schema-dir maps to a local directory "
        "(--schema-dir PREFIX=DIR); nothing is fetched from the network"
    )


def test_a_schema_dir_maps_a_uri_prefix_to_local_files_and_their_refs_resolve_against_their_own_uri(tmp_path):
    remotes = tmp_path / "remotes"
    (remotes / "nested").mkdir(parents=True)
    (remotes / "nested" / "other.json").write_text(
        json.dumps({"$defs": {"x": {"$ref": "string.json"}}, "$anchor": "top"})
    )
    (remotes / "nested" / "string.json").write_text(json.dumps({"type": "string"}))
    more = tmp_path / "more"
    more.mkdir()
    (more / "deeper.json").write_text(json.dumps({"type": "integer"}))
    dirs = (("http://example.com/schemas/", remotes), ("http://example.com/schemas/more/", more))
    schema = load(tmp_path, {"$id": "http://example.com/schemas/root.json"}, dirs)
    target = schema.resolve("#/$ref", "nested/other.json#/$defs/x")
    assert target.pointer == "http://example.com/schemas/nested/other.json#/$defs/x"
    inner = schema.resolve(f"{target.pointer}/$ref", "string.json")
    assert (inner.pointer, inner.schema) == ("http://example.com/schemas/nested/string.json#", {"type": "string"})
    assert schema.resolve("#/$ref", "nested/other.json#top").pointer == "http://example.com/schemas/nested/other.json#"
    assert schema.resolve("#/$ref", "more/deeper.json").schema == {"type": "integer"}  # the longest prefix wins
    assert [document.path for document in schema.documents] == [
        remotes / "nested" / "other.json",
        remotes / "nested" / "string.json",
        more / "deeper.json",
    ]
    assert pointer_tokens(target.pointer) == ["other", "$defs", "x"]
    missing = refused(schema, "#/$ref", "absent.json")
    assert (
        missing.message == f"$ref 'absent.json': {remotes / 'absent.json'}: cannot read it (No such file or directory)"
    )
    escape = "http://example.com/schemas/nested/../../escape.json"  # an absolute reference keeps its dot segments
    assert "no schema-dir maps" in refused(schema, "#/$ref", escape).message  # never above the directory


def test_a_retrieved_document_with_another_id_is_known_by_both_uris(tmp_path):
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    document = {"$id": "http://localhost:1234/real.json", "$defs": {"bar": {"type": "string"}}, "$ref": "#/$defs/bar"}
    (remotes / "alias.json").write_text(json.dumps(document))
    schema = load(tmp_path, {}, (("http://localhost:1234/", remotes),))
    root = schema.resolve("#/$ref", "http://localhost:1234/alias.json")
    assert root.pointer == "http://localhost:1234/alias.json#"
    # its own `#/$defs/bar` resolves against its `$id`, which is now known too
    assert (
        schema.resolve(f"{root.pointer}/$ref", "#/$defs/bar").pointer == "http://localhost:1234/alias.json#/$defs/bar"
    )
    assert schema.resolve("#/$ref", "http://localhost:1234/real.json").pointer == root.pointer
