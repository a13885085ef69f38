"""Recording a dashboard that runs in-process (``demo`` and ``run``).

There, the dashboard is fed by pygents' own subscriber, not by OTLP. To record
what a listener would have received, the process exports its spans and live
records (``pygents_otel`` in live mode) to the recording through the SDK's batch
processors, encoded by the same OTLP encoders the OTLP exporters use, so that a
recording of a demo replays exactly like one made by ``listen``.
"""

from __future__ import annotations

import os
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

__all__ = ["FileLogExporter", "FileSpanExporter", "record_in_process"]

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
