"""A package carries only the optional parts (`extras` in [tool.acp-codegen]) its configuration
asks for: without one it has none of that part's modules, imports and type-checks as before, and
its top level names the extra to enable for a name it left out."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from generator.config import EXTRAS
from generator.output.write import write_package
from generator.pipeline import build_ir, emit
from tests.support.helpers import CACHE, MYPY_CACHE, ROOT, V2_SCHEMA

# The modules each extra brings, and only it (a package carries each of them with its extra).
OWN_MODULES = {
    "http": {"_transports_http.py", "_http_client.py"},
    "websocket": {"_transports_websocket.py", "_websocket.py"},
    "mcp": {"mcp.py", "_mcp.py"},
    "otel": {"_tracing.py", "_otel.py"},
    "proxy": {"proxy.py", "_serve_proxy.py", "_proxy.py", "conductor.py"},
}
# The public names of the top level each extra brings.
OWN_NAMES = {
    "http": {"connect_http", "open_http", "http_app"},
    "websocket": {"connect_websocket", "open_websocket", "serve_websocket"},
    "otel": {"opentelemetry_observer"},
}


def generate(out: Path, package: str, extras: tuple[str, ...]) -> Path:
    """The v2 package `package`, standing alone, with `extras`, written into `out`."""
    module = replace(build_ir(V2_SCHEMA, package, ROOT, None, CACHE, 2), extras=extras)
    generated = emit(module, CACHE)
    write_package(out / package, generated.files)
    return out / package


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package without any extra."""
    return generate(tmp_path_factory.mktemp("core"), "core_v2", ())


@pytest.fixture(scope="module")
def transports_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package with HTTP and WebSocket, without MCP, OpenTelemetry and proxies."""
    return generate(tmp_path_factory.mktemp("transports"), "net_v2", ("http", "websocket"))


def run(package_dir: Path, program: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """`program` in a fresh interpreter that finds the package (`-S -E`: no site-packages)."""
    code = f"import sys; sys.path.insert(0, sys.argv[1]); {program}"
    return subprocess.run(
        [sys.executable, *flags, "-c", code, str(package_dir.parent)], capture_output=True, text=True, timeout=120
    )


def files(package_dir: Path) -> set[str]:
    return {path.name for path in package_dir.iterdir()}


def test_without_extras_a_package_has_none_of_their_modules(core):
    assert not files(core) & set().union(*OWN_MODULES.values())
    assert not files(core) & {"_http_server.py", "_cookies.py"}  # the HTTP server, the clients' cookies
    assert {"connection.py", "transports.py", "_transports.py", "_connection.py", "_router.py"} <= files(core)


def test_a_package_with_every_extra_has_each_ones_modules(tmp_path):
    every = generate(tmp_path, "all_v2", EXTRAS)
    assert set().union(*OWN_MODULES.values()) | {"_http_server.py", "_cookies.py"} <= files(every)


def test_without_extras_every_public_name_imports_with_the_standard_library_alone(core):
    program = (
        "import core_v2, json; [getattr(core_v2, name) for name in core_v2.__all__]; core_v2.run_agent;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names and m != '__main__')))"
    )
    result = run(core, program, "-S", "-E")
    assert result.returncode == 0, result.stderr
    imported = json.loads(result.stdout)
    assert "core_v2.connection" in imported and "core_v2.transports" in imported
    assert all(name == "core_v2" or name.startswith("core_v2.") for name in imported), imported


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("http_app", "http"),
        ("connect_http", "http"),
        ("connect_websocket", "websocket"),
        ("opentelemetry_observer", "otel"),
        ("AffinityCookies", "http or websocket"),
    ],
)
def test_a_name_an_extra_left_out_names_the_extra_to_enable(core, name, extra):
    result = run(core, f"import core_v2\ntry:\n    core_v2.{name}\nexcept AttributeError as error:\n    print(error)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"module 'core_v2' has no attribute '{name}': it was generated without the {extra} extra "
        "(add it to `extras` in [tool.acp-codegen] and generate again)"
    )
    assert name not in run(core, "import core_v2; print(core_v2.__all__, dir(core_v2))").stdout


def test_without_http_and_websocket_transports_has_the_other_entry_points(core):
    result = run(core, "import core_v2.transports as t; print(sorted(t.__all__))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(
        sorted(
            [
                "connect_negotiated",
                "connect_pair",
                "connect_to_agent",
                "connect_to_client",
                "open_agent_process",
                "run_agent",
                "serve_agent",
                "spawn_agent_process",
                "spawn_client_process",
            ]
        )
    )
    assert "Generated without the http and websocket extras" in (core / "transports.py").read_text()


@pytest.mark.parametrize("package", ["core", "transports_only"])
def test_a_package_without_extras_passes_mypy_strict(package, request):
    package_dir: Path = request.getfixturevalue(package)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), package_dir.name],
        cwd=package_dir.parent,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


def test_a_package_without_extras_still_connects_an_agent_and_a_client(core):
    program = """
import asyncio, core_v2

class Agent(core_v2.Agent):
    async def initialize(self, params):
        return core_v2.InitializeResponse(protocol_version=2, info=core_v2.Implementation(name="a", version="1"))

async def main():
    async with core_v2.connect_pair(Agent(), core_v2.Client()) as (agent_conn, client_conn):
        info = core_v2.Implementation(name="c", version="1")
        answer = await client_conn.initialize(core_v2.InitializeRequest(protocol_version=2, info=info))
        print(answer.protocol_version)

asyncio.run(main())
"""
    result = run(core, program, "-S", "-E")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"


def test_without_mcp_otel_and_proxy_a_package_keeps_http_and_websocket(transports_only):
    assert not files(transports_only) & (OWN_MODULES["mcp"] | OWN_MODULES["otel"] | OWN_MODULES["proxy"])
    assert OWN_MODULES["http"] | OWN_MODULES["websocket"] | {"_http_server.py", "_cookies.py"} <= files(transports_only)
    program = (
        "import net_v2\nprint(callable(net_v2.http_app), callable(net_v2.serve_websocket))\n"
        "try:\n    net_v2.opentelemetry_observer\nexcept AttributeError as error:\n    print(error)"
    )
    result = run(transports_only, program, "-S", "-E")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "True True"
    assert "without the otel extra" in result.stdout.splitlines()[1]


def test_websocket_alone_carries_the_http_server_module_it_builds_on_but_no_http_entry_point(tmp_path):
    """`_websocket` imports the HTTP server's authorization, settings and throttling: the module
    comes with `websocket`; the HTTP client and `http_app`, `connect_http`, `open_http` do not."""
    package_dir = generate(tmp_path, "ws_v2", ("websocket",))
    assert {"_websocket.py", "_transports_websocket.py", "_http_server.py", "_cookies.py"} <= files(package_dir)
    assert not files(package_dir) & OWN_MODULES["http"]
    result = run(package_dir, "import ws_v2, json; print(json.dumps(ws_v2.transports.__all__))")
    assert result.returncode == 0, result.stderr
    exported = set(json.loads(result.stdout))
    assert OWN_NAMES["websocket"] <= exported and not OWN_NAMES["http"] & exported
