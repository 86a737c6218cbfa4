"""The OpenTelemetry wire observer: one span per request, from the request crossing to its
response, with the JSON-RPC semantic conventions' attributes. Needs the `otel` extra (the
`opentelemetry-api` library); `import package` never imports it: `opentelemetry_observer()`
imports it on first call."""

from __future__ import annotations

from typing import Any, Final

from ._observe import Direction, WireEvent, WireObserver

try:
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode
except ImportError as error:  # pragma: no cover - exercised in a clean interpreter by the tests
    raise ImportError(
        f"{__package__}'s OpenTelemetry observer needs the opentelemetry-api library: install the "
        "package's `otel` extra (pip install 'DIR[otel]') or `pip install opentelemetry-api`"
    ) from error

MAX_OPEN_SPANS: Final = 4096
"""Spans waiting for their response, per direction; beyond it the oldest is ended unanswered."""


class OpenTelemetryObserver(WireObserver):
    """A span per request, named after its method: `CLIENT` for the requests this side sends
    (a child of the span current where the request is made), `SERVER` for those it serves.
    Attributes: `rpc.system` ("jsonrpc"), `rpc.method`, `rpc.jsonrpc.version`,
    `rpc.jsonrpc.request_id`, `acp.side`, and for an error response `rpc.jsonrpc.error_code`
    and `rpc.jsonrpc.error_message` with the span's status set to ERROR. Requests still open
    when the connection ends get status ERROR ("connection closed")."""

    def __init__(self, tracer: trace.Tracer | None = None) -> None:
        self.tracer = tracer if tracer is not None else trace.get_tracer(__package__ or "acp")
        self._open: dict[tuple[Direction, type, Any], Span] = {}

    def on_message(self, event: WireEvent) -> None:
        if event.id is None:
            return
        if event.kind == "request":
            assert event.method is not None
            if len(self._open) >= 2 * MAX_OPEN_SPANS:
                self._end(next(iter(self._open)), "no response before newer requests")
            span = self.tracer.start_span(
                event.method,
                kind=SpanKind.CLIENT if event.direction == "out" else SpanKind.SERVER,
                attributes={
                    "rpc.system": "jsonrpc",
                    "rpc.method": event.method,
                    "rpc.jsonrpc.version": "2.0",
                    "rpc.jsonrpc.request_id": str(event.id),
                    "acp.side": event.side,
                },
            )
            self._open[(event.direction, type(event.id), event.id)] = span
        elif event.kind in ("response", "error"):
            other: Direction = "out" if event.direction == "in" else "in"
            answered = self._open.pop((other, type(event.id), event.id), None)
            if answered is None:
                return
            span = answered
            if event.kind == "error":
                error = event.message.get("error") if type(event.message) is dict else None
                text = error.get("message") if type(error) is dict else None
                if event.error_code is not None:
                    span.set_attribute("rpc.jsonrpc.error_code", event.error_code)
                if type(text) is str:
                    span.set_attribute("rpc.jsonrpc.error_message", text)
                span.set_status(Status(StatusCode.ERROR, text if type(text) is str else None))
            span.end()

    def on_close(self) -> None:
        for key in list(self._open):
            self._end(key, "connection closed")

    def _end(self, key: tuple[Direction, type, Any], reason: str) -> None:
        span = self._open.pop(key)
        span.set_status(Status(StatusCode.ERROR, reason))
        span.end()
