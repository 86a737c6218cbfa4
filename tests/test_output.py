from generator.output import compare, write_package


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
