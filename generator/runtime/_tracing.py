"""The entry point of the OpenTelemetry observer, apart from `_observe` so that a package
generated without the `otel` extra carries neither it nor `_otel`. Importing it imports
nothing of OpenTelemetry: `opentelemetry_observer()` imports `_otel` (and the library) on
first call."""

from __future__ import annotations

from typing import Any

from ._observe import WireObserver


def opentelemetry_observer(tracer: Any = None) -> WireObserver:
    """An observer that makes one OpenTelemetry span per request, in and out (`tracer`: an
    `opentelemetry.trace.Tracer`, by default the global provider's). Needs the `otel` extra
    (the `opentelemetry-api` library), imported only by this call."""
    from . import _otel

    return _otel.OpenTelemetryObserver(tracer)
