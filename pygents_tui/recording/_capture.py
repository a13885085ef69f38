"""Recording a dashboard that runs in-process (``demo`` and ``run``).

There, the dashboard is fed by pygents' own subscriber, not by OTLP. To record
what a listener would have received, the process exports its spans and live
records (``pygents_otel`` in live mode) to the recording through the SDK's batch
processors, encoded by the same OTLP encoders the OTLP exporters use, so that a
recording of a demo replays exactly like one made by ``listen``.

The recording ends where the dashboard ends (`end_in_process`, which the dashboard
calls as it exits, before its workload is stopped): the turns that quitting cancels
were never shown, and are not recorded either, so the recording replays to the very
screen the dashboard ended on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import get_logger_provider
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    LogRecordExporter,
    LogRecordExportResult,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from pygents_tui.recording._writer import RecordWriter

__all__ = ["FileLogExporter", "FileSpanExporter", "end_in_process", "record_in_process"]

# Live records are exported every 200 ms, as pygents_otel's live mode does for OTLP.
_LOG_DELAY_MILLIS = 200


class FileSpanExporter(SpanExporter):
    """Spans to a recording, one export request per batch."""

    def __init__(self, writer: RecordWriter) -> None:
        self.writer = writer

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.writer.record("traces", encode_spans(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """The writer is closed by whoever opened it."""


class FileLogExporter(LogRecordExporter):
    """Log records (the live signal) to a recording, one export request per batch."""

    def __init__(self, writer: RecordWriter) -> None:
        self.writer = writer

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        self.writer.record("logs", encode_logs(batch))
        return LogRecordExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Nothing is held here: the writer queues each batch as it comes."""
        return True

    def shutdown(self) -> None:
        """The writer is closed by whoever opened it."""


def record_in_process(writer: RecordWriter, service_name: str) -> Any:
    """Turn on tracing and live mode for this process, exporting to ``writer`` only;
    the `pygents_otel.Telemetry` to shut down (before closing the writer)."""
    import pygents_otel

    telemetry = pygents_otel.configure(
        service_name=os.environ.get("OTEL_SERVICE_NAME", service_name),
        traces_exporter="none",
        metrics_exporter="none",
        logs_exporter="none",
        live=True,
    )
    provider: Any = trace.get_tracer_provider()
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(writer)))
    loggers: Any = get_logger_provider()
    loggers.add_log_record_processor(
        BatchLogRecordProcessor(FileLogExporter(writer), schedule_delay_millis=_LOG_DELAY_MILLIS)
    )
    return telemetry


def end_in_process(writer: RecordWriter, timeout: float = 5.0) -> None:
    """End the recording that `record_in_process` started, here: what this process
    exported so far is handed to ``writer`` (its processors flushed, for at most
    ``timeout`` seconds in all), and anything later is left out (`RecordWriter.end`)."""
    deadline = time.monotonic() + timeout
    for provider in (trace.get_tracer_provider(), get_logger_provider()):
        flush = getattr(provider, "force_flush", None)  # (the API's no-op ones have none)
        if flush is not None:
            left = max(deadline - time.monotonic(), 0.0)
            flush(timeout_millis=int(left * 1000))
    writer.end()
