"""Writing the package atomically with ordinary permissions; comparing it byte for byte."""

import errno
import functools
import itertools
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from generator.errors import GenerationError
from generator.output.manifest import manifest_path
from generator.output.write import PackageFiles, compare, ordinary_mode, recover, write_package, write_packages


def test_write_package_replaces_the_whole_directory(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"a.py": "A = 1\n", "py.typed": ""})
    write_package(package, {"b.py": "B = 2\n"})
    assert sorted(p.name for p in package.iterdir()) == ["b.py"]
    assert [p.name for p in tmp_path.iterdir()] == ["pkg"]  # no staging leftovers


def test_write_packages_replaces_several_packages_and_the_files_beside_the_first(tmp_path):
    write_packages([PackageFiles(tmp_path / "a", {"a.py": "A = 1\n"}, "{}\n"), PackageFiles(tmp_path / "rt", {})])
    write_packages(
        [PackageFiles(tmp_path / "a", {"b.py": "B = 2\n"}), PackageFiles(tmp_path / "rt", {"r.py": "R = 1\n"}, "[]\n")],
        {"pyproject.toml": "x\n"},
    )
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b.py"]
    assert sorted(p.name for p in (tmp_path / "rt").iterdir()) == ["r.py"]
    assert (tmp_path / "pyproject.toml").read_text() == "x\n" and (tmp_path / "rt.format.json").read_text() == "[]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a",
        "a.format.json",
        "pyproject.toml",
        "rt",
        "rt.format.json",
    ]


