"""Builders: typed, chainable, converting, and validating like strict decoding."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from tests.support.helpers import MYPY_CACHE, ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
TYPING = ROOT / "tests" / "typing"


def test_the_issue_example_builds_what_it_says():
    update = acp.SubagentUpdate.builder(session_id="child").title("Tests").state(None).build()
    assert update.to_dict() == {"sessionId": "child", "title": "Tests", "state": None}


def test_setters_accept_undefined_to_leave_a_field_unset():
    update = acp.ToolCallUpdate.builder(tool_call_id="t").title("x").title(acp.UNDEFINED).build()
    assert update.to_dict() == {"toolCallId": "t"}


def test_setters_convert_paths_iterables_mappings_and_enum_values():
    request = (
        acp.NewSessionRequest.builder(cwd=pathlib.PurePosixPath("/work"))
        .additional_directories(p for p in [pathlib.PurePosixPath("/a")])
        .meta({"trace": 1})
        .build()
    )
    assert request.cwd == "/work" and request.additional_directories == ["/a"]
    assert acp.ToolCallUpdate.builder(tool_call_id="t").kind("read").build().kind is acp.ToolKind.READ


def test_enum_members_and_their_plain_values_build_alike():
    for kind in (acp.ToolKind.EXECUTE, "execute"):
        update = acp.ToolCallUpdate.builder(tool_call_id="t1").kind(kind).build()
        assert update.kind is acp.ToolKind.EXECUTE
        assert update.to_dict() == {"toolCallId": "t1", "kind": "execute"}
        assert type(update.to_dict()["kind"]) is str
        assert acp.decode(acp.ToolCallUpdate, update.to_dict(), strict=True) == update


def test_builders_of_a_subclass_build_the_subclass():
    class MyUpdate(acp.ToolCallUpdate):
        pass

    update = MyUpdate.builder(tool_call_id="t").status(acp.ToolCallStatus.COMPLETED).build()
    assert type(update) is MyUpdate and update.status is acp.ToolCallStatus.COMPLETED


def test_variant_builders_build_the_variant_with_its_tag():
    update = acp.SessionUpdateToolCallUpdate.builder(tool_call_id="t").status("completed").build()
    assert type(update) is acp.SessionUpdateToolCallUpdate
    assert update.to_dict() == {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}


def test_build_validates_like_strict_decoding():
    with pytest.raises(acp.DecodeError) as caught:
        acp.TerminalSize.builder(cols=70_000, rows=24).build()
    assert caught.value.path == "$.cols"
    with pytest.raises(acp.DecodeError) as caught:
        acp.ToolCallUpdate.builder(tool_call_id="t").kind(5).build()  # type: ignore[arg-type]
    assert caught.value.path == "$.kind"
    with pytest.raises(acp.DecodeError):
        acp.PromptRequest.builder(session_id="s", prompt=[]).build()


def mypy(path: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT / "generated")},
    )


def test_correct_usage_passes_mypy_strict():
    result = mypy(TYPING / "builder_ok.py")
    assert result.returncode == 0, result.stdout


def test_passing_none_to_a_non_nullable_field_fails_mypy_strict():
    result = mypy(TYPING / "builder_bad.py")
    assert result.returncode == 1
    assert 'Argument 1 to "mcp_servers"' in result.stdout and '"None"' in result.stdout
