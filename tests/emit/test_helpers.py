"""Which packages get agent helpers, and what their template is checked against (generator/emit/helpers.py)."""

from __future__ import annotations

import dataclasses

import pytest

from generator.emit.helpers import helper_names, helpers_context
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir.model import Module
from generator.pipeline import build_ir
from tests.helpers import ROOT, V2_SCHEMA

V2: Module = build_ir(V2_SCHEMA, "acp_v2", ROOT)


def _speaking(version: int | None, module: Module = V2) -> Module:
    return dataclasses.replace(module, protocol_version=version)


def test_a_v2_package_gets_the_v2_helpers_with_the_schemas_stop_reasons():
    module = _speaking(2)
    context = helpers_context(module, Queries(module))
    assert context is not None and context.helpers_template == "helpers_v2.py.jinja"
    assert context.stop_reasons == [
        ("end_turn", "IdleStateUpdateStopReasonEndTurn"),
        ("max_tokens", "IdleStateUpdateStopReasonMaxTokens"),
        ("max_turn_requests", "IdleStateUpdateStopReasonMaxTurnRequests"),
        ("refusal", "IdleStateUpdateStopReasonRefusal"),
        ("cancelled", "IdleStateUpdateStopReasonCancelled"),
        ("error", "IdleStateUpdateStopReasonError"),
    ]
    assert "IdleStateUpdateStopReasonEndTurn" in context.helpers_imports


def test_a_package_without_a_protocol_version_has_no_helpers():
    module = _speaking(None)
    assert helper_names(module) == ()
    assert helpers_context(module, Queries(module)) is None


def test_a_name_the_helpers_use_that_the_schema_lost_fails_generation_naming_it():
    module = _speaking(2)
    module = dataclasses.replace(module, types=tuple(t for t in module.types if t.name != "StateUpdateRequiresAction"))
    with pytest.raises(GenerationError, match=r"helpers_v2.py.jinja\) use \['StateUpdateRequiresAction'\]"):
        helpers_context(module, Queries(module))


def test_a_v1_package_gets_the_v1_helpers_which_report_no_state():
    module = _speaking(1, build_ir(ROOT / "schema" / "v1" / "schema.json", "acp_v1", ROOT))
    context = helpers_context(module, Queries(module))
    assert context is not None and context.helpers_template == "helpers_v1.py.jinja"
    assert context.stop_reasons == []
    assert "SessionUpdateToolCall" in context.helpers_imports
