"""Which packages get agent helpers, and what their static modules are checked against (generator/emit/helpers.py)."""

from __future__ import annotations

import dataclasses

import pytest

from generator import static
from generator.emit.helpers import helper_names, helpers_context
from generator.emit.imports import imported_names
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir.model import Module
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA

V2: Module = build_ir(V2_SCHEMA, "acp_v2", ROOT)


def _speaking(version: int | None, module: Module = V2) -> Module:
    return dataclasses.replace(module, protocol_version=version)


def test_a_v2_package_gets_the_v2_helpers_with_the_schemas_stop_reasons():
    module = _speaking(2)
    context = helpers_context(module, Queries(module))
    assert context is not None and context.modules == {
        "_agent.py": "_agent.py",
        "_config_options.py": "_config_options_v2.py",
        "helpers.py": "helpers_v2.py",
    }
    assert context.stop_reasons == [
        ("end_turn", "IdleStateUpdateStopReasonEndTurn"),
        ("max_tokens", "IdleStateUpdateStopReasonMaxTokens"),
        ("max_turn_requests", "IdleStateUpdateStopReasonMaxTurnRequests"),
        ("refusal", "IdleStateUpdateStopReasonRefusal"),
        ("cancelled", "IdleStateUpdateStopReasonCancelled"),
        ("error", "IdleStateUpdateStopReasonError"),
    ]
    assert context.stop_reason_imports[0] == "IdleStateUpdateStopReason"
    assert "IdleStateUpdateStopReasonEndTurn" in context.stop_reason_imports


def test_a_package_without_a_protocol_version_has_no_helpers():
    module = _speaking(None)
    assert helper_names(module) == ()
    assert helpers_context(module, Queries(module)) is None


def test_a_name_the_helpers_use_that_the_schema_lost_fails_generation_naming_it():
    module = _speaking(2)
    module = dataclasses.replace(module, types=tuple(t for t in module.types if t.name != "StateUpdateRequiresAction"))
    with pytest.raises(GenerationError, match=r"helpers_v2.py imports \['StateUpdateRequiresAction'\] from .models"):
        helpers_context(module, Queries(module))


def test_a_name_the_shared_helpers_use_that_the_schema_lost_fails_generation_naming_it():
    module = _speaking(2)
    module = dataclasses.replace(module, types=tuple(t for t in module.types if t.name != "PermissionOption"))
    with pytest.raises(GenerationError, match=r"_agent.py imports \['PermissionOption'\] from .models"):
        helpers_context(module, Queries(module))


def test_a_name_the_config_options_of_a_version_use_that_the_schema_lost_fails_generation_naming_it():
    module = _speaking(1, build_ir(ROOT / "schema" / "v1" / "schema.json", "acp_v1", ROOT))
    lost = "SetSessionConfigOptionRequestTypeValueId"
    module = dataclasses.replace(module, types=tuple(t for t in module.types if t.name != lost))
    with pytest.raises(GenerationError, match=rf"_config_options_v1.py imports \['{lost}'\] from .models"):
        helpers_context(module, Queries(module))


def test_every_name_the_static_helpers_import_from_models_is_checked():
    """No list beside the modules: what they import is what is checked."""
    for name in ("_agent.py", "helpers_v1.py", "helpers_v2.py"):
        assert "SessionId" in imported_names(static.source(name))
    for name in ("_config_options_v1.py", "_config_options_v2.py"):
        assert "SessionConfigOption" in imported_names(static.source(name))


def test_a_v1_package_gets_the_v1_helpers_which_report_no_state():
    module = _speaking(1, build_ir(ROOT / "schema" / "v1" / "schema.json", "acp_v1", ROOT))
    context = helpers_context(module, Queries(module))
    assert context is not None and context.modules == {
        "_agent.py": "_agent.py",
        "_config_options.py": "_config_options_v1.py",
        "helpers.py": "helpers_v1.py",
    }
    assert context.stop_reasons == [] and context.stop_reason_imports == []
