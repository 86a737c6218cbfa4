"""The committed package: standalone, complete, typed and lint-clean."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import re
import subprocess
import sys

import pytest

from generator.config import load_config
from generator.ir.model import EnumType, ObjectType
from generator.pipeline import build_ir
from tests.support.helpers import MYPY_CACHE, ROOT, V2_SCHEMA, assert_json_identical, generate_package, import_package

GENERATED = ROOT / "generated"
TYPING = ROOT / "tests" / "typing"


def imported_modules(statements: str) -> set[str]:
    """The modules other than the standard library's that `statements` import in a clean interpreter."""
    code = (
        f"import sys; sys.path.insert(0, sys.argv[1]); {statements}; import json; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names and m != '__main__')))"
    )
    result = subprocess.run([sys.executable, "-S", "-E", "-c", code, str(GENERATED)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout))


def test_imports_in_a_clean_interpreter_with_no_third_party_packages():
    every_name = "import acp_v2; [getattr(acp_v2, name) for name in acp_v2.__all__]; acp_v2.Cost.builder"
    assert imported_modules(every_name + "(amount=1, currency='EUR')") == {
        "acp_v2",
        "acp_v2._agent",
        "acp_v2._builders",
        "acp_v2._codec",
        "acp_v2._config_options",
        "acp_v2._decode",
        "acp_v2._routes",
        "acp_runtime",
        "acp_runtime._connection",
        "acp_runtime._cookies",
        "acp_runtime._jsonrpc",
        "acp_runtime._memory",
        "acp_runtime._observe",
        "acp_runtime._router",
        "acp_runtime._runtime",
        "acp_runtime._session",
        "acp_v2._stop_reasons",
        "acp_v2.connection",
        "acp_v2.helpers",
        "acp_v2.models",
        "acp_v2.rpc",
        "acp_v2.session",
        "acp_v2.transports",
        "acp_v2.upserts",
    }


def test_opentelemetry_is_imported_only_by_the_observer_that_needs_it():
    """With opentelemetry installed, every public name leaves it unimported until
    `opentelemetry_observer()`; without it, that call names the `otel` extra."""
    program = (
        "import sys; sys.path.insert(0, sys.argv[1]); import acp_v2, acp_v1\n"
        "[getattr(package, name) for package in (acp_v2, acp_v1) for name in package.__all__]\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry') or m.endswith('._otel')))\n"
        "acp_v2.opentelemetry_observer()\n"
        "print('opentelemetry.trace' in sys.modules, 'acp_runtime._otel' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", program, str(GENERATED)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    unimported, imported = result.stdout.splitlines()
    assert (unimported, imported) == ("[]", "True True")
    without = (
        "import sys; sys.modules['opentelemetry'] = None; sys.path.insert(0, sys.argv[1]); import acp_v1\n"
        "try:\n    acp_v1.opentelemetry_observer()\nexcept ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", without, str(GENERATED)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    missing = result.stdout.strip()
    assert "`otel` extra" in missing and "pip install" in missing


def test_importing_the_package_imports_the_types_only():
    """The codec, builders, JSON-RPC, connection and upserts are imported on first use (`_decode`
    holds `decode` and `encode`, which only call the codec)."""
    assert imported_modules("import acp_v2") == {
        "acp_v2",
        "acp_v2._decode",
        "acp_runtime",
        "acp_runtime._runtime",
        "acp_v2.models",
    }
    assert imported_modules("from acp_v2 import ToolCallUpdate, decode") == {
        "acp_v2",
        "acp_v2._decode",
        "acp_runtime",
        "acp_runtime._runtime",
        "acp_v2.models",
    }
    assert "acp_v2._codec" in imported_modules("import acp_v2; acp_v2.decode('SessionId', 's')")
    assert "acp_v2.connection" in imported_modules("from acp_v2 import Agent")
    assert {"acp_v2.session", "acp_runtime._session"} <= imported_modules("from acp_v2 import SessionState")
    assert "acp_v2.rpc" in imported_modules("import acp_v2; acp_v2.rpc.Request")  # a module as an attribute
    assert "acp_v2._codec" not in imported_modules("import acp_v2; dir(acp_v2)")


def test_exposes_every_def_and_no_numbered_names():
    package = import_package(GENERATED, "acp_v2")
    defs = json.loads(V2_SCHEMA.read_text())["$defs"]
    assert len(defs) == 262
    assert set(defs) <= set(package.__all__)
    assert [name for name in package.__all__ if re.search(r"[a-z]\d+$", name)] == []


def test_every_file_has_the_header():
    sha = json.loads((ROOT / "schema" / "schema.lock.json").read_text())["files"][-1]["sha256"]
    for path in (GENERATED / "acp_v2").glob("*.py"):
        head = path.read_text().splitlines()[:3]
        assert "Do not edit" in head[0] and "black 26.10.1" in head[0]
        assert f"schema/v2/schema.unstable.json (sha256 {sha})" in head[1]


def test_passes_mypy_strict():
    """The package, the examples that use it, and natural constructor calls (plain strings
    for ids and enums)."""
    users = [str(path) for path in [*sorted((ROOT / "examples").glob("*.py")), TYPING / "constructors_ok.py"]]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), "acp_v2", *users],
        cwd=GENERATED,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("package", ["acp_v2", "acp_v1"])
def test_passes_ruff(package):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", f"generated/{package}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


