"""The format manifest: which committed units are black's text for which rendered units."""

from __future__ import annotations

import json

import pytest

from generator.emit.units import join_units
from generator.output.manifest import manifest_path, proven_units, render_manifest

UNITS = {
    "a.py": [("k1", "import os\n"), ("k2", 'def f():\n    """Doc.\n\n\n    More."""\n'), ("k3", "X = 3\n")],
    "b.py": [("k4", "Y = 4\n")],
}


@pytest.fixture
def package(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    for name, entries in UNITS.items():
        (package / name).write_text(join_units([text for _, text in entries]))
    manifest_path(package).write_text(render_manifest(UNITS))
    return package


def test_the_manifest_lies_beside_the_package_and_is_json(package):
    assert manifest_path(package) == package.parent / "pkg.format.json"
    assert list(json.loads(manifest_path(package).read_text())["files"]) == ["a.py", "b.py"]


def test_every_committed_unit_is_proven(package):
    assert proven_units(package) == {key: text for entries in UNITS.values() for key, text in entries}


def test_an_edited_unit_is_not_proven_and_does_not_hide_the_others(package):
    path = package / "a.py"
    path.write_text(path.read_text().replace("More.", "More, and longer."))
    proven = proven_units(package)
    assert "k2" not in proven
    assert proven["k1"] == "import os\n" and proven["k3"] == "X = 3\n"  # found from the start and from the end


def test_crlf_line_endings_prove_nothing(package):
    path = package / "b.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert "k4" not in proven_units(package)


@pytest.mark.parametrize(
    "manifest",
    [
        "{not json",
        "[]",
        json.dumps({"mode": "black 0.0.1, target py27, line length 79", "files": {}}),
        json.dumps({"mode": None, "files": []}),
    ],
)
def test_a_damaged_or_foreign_manifest_proves_nothing(package, manifest):
    manifest_path(package).write_text(manifest)
    assert proven_units(package) == {}


def test_rows_of_the_wrong_shape_prove_nothing_for_their_file(package):
    data = json.loads(manifest_path(package).read_text())
    data["files"]["a.py"][0] = ["k1", "digest"]
    data["files"]["missing.py"] = [["k9", "digest", 3]]
    manifest_path(package).write_text(json.dumps(data))
    assert proven_units(package) == {"k4": "Y = 4\n"}


def test_no_manifest_proves_nothing(tmp_path):
    assert proven_units(tmp_path / "pkg") == {}
