"""Counting what happens to the spans of the pipelines [`configure`][pygents_otel.configure] builds.

The batch span processor drops a span when its queue is full, and the SDK only logs
that it happened (at most once in a while), never how many. The count is the
difference between two numbers the SDK's public interfaces do show: the spans that
ended (a span processor sees each one) and the spans handed to the exporter (a
wrapper around it sees each batch). Once the processor has shut down, its queue is
empty and that difference is exactly the number dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


@dataclass(frozen=True)
class SpanCounts:
    """What became of the spans given to one exporter that ``configure()`` built.

    ``dropped`` is ``ended - exported - failed``: spans that never reached the
    exporter. After ``shutdown()`` these are the spans the batch processor dropped
    because its queue was full; before, the spans still waiting in it count too.
    """

    ended: int
    """Spans that ended and were sampled, all given to the batch processor."""
    exported: int
    """Spans the exporter sent successfully."""
    failed: int
    """Spans the exporter tried to send but could not (collector down, refused)."""

    @property
    def dropped(self) -> int:
        return self.ended - self.exported - self.failed


class SpanTally:
    """Thread-safe counters: spans ended, and per exporter, spans sent or failed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ended = 0
        self._sent: dict[str, list[int]] = {}  # name -> [exported, failed]
        self._counting = True

    def ended(self) -> None:
        with self._lock:
            if self._counting:
                self._ended += 1

    def stop(self) -> None:
        """Spans that end from now on are not given to any exporter."""
        with self._lock:
            self._counting = False

    def track(self, name: str) -> None:
        with self._lock:
            self._sent.setdefault(name, [0, 0])

    def sent(self, name: str, count: int, ok: bool) -> None:
        with self._lock:
            self._sent[name][0 if ok else 1] += count

    def counts(self) -> dict[str, SpanCounts]:
        with self._lock:
            return {
                name: SpanCounts(self._ended, exported, failed)
                for name, (exported, failed) in self._sent.items()
            }


class EndedSpans(SpanProcessor):
    """Counts the spans a batch processor is given (sampled ones, as it checks)."""

    def __init__(self, tally: SpanTally) -> None:
        self.tally = tally

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and span.context.trace_flags.sampled:
            self.tally.ended()

    def shutdown(self) -> None:
        self.tally.stop()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class TallyingExporter(SpanExporter):
    """Passes every call to ``inner`` and counts the spans of each export."""

    def __init__(self, inner: SpanExporter, name: str, tally: SpanTally) -> None:
        self.inner = inner
        self.name = name
        self.tally = tally
        tally.track(name)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        ok = False
        try:
            result = self.inner.export(spans)
            ok = result is SpanExportResult.SUCCESS
            return result
        finally:
            self.tally.sent(self.name, len(spans), ok)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))