def test_the_v1_schemas_generate_and_import(tmp_path):
    for index, name in enumerate(("schema.json", "schema.unstable.json")):
        package_name = f"acp_v1_{index}"
        generate_package(ROOT / "schema" / "v1" / name, tmp_path, package_name)
        package = import_package(tmp_path, package_name)
        assert package.decode("SessionId", "abc") == "abc"
        note = {
            "sessionId": "s",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        }
        assert_json_identical(package.encode(package.decode("SessionNotification", note)), note)


def test_classes_are_what_dataclass_with_slots_and_kw_only_would_make():
    acp = import_package(GENERATED, "acp_v2")
    update = acp.ToolCallUpdate(tool_call_id="t", title="x")
    assert update == acp.ToolCallUpdate(tool_call_id="t", title="x") != acp.ToolCallUpdate(tool_call_id="t")
    assert update != acp.SessionUpdateToolCallUpdate(tool_call_id="t", title="x")  # another class
    assert repr(update).startswith("ToolCallUpdate(tool_call_id='t', name=UNDEFINED, title='x', kind=UNDEFINED")
    assert acp.ToolCallUpdate.__hash__ is None and acp.ToolCallUpdate.__match_args__ == ()
    assert not hasattr(update, "__dict__")
    with pytest.raises(TypeError):
        acp.ToolCallUpdate("t")  # keyword-only
    with pytest.raises(TypeError):
        acp.ToolCallUpdate(title="x")  # tool_call_id is required


def test_dataclasses_functions_work_on_the_classes():
    acp = import_package(GENERATED, "acp_v2")
    variant = acp.SessionUpdateToolCallUpdate(tool_call_id="t", title="x")
    assert dataclasses.is_dataclass(variant) and dataclasses.is_dataclass(acp.ToolCallUpdate)
    fields = dataclasses.fields(variant)
    assert [item.name for item in fields][:3] == ["tool_call_id", "name", "title"]
    assert fields[0].default is dataclasses.MISSING and fields[1].default is acp.UNDEFINED
    assert fields[-1].name == "unknown_properties" and fields[-1].default_factory is dict
    assert all(item.kw_only for item in fields)
    changed = dataclasses.replace(variant, title=None)
    assert type(changed) is acp.SessionUpdateToolCallUpdate and changed.title is None and changed.tool_call_id == "t"
    assert dataclasses.asdict(variant)["title"] == "x"
    assert not dataclasses.is_dataclass(acp.Model)


def test_attribute_docstrings_are_indented_with_their_class():
    """PEP 257: every line of an attribute docstring is inside the class body."""
    source = (GENERATED / "acp_v2" / "models.py").read_text()
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            for statement in node.body[1:]:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    body = lines[statement.lineno - 1 : statement.end_lineno]
                    assert all(not line or line.startswith("    ") for line in body), (node.name, body)


def test_models_defines_the_enums_and_classes_in_the_order_of_the_schema_walk():
    """The order the IR built them in: the `$defs` in order, each with its inline types,
    except that a base class comes before the variants that subclass it."""
    config = load_config(ROOT)
    module = build_ir(V2_SCHEMA, "acp_v2", ROOT, config.options)
    source = (GENERATED / "acp_v2" / "models.py").read_text()
    defined = [node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)]
    assert defined == [named.name for named in module.types if isinstance(named, (EnumType, ObjectType))]


PAINT = {
    "$defs": {
        "Color": {"type": "string", "enum": ["red", "green"]},
        "Paint": {
            "type": "object",
            "properties": {
                "color": {"$ref": "#/$defs/Color"},
                "trim": {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}]},
            },
            "required": ["color"],
        },
    }
}


def test_constructors_turn_plain_values_of_a_closed_enum_into_members(tmp_path):
    """`Paint(color="red")` is natural code (mypy accepts the enum's values as `Literal`s);
    the attribute holds the member, as decoding would make it."""
    schema = tmp_path / "paint.json"
    schema.write_text(json.dumps(PAINT))
    generate_package(schema, tmp_path, "paint")
    paint = import_package(tmp_path, "paint")
    assert inspect.signature(paint.Paint).parameters["color"].annotation == "Color | Literal['red', 'green']"
    value = paint.Paint(color="red", trim="green")
    assert value.color is paint.Color.RED and value.trim is paint.Color.GREEN
    assert value == paint.Paint.from_dict({"color": "red", "trim": "green"})
    assert paint.Paint(color=paint.Color.GREEN, trim=None).trim is None
    assert paint.Paint(color="green").trim is paint.UNDEFINED
    with pytest.raises(ValueError, match="'blue' is not a valid Color"):
        paint.Paint(color="blue")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["acp_v2", "acp_v1"])
def test_the_top_level_lists_the_names_to_start_from_first_in_commented_groups(name):
    package = import_package(GENERATED, name)
    public = package.__all__
    assert len(public) == len(set(public))
    order = ["Agent", "run_agent", "AgentSession", "SessionState", "merge", "UNDEFINED", "decode", "PromptRequest",
             "ContentBlock", "decode_message"]  # fmt: skip
    assert sorted(order, key=public.index) == order
    assert "Where to start: an agent subclasses `Agent`" in package.__doc__
    source = (GENERATED / name / "__init__.py").read_text()
    body = source[source.index("__all__ = [") : source.index("]", source.index("__all__ = ["))]
    assert body.count("\n    # ") == 8  # one comment per group
