"""The gRPC port's front: an OTLP/HTTP exporter pointed at the gRPC port is answered
at once with the port to use, counted and said on screen; real gRPC exporters still
get through; and the port's connection limit and idle timeout hold, counted.

Real exporters (the OpenTelemetry SDK's OTLP/HTTP and OTLP/gRPC span exporters) and
raw sockets against a real receiver on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from hostile_traffic import export_one_span
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Limits, Receiver
from pygents_tui.ui.screens.main import status_line


def export_over_http(url: str) -> SpanExportResult:
    """One span through the real OTLP/HTTP exporter, retries and all (blocking)."""
    tracer = TracerProvider(resource=Resource.create({"service.name": "lost"})).get_tracer("t")
    span = tracer.start_span("sent to the wrong port")
    span.end()
    exporter = OTLPSpanExporter(endpoint=url, timeout=15)
    try:
        return exporter.export([span])  # type: ignore[list-item]  # an SDK span is readable
    finally:
        exporter.shutdown()


async def test_an_otlp_http_exporter_sent_to_the_grpc_port_is_told_the_http_port_counted_and_shown(
    fleet: FleetModel,
    receiver: Receiver,
    until: Any,
    text_of: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    grpc_port, http_port = receiver.grpc_port, receiver.http_port
    advice = f"OTLP/HTTP sent to the gRPC port {grpc_port}: use port {http_port}"
    app = listen_app(fleet, receiver.host, grpc_port, http_port)
    async with app.run_test(size=(130, 30)) as pilot:
        with caplog.at_level(logging.ERROR):
            wrong = await asyncio.wait_for(
                asyncio.to_thread(export_over_http, f"http://127.0.0.1:{grpc_port}/v1/traces"), 30
            )
        assert wrong is SpanExportResult.FAILURE
        # The exporter's own log line names the port to use, at the first attempt.
        (logged,) = [r.getMessage() for r in caplog.records if "Failed to export" in r.getMessage()]
        assert f"code: 400, reason: {advice}" in logged
        assert fleet.store.counts["misdirected"] == 1

        await until(pilot, lambda: f"• {advice} (1 request refused)" in text_of(app))
        assert "1 refused (HTTP sent to the gRPC port)" in text_of(app)

        # The gRPC port still serves gRPC: the real exporter gets its span through.
        result, trace_id = await asyncio.wait_for(
            asyncio.to_thread(export_one_span, str(receiver.grpc_endpoint)), 30
        )
        assert result is SpanExportResult.SUCCESS
        await until(pilot, lambda: bool(fleet.traces.spans(trace_id)))
    assert fleet.store.counts["misdirected"] == 1


async def test_with_http_off_the_answer_says_the_receiver_takes_grpc_only(
    fleet: FleetModel,
) -> None:
    async with Receiver(fleet, grpc_port=0, http_port=None) as receiver:
        grpc_port = receiver.grpc_port
        reader, writer = await asyncio.open_connection("127.0.0.1", grpc_port)
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            async with asyncio.timeout(10):
                status = await reader.readline()
                answer = await reader.read()  # to its end: the receiver closes after it
        finally:
            writer.close()
    assert status == f"HTTP/1.1 400 OTLP/HTTP sent to the gRPC port {grpc_port}: ".encode() + (
        b"this receiver takes gRPC only\r\n"
    )
    assert answer.endswith(b": this receiver takes gRPC only\n")
    assert fleet.store.counts["misdirected"] == 1
    assert fleet.last_rejection is not None
    assert fleet.last_rejection.startswith("requests: OTLP/HTTP sent to the gRPC port")


async def test_grpc_connections_past_the_limit_are_closed_counted_and_idle_ones_closed_in_time(
    fleet: FleetModel,
) -> None:
    """Four connections allowed: six more are closed at once and counted; the four
    kept (two silent, two that stop inside their first bytes) are closed after the
    idle timeout, and a real exporter gets in again."""
    limits = Limits(max_connections=4, idle_timeout=2.0)
    async with Receiver(fleet, grpc_port=0, http_port=None, limits=limits) as receiver:
        assert receiver.grpc_port is not None
        idle = [await asyncio.open_connection("127.0.0.1", receiver.grpc_port) for _ in range(10)]
        try:
            idle[2][1].write(b"PR")  # too short to tell an HTTP/2 preface from "PRINT "
            idle[3][1].write(b"POS")  # an HTTP/1.x method, cut short
            async with asyncio.timeout(10):
                refused_ends = [await reader.read(1) for reader, _ in idle[4:]]
                open_then = [not reader.at_eof() for reader, _ in idle[:4]]
                idle_ends = [await reader.read(1) for reader, _ in idle[:4]]
        finally:
            for _, writer in idle:
                writer.close()
        result, _ = await asyncio.wait_for(
            asyncio.to_thread(export_one_span, str(receiver.grpc_endpoint)), 30
        )

    assert result is SpanExportResult.SUCCESS
    assert refused_ends == [b""] * 6  # closed by the receiver without a byte
    assert open_then == [True] * 4
    assert idle_ends == [b""] * 4
    assert fleet.store.counts["refused"] == 6
    assert fleet.store.counts["misdirected"] == 0  # a cut-short method is not a request
    line = status_line(fleet.store, [], fleet.store.counters(), False)
    assert "6 refused (receiver busy or sender too slow)" in line
