"""generator/runtime/_observe.py and _otel.py: what a wire observer is told, the logging
observer's lines and the OpenTelemetry observer's spans."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from generator.runtime import _observe as observe
from generator.runtime._otel import OpenTelemetryObserver


class Recorder(observe.WireObserver):
    def __init__(self) -> None:
        self.events: list[observe.WireEvent] = []
        self.closed = 0

    def on_message(self, event: observe.WireEvent) -> None:
        self.events.append(event)

    def on_close(self) -> None:
        self.closed += 1


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def tapped(*observers: observe.WireObserver) -> observe.Tap:
    tap = observe.Tap("client")
    tap.observers.extend(observers)
    return tap


def test_each_message_is_told_with_its_kind_method_id_size_and_a_responses_elapsed_time():
    recorder = Recorder()
    tap = tapped(recorder)
    request = line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
    tap.crossed("out", request)
    tap.crossed("in", line({"jsonrpc": "2.0", "method": "session/update", "params": {}}) + b"\n")
    tap.crossed("in", line({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}) + b"\n")
    tap.crossed("in", line({"jsonrpc": "2.0", "id": "x", "method": "fs/read", "params": {}}))
    tap.crossed("out", line({"jsonrpc": "2.0", "id": "x", "error": {"code": -32602, "message": "bad"}}))
    out_request, notification, response, in_request, error = recorder.events
    assert (out_request.direction, out_request.kind, out_request.method, out_request.id) == (
        "out",
        "request",
        "session/new",
        1,
    )
    assert (out_request.size, out_request.data, out_request.elapsed) == (len(request), request, None)
    assert (notification.kind, notification.method, notification.id) == ("notification", "session/update", None)
    assert notification.data.endswith(b"}") and notification.size == len(notification.data)  # framing excluded
    assert (response.kind, response.method, response.id, response.message) == (
        "response",
        "session/new",
        1,
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}},
    )
    assert response.elapsed == pytest.approx(response.time - out_request.time)
    assert response.elapsed is not None and response.elapsed >= 0
    assert (error.kind, error.method, error.id, error.error_code, error.side) == (
        "error",
        "fs/read",
        "x",
        -32602,
        "client",
    )
    assert error.elapsed == pytest.approx(error.time - in_request.time)


def test_a_response_matches_only_a_request_of_the_other_direction_and_the_same_id_type():
    recorder = Recorder()
    tap = tapped(recorder)
    tap.crossed("out", line({"jsonrpc": "2.0", "id": 1, "method": "a"}))
    tap.crossed("out", line({"jsonrpc": "2.0", "id": 1, "result": None}))  # answers no request of the peer
    tap.crossed("in", line({"jsonrpc": "2.0", "id": "1", "result": None}))  # "1" is not 1
    tap.crossed("in", line({"jsonrpc": "2.0", "id": 1, "result": None}))
    assert [(event.method, event.elapsed is not None) for event in recorder.events[1:]] == [
        (None, False),
        (None, False),
        ("a", True),
    ]


@pytest.mark.parametrize(
    ("data", "kind", "request_id"),
    [
        (b"not json", "invalid", None),
        (b"\xff\xfe", "invalid", None),
        (b"[1, 2]", "invalid", None),
        (b'{"jsonrpc": "2.0", "id": [1]}', "invalid", None),
        (b'{"id": 7}', "invalid", 7),
        (b'{"id": 7, "error": "not an object"}', "error", 7),
    ],
)
def test_what_is_not_a_json_rpc_message_is_told_as_it_can_be_read(data, kind, request_id):
    recorder = Recorder()
    tapped(recorder).crossed("in", data)
    (event,) = recorder.events
    assert (event.kind, event.id, event.method, event.error_code, event.size) == (
        kind,
        request_id,
        None,
        None,
        len(data),
    )


def test_requests_never_answered_are_forgotten_beyond_a_bound():
    tap = tapped(Recorder())
    for request_id in range(3 * observe.MAX_TIMED_REQUESTS):
        tap.crossed("in", line({"jsonrpc": "2.0", "id": request_id, "method": "m"}))
    assert len(tap._requests) == 2 * observe.MAX_TIMED_REQUESTS


def test_an_observer_that_raises_is_logged_once_and_detached_and_the_others_go_on(caplog):
    class Broken(observe.WireObserver):
        def on_message(self, event: observe.WireEvent) -> None:
            raise RuntimeError("observer bug")

    broken, recorder = Broken(), Recorder()
    tap = tapped(broken, recorder)
    with caplog.at_level(logging.ERROR):
        for request_id in range(3):
            tap.crossed("out", line({"jsonrpc": "2.0", "id": request_id, "method": "m"}))
        tap.closed()
    assert len(recorder.events) == 3 and recorder.closed == 1
    assert tap.observers == [recorder]
    (record,) = [record for record in caplog.records if "observer" in record.getMessage()]
    assert "failed and was detached" in record.getMessage() and record.exc_info is not None


def test_the_logging_observer_writes_one_line_per_message_with_the_payload_cut(caplog):
    logger = logging.getLogger("test.wire")
    tap = observe.Tap("agent")
    tap.observers.append(observe.LoggingObserver(logger, max_payload=30))
    request = line({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"text": "x" * 100}})
    error = line({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "Internal error"}})
    with caplog.at_level(logging.DEBUG, logger="test.wire"):
        tap.crossed("in", request)
        tap.crossed("out", error)
        tap.crossed("out", "ünïcode".encode())
    first, second, third = (record.getMessage() for record in caplog.records)
    assert (
        first
        == f"agent <- request session/prompt id=3 {len(request)} B {request[:30].decode()}… ({len(request) - 30} more)"
    )
    assert second.startswith(f"agent -> error session/prompt id=3 code=-32603 {len(error)} B ")
    assert second.endswith(f" ms {error[:30].decode()}… ({len(error) - 30} more)")
    assert third == "agent -> invalid 9 B ünïcode"
    assert all(record.levelno == logging.DEBUG for record in caplog.records)


def test_the_logging_observer_formats_nothing_when_its_level_is_off(caplog):
    class Exploding(bytes):
        def decode(self, *args: Any) -> str:
            raise AssertionError("formatted a message nobody logs")

    event = observe.WireEvent("agent", "in", "invalid", None, None, 1, 0.0, None, None, None, Exploding(b"x"))
    with caplog.at_level(logging.INFO, logger="test.quiet"):
        observe.LoggingObserver(logging.getLogger("test.quiet")).on_message(event)
    assert caplog.records == []


@pytest.fixture
def spans() -> tuple[OpenTelemetryObserver, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OpenTelemetryObserver(provider.get_tracer("test")), exporter


def test_the_opentelemetry_observer_makes_a_span_per_request_with_the_json_rpc_attributes(spans):
    observer, exporter = spans
    tap = tapped(observer)
    tap.crossed("out", line({"jsonrpc": "2.0", "id": 0, "method": "session/new", "params": {}}))
    tap.crossed("in", line({"jsonrpc": "2.0", "method": "session/update", "params": {}}))  # no span
    tap.crossed("in", line({"jsonrpc": "2.0", "id": "r", "method": "fs/read_text_file", "params": {}}))
    tap.crossed("out", line({"jsonrpc": "2.0", "id": "r", "error": {"code": -32002, "message": "Resource not found"}}))
    tap.crossed("in", line({"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "s"}}))
    served, sent = exporter.get_finished_spans()
    assert (sent.name, sent.kind, sent.status.status_code) == ("session/new", SpanKind.CLIENT, StatusCode.UNSET)
    assert dict(sent.attributes or {}) == {
        "rpc.system": "jsonrpc",
        "rpc.method": "session/new",
        "rpc.jsonrpc.version": "2.0",
        "rpc.jsonrpc.request_id": "0",
        "acp.side": "client",
    }
    assert (served.name, served.kind, served.status.status_code) == (
        "fs/read_text_file",
        SpanKind.SERVER,
        StatusCode.ERROR,
    )
    assert served.status.description == "Resource not found"
    assert served.attributes is not None
    assert (served.attributes["rpc.jsonrpc.error_code"], served.attributes["rpc.jsonrpc.error_message"]) == (
        -32002,
        "Resource not found",
    )


def test_requests_open_when_the_connection_ends_are_ended_as_errors(spans):
    observer, exporter = spans
    tap = tapped(observer)
    tap.crossed("out", line({"jsonrpc": "2.0", "id": 0, "method": "session/prompt", "params": {}}))
    assert exporter.get_finished_spans() == ()
    tap.closed()
    (span,) = exporter.get_finished_spans()
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, "connection closed")
