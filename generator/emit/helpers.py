"""What the agent helpers need: the static modules of the protocol version a package speaks
(`generator/static/_agent.py`, shared; `helpers_v1.py` or `helpers_v2.py`, copied in as
`helpers.py`; `_config_options_v1.py` or `_config_options_v2.py`, copied in as
`_config_options.py`: the names the shared config-option helpers build with), checked against the schema by the names they import from `.models`
(`generator.emit.imports`), and for v2 the stop reasons `idle` takes, read off the IR and
rendered into `_stop_reasons.py` (`templates/stop_reasons.py.jinja`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from generator import static
from generator.emit.contexts import import_sort_key
from generator.emit.imports import check_imports
from generator.emit.peers import connection_names
from generator.emit.pytypes import Queries
from generator.errors import GenerationError
from generator.ir.model import Module, ObjectType, Ref, UnionType

STOP_REASON_UNION: Final = "IdleStateUpdateStopReason"
DEFAULT_STOP_REASON: Final = "end_turn"  # what `idle()` reports without one
SHARED_MODULE: Final = "_agent.py"


@dataclass(frozen=True)
class Helpers:
    """The helpers of one protocol version: its static modules (the helpers, and the names of its
    config options), and whether it reports idle states (v2), taking the schema's stop reasons."""

    static_module: str
    config_module: str
    stop_reasons: bool

    @property
    def exported(self) -> tuple[str, ...]:
        """The public names of the helpers.py it becomes."""
        return static.exported_names(static.source(self.static_module))


VERSIONS: Final[dict[int, Helpers]] = {
    1: Helpers("helpers_v1.py", "_config_options_v1.py", False),
    2: Helpers("helpers_v2.py", "_config_options_v2.py", True),
}


@dataclass(frozen=True)
class HelpersContext:
    """What the helpers of a package are made of."""

    modules: dict[str, str]  # the package's file name -> the static module copied into it
    stop_reasons: list[tuple[str, str]]  # (tag, class) of each stop reason that takes no property; [] in v1
    stop_reason_imports: list[str]  # what _stop_reasons.py imports from .models


def helper_names(module: Module) -> tuple[str, ...]:
    """The public names of helpers.py, or () when the package has none (no connection, or
    no helpers for its protocol version)."""
    helpers = VERSIONS.get(module.protocol_version or 0)
    return helpers.exported if helpers is not None and connection_names(module) else ()


def helpers_context(module: Module, queries: Queries) -> HelpersContext | None:
    """What the helpers of the package's protocol version need; None without them. A name
    their static modules import from `.models` that the schema does not define is an error."""
    if not helper_names(module):
        return None
    assert module.protocol_version is not None
    helpers = VERSIONS[module.protocol_version]
    modules = {
        "_agent.py": SHARED_MODULE,
        "_config_options.py": helpers.config_module,
        "helpers.py": helpers.static_module,
    }
    for name in modules.values():
        check_imports(f"generator/static/{name}", static.source(name), queries.types, module.schema_path)
    stop_reasons = _stop_reasons(queries) if helpers.stop_reasons else []
    imports = sorted({STOP_REASON_UNION, *(cls for _, cls in stop_reasons)}, key=import_sort_key)
    return HelpersContext(modules, stop_reasons, imports if stop_reasons else [])


def _stop_reasons(queries: Queries) -> list[tuple[str, str]]:
    """(tag, class) of the stop reasons `idle` takes by their tag: the tagged variants of the
    stop-reason union whose class has no required property."""
    union = queries.types.get(STOP_REASON_UNION)
    reasons = []
    if isinstance(union, UnionType):
        for variant in union.variants:
            named = queries.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
            if variant.tag and isinstance(named, ObjectType) and not any(f.required for f in named.fields):
                reasons.append((variant.tag, named.name))
    if DEFAULT_STOP_REASON not in dict(reasons):
        raise GenerationError(
            getattr(union, "pointer", STOP_REASON_UNION),
            f"{STOP_REASON_UNION}: expected a variant tagged {DEFAULT_STOP_REASON!r} without properties,"
            f" found {[tag for tag, _ in reasons]}",
        )
    return reasons