def test_a_failure_swapping_the_last_package_puts_every_package_and_file_back(tmp_path, monkeypatch):
    old = [PackageFiles(tmp_path / "a", {"a.py": "old\n"}, "{}\n"), PackageFiles(tmp_path / "rt", {"r.py": "old\n"})]
    write_packages(old, {"pyproject.toml": "old\n"})
    before = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    real_rename, failed = Path.rename, []

    def rename(self: Path, target: Path) -> Path:
        if Path(target).name == "rt" and not failed:  # the new runtime package, swapped in last
            failed.append(target)
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    new = [PackageFiles(tmp_path / "a", {"a.py": "new\n"}, "[]\n"), PackageFiles(tmp_path / "rt", {"r.py": "new\n"})]
    with pytest.raises(GenerationError, match="No space left on device"):
        write_packages(new, {"pyproject.toml": "new\n"})
    assert failed
    assert {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before


def test_compare_reports_changed_missing_and_extra_files(tmp_path):
    package = tmp_path / "pkg"
    write_package(package, {"same.py": "x\n", "changed.py": "old\n", "extra.py": "e\n"})
    drift = compare(package, {"same.py": "x\n", "changed.py": "new\n", "missing.py": "m\n"})
    assert (drift.changed, drift.missing, drift.extra) == (["changed.py"], ["missing.py"], ["extra.py"])
    report = drift.report(package, "tox -e generate")
    assert "-old" in report and "+new" in report and report.endswith("Run `tox -e generate` and commit the result.")


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
    assert "a.py: line endings differ (CRLF on disk)" in drift.report(package, "acp-codegen generate")


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
    assert "+newer" in drift.report(package, "acp-codegen generate")


# An interrupted write, step by step. A write of NEW over OLD (a package, its format
# manifest and a pyproject.toml beside it) takes STEPS, the calls that change files, each
# named by its function and paths (relative to the output directory, `*` for the random
# hex digits). Each test below stops the write at one of them and looks at every byte.

OLD = {
    "files": {"__init__.py": "old\n", "models.py": "A = 1\n", "legacy/gone.py": "only in the old\n"},
    "manifest": '{"old": 1}\n',
    "beside": {"pyproject.toml": "version = '1'\n"},
}
NEW = {
    "files": {"__init__.py": "new\n", "models.py": "A = 2\n", "added/new.py": "only in the new\n"},
    "manifest": '{"new": 2}\n',
    "beside": {"pyproject.toml": "version = '2'\n"},
}
STEPS = [
    "mkdir .pkg.new-*",
    "write_bytes .pkg.new-*/__init__.py",
    "write_bytes .pkg.new-*/models.py",
    "mkdir .pkg.new-*/added",
    "write_bytes .pkg.new-*/added/new.py",
    "write_bytes .pkg.format.json.new-*",
    "write_bytes .pyproject.toml.new-*",
    "replace .pkg.format.json.new-* pkg.format.json",
    "replace .pyproject.toml.new-* pyproject.toml",
    "rename pkg .pkg.old-*",
    "rename .pkg.new-* pkg",
    "rmtree .pkg.old-*",
]
COMMIT = STEPS.index("rename .pkg.new-* pkg")
CHANGES = [(os, "mkdir"), (os, "rename"), (os, "replace"), (os, "unlink"), (shutil, "rmtree"), (Path, "write_bytes")]

Tree = dict[str, bytes | None]


class Killed(BaseException):
    """Stops a write where a kill would; what the write's handlers do after it is not looked at."""


def tree(directory: Path) -> Tree:
    """Every file (its bytes) and directory (None) under `directory`, hidden ones included."""
    return {
        path.relative_to(directory).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(directory.rglob("*"))
    }


def plant(state: Tree, directory: Path) -> None:
    """Make `directory` hold exactly `state`."""
    directory.mkdir()
    for name, data in state.items():
        if data is None:
            (directory / name).mkdir(parents=True, exist_ok=True)
        else:
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            (directory / name).write_bytes(data)


def visible(state: Tree) -> Tree:
    """`state` without the hidden names a write uses beside what it replaces."""
    return {name: data for name, data in state.items() if not name.startswith(".")}


def package(state: Tree) -> Tree:
    return {name: data for name, data in state.items() if name == "pkg" or name.startswith("pkg/")}


def written(directory: Path, *generations: dict) -> Tree:
    """What writing `generations` one after the other leaves in `directory`."""
    for generation in generations:
        write_package(directory / "pkg", **generation)
    return tree(directory)


def on_every_change(monkeypatch: pytest.MonkeyPatch, root: Path, step) -> None:
    """Route each call of CHANGES (not those it makes itself) through
    `step(number, description, call)`, which decides whether and when to `call` it."""
    numbers = itertools.count()
    inside = False

    def route(name, real):
        def routed(*args, **kwargs):
            nonlocal inside
            if inside:
                return real(*args, **kwargs)
            paths = " ".join(Path(arg).relative_to(root).as_posix() for arg in args if isinstance(arg, (str, Path)))
            inside = True
            try:
                return step(
                    next(numbers), re.sub("-[0-9a-f]{8}", "-*", f"{name} {paths}"), lambda: real(*args, **kwargs)
                )
            finally:
                inside = False

        return routed

    for owner, name in CHANGES:
        monkeypatch.setattr(owner, name, route(name, getattr(owner, name)))


def steps_of(monkeypatch: pytest.MonkeyPatch, root: Path, action) -> list[str]:
    steps: list[str] = []

    def record(number, description, call):
        steps.append(description)
        return call()

    with monkeypatch.context() as patch:
        on_every_change(patch, root, record)
        action()
    return steps


def interrupted(monkeypatch, root, action, at: int, when: str, error: BaseException) -> None:
    """Run `action`, raising `error` at step number `at`, "before" the call does anything or right "after" it."""

    def interrupt(number, description, call):
        if number == at and when == "before":
            raise error
        result = call()
        if number == at:
            raise error
        return result

    with monkeypatch.context() as patch:
        on_every_change(patch, root, interrupt)
        action()


def killed(monkeypatch, root: Path, action, at: int) -> Tree:
    """What is on disk under `root` right after step number `at` of `action`: what a kill there leaves."""
    state: Tree = {}

    def kill(number, description, call):
        result = call()
        if number == at:
            state.update(tree(root))
            raise Killed
        return result

    with monkeypatch.context() as patch, pytest.raises(Killed):
        on_every_change(patch, root, kill)
        action()
    return state


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An output directory holding the OLD generation."""
    written(tmp_path / "out", OLD)
    return tmp_path / "out"


@pytest.fixture
def old(tmp_path: Path) -> Tree:
    return written(tmp_path / "old", OLD)


@pytest.fixture
def new(tmp_path: Path) -> Tree:
    return written(tmp_path / "new", NEW)


def test_a_write_stages_everything_then_replaces_the_files_beside_then_swaps_the_package(monkeypatch, out):
    assert steps_of(monkeypatch, out, lambda: write_package(out / "pkg", **NEW)) == STEPS


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("step", range(len(STEPS)), ids=STEPS)
def test_an_interrupt_leaves_the_old_output_up_to_the_swap_and_the_new_after_it(monkeypatch, out, old, new, step, when):
    with pytest.raises(KeyboardInterrupt):
        interrupted(monkeypatch, out, lambda: write_package(out / "pkg", **NEW), step, when, KeyboardInterrupt())
    if step <= COMMIT:  # undone, even right after the rename that swapped the new package in
        assert tree(out) == old
    else:  # committed: an interrupt while the old copy is deleted leaves some of it, hidden
        assert visible(tree(out)) == new
    write_package(out / "pkg", **NEW)
    assert tree(out) == new


@pytest.mark.parametrize("step", range(COMMIT + 1), ids=STEPS[: COMMIT + 1])
def test_a_failing_step_is_one_error_and_leaves_the_old_output(monkeypatch, out, old, new, step):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with pytest.raises(GenerationError, match="cannot write the package: No space left on device"):
        interrupted(monkeypatch, out, lambda: write_package(out / "pkg", **NEW), step, "before", full)
    assert tree(out) == old
    write_package(out / "pkg", **NEW)
    assert tree(out) == new


def test_an_undone_write_puts_the_files_beside_back_with_their_permissions(monkeypatch, out, old):
    (out / "pyproject.toml").chmod(0o600)
    with pytest.raises(KeyboardInterrupt):
        interrupted(monkeypatch, out, lambda: write_package(out / "pkg", **NEW), COMMIT, "after", KeyboardInterrupt())
    assert tree(out) == old
    assert stat.S_IMODE((out / "pyproject.toml").stat().st_mode) == 0o600


@pytest.mark.parametrize("step", range(len(STEPS)), ids=STEPS)
def test_a_kill_at_any_step_is_repaired_by_the_next_check(monkeypatch, tmp_path, out, old, new, step):
    state = killed(monkeypatch, out, lambda: write_package(out / "pkg", **NEW), step)
    plant(state, tmp_path / "after-kill")
    drift = compare(tmp_path / "after-kill" / "pkg", NEW["files"], NEW["manifest"], NEW["beside"])
    repaired = tree(tmp_path / "after-kill")
    assert repaired == visible(repaired)  # no leftovers
    assert drift.clean == (repaired == new)  # the check reports anything short of the whole new output
    assert package(repaired) in (package(old), package(new))
    for name in ("pkg.format.json", "pyproject.toml"):
        assert repaired[name] in (old[name], new[name])
        if package(repaired) == package(new):
            assert repaired[name] == new[name]  # never the new package with an old file beside it
    assert written(tmp_path / "after-kill", NEW) == new


@pytest.mark.parametrize("step", range(len(STEPS)), ids=STEPS)
def test_a_kill_at_any_step_is_repaired_by_the_next_write(monkeypatch, tmp_path, out, new, step):
    plant(killed(monkeypatch, out, lambda: write_package(out / "pkg", **NEW), step), tmp_path / "after-kill")
    assert written(tmp_path / "after-kill", NEW) == new


RECOVERY = ["rename .pkg.old-* pkg", "rmtree .pkg.new-*"]  # after a kill between the two renames


@pytest.fixture
def between_the_renames(monkeypatch, out) -> Tree:
    """What a kill leaves between the two renames: the one moment there is no package."""
    return killed(monkeypatch, out, lambda: write_package(out / "pkg", **NEW), STEPS.index("rename pkg .pkg.old-*"))


def test_a_kill_between_the_renames_leaves_no_package_but_its_whole_old_copy(between_the_renames, old):
    (copy,) = {name.split("/")[0] for name in between_the_renames if name.startswith(".pkg.old-")}
    assert "pkg" not in between_the_renames
    assert {
        name.replace(copy, "pkg", 1): data for name, data in between_the_renames.items() if name.startswith(copy)
    } == package(old)


def test_recovery_renames_the_old_copy_back_then_removes_the_rest(monkeypatch, tmp_path, between_the_renames):
    plant(between_the_renames, tmp_path / "killed")
    assert steps_of(monkeypatch, tmp_path / "killed", lambda: recover(tmp_path / "killed" / "pkg")) == RECOVERY


@pytest.mark.parametrize("step", range(len(RECOVERY)), ids=RECOVERY)
def test_a_kill_while_recovering_is_repaired_by_the_next_recovery(
    monkeypatch, tmp_path, between_the_renames, old, step
):
    plant(between_the_renames, tmp_path / "killed")
    state = killed(monkeypatch, tmp_path / "killed", lambda: recover(tmp_path / "killed" / "pkg"), step)
    plant(state, tmp_path / "killed-twice")
    recover(tmp_path / "killed-twice" / "pkg")
    assert visible(tree(tmp_path / "killed-twice")) == tree(tmp_path / "killed-twice")
    assert package(tree(tmp_path / "killed-twice")) == package(old)


def test_an_interrupted_first_write_leaves_nothing(monkeypatch, tmp_path):
    def first_write(number: int) -> None:
        write_package(tmp_path / f"out-{number}" / "pkg", **NEW)

    steps = steps_of(monkeypatch, tmp_path, functools.partial(first_write, 0))
    assert steps[0] == "mkdir out-0" and steps[-1] == "rename out-0/.pkg.new-* out-0/pkg"  # no old package to move
    for number, (step, when) in enumerate(itertools.product(range(len(steps)), ["before", "after"]), start=1):
        with pytest.raises(KeyboardInterrupt):
            interrupted(monkeypatch, tmp_path, functools.partial(first_write, number), step, when, KeyboardInterrupt())
        assert not (tmp_path / f"out-{number}").exists() or tree(tmp_path / f"out-{number}") == {}
