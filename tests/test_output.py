from generator.output import compare, write_beside, write_package


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


def test_files_beside_the_package_are_written_and_compared_as_dot_dot(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n"})
    write_beside(package, {"pyproject.toml": "old\n"})
    write_beside(package, {"pyproject.toml": "new\n"})
    assert (tmp_path / "pyproject.toml").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg", "pyproject.toml"]  # no temporary files left
    (tmp_path / "README.md").write_text("not ours\n")  # other files beside the package are not looked at
    assert compare(package, {"a.py": "A = 1\n"}, {"pyproject.toml": "new\n"}).clean
    drift = compare(package, {"a.py": "A = 1\n"}, {"pyproject.toml": "newer\n", "setup.cfg": "s\n"})
    assert (drift.changed, drift.missing) == (["../pyproject.toml"], ["../setup.cfg"])
    assert "+newer" in drift.report(package)
