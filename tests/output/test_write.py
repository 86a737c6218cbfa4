"""Writing the package atomically with ordinary permissions; comparing it byte for byte."""

import os
import stat

import pytest

from generator.errors import GenerationError
from generator.output.manifest import manifest_path
from generator.output.write import compare, ordinary_mode, write_package


def test_write_package_replaces_the_whole_directory(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n", "py.typed": ""})
    write_package(package, {"b.py": "B = 2\n"})
    assert sorted(p.name for p in package.iterdir()) == ["b.py"]
    assert [p.name for p in tmp_path.iterdir()] == ["pkg"]  # no staging leftovers


def test_compare_reports_changed_missing_and_extra_files(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"same.py": "x\n", "changed.py": "old\n", "extra.py": "e\n"})
    drift = compare(package, {"same.py": "x\n", "changed.py": "new\n", "missing.py": "m\n"})
    assert (drift.changed, drift.missing, drift.extra) == (["changed.py"], ["missing.py"], ["extra.py"])
    report = drift.report(package)
    assert "-old" in report and "+new" in report and "make generate" in report


def test_compare_ignores_bytecode_caches(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n"})
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert compare(package, {"a.py": "A = 1\n"}).clean


def test_written_files_get_the_permissions_the_umask_gives(tmp_path):
    previous = os.umask(0o027)
    try:
        write_package(tmp_path / "pkg", {"a.py": "A = 1\n"}, "{}\n")
    finally:
        os.umask(previous)
    ordinary_mode.cache_clear()
    assert stat.S_IMODE((tmp_path / "pkg").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "pkg" / "a.py").stat().st_mode) == 0o640
    assert stat.S_IMODE(manifest_path(tmp_path / "pkg").stat().st_mode) == 0o640


def test_what_an_interrupted_write_left_is_removed_by_the_next(tmp_path):
    for leftover in (".pkg.new-1a2b3c4d", ".pkg.old-5e6f7a8b"):
        (tmp_path / leftover / "pkg").mkdir(parents=True)
        (tmp_path / leftover / "pkg" / "a.py").write_text("half")
    write_package(tmp_path / "pkg", {"a.py": "A = 1\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg"]


@pytest.mark.parametrize("blocked", ["out", "out/pkg"])
def test_an_output_path_that_is_a_file_is_one_clear_error(tmp_path, blocked):
    (tmp_path / blocked).parent.mkdir(exist_ok=True)
    (tmp_path / blocked).write_text("")
    with pytest.raises(GenerationError, match="is not a directory"):
        write_package(tmp_path / "out" / "pkg", {"a.py": "A = 1\n"})


def test_compare_is_byte_for_byte_crlf_is_drift(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\nB = 2\n"})
    (package / "a.py").write_bytes(b"A = 1\r\nB = 2\r\n")
    drift = compare(package, {"a.py": "A = 1\nB = 2\n"})
    assert drift.changed == ["a.py"]
    assert "a.py: line endings differ (CRLF on disk)" in drift.report(package)


def test_a_changed_mode_is_drift(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n"})
    (package / "a.py").chmod(0o755)
    drift = compare(package, {"a.py": "A = 1\n"})
    assert not drift.clean and drift.changed == []
    assert drift.mode == [f"a.py is 0o755, expected {ordinary_mode():#o}"]


def test_a_stray_file_anywhere_but_in_pycache_is_drift(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n"})
    (package / "sub").mkdir()
    (package / "sub" / "stray.pyc").write_bytes(b"\0")
    assert compare(package, {"a.py": "A = 1\n"}).extra == ["sub/stray.pyc"]


def test_the_format_manifest_is_compared_too(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n"})
    assert compare(package, {"a.py": "A = 1\n"}, "{}\n").missing == ["../pkg.format.json"]
    write_package(package, {"a.py": "A = 1\n"}, "{}\n")
    assert compare(package, {"a.py": "A = 1\n"}, "{}\n").clean
    assert compare(package, {"a.py": "A = 1\n"}, '{"files": {}}\n').changed == ["../pkg.format.json"]


def test_files_beside_the_package_are_written_and_compared_as_dot_dot(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n"}, beside={"pyproject.toml": "old\n"})
    write_package(package, {"a.py": "A = 1\n"}, beside={"pyproject.toml": "new\n"})
    assert (tmp_path / "pyproject.toml").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg", "pyproject.toml"]  # no temporary files left
    (tmp_path / "README.md").write_text("not ours\n")  # other files beside the package are not looked at
    assert compare(package, {"a.py": "A = 1\n"}, beside={"pyproject.toml": "new\n"}).clean
    drift = compare(package, {"a.py": "A = 1\n"}, beside={"pyproject.toml": "newer\n", "setup.cfg": "s\n"})
    assert (drift.changed, drift.missing) == (["../pyproject.toml"], ["../setup.cfg"])
    assert "+newer" in drift.report(package)
