"""W4 and W5 of SPEC §5: the cost of telemetry.

W4 compares an instrumented W1 with a floor that creates the same spans and span
events directly with the SDK, around the same ``await f(x)`` under a timeout. W5
compares W1 with the instrumentor installed but no SDK configured against W1 alone.
W4l is W4 with live mode on as well (its log records into an SDK logger provider with
a batch processor and an exporter that discards), against W4: what live mode adds to
a traced turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from opentelemetry import context, trace
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    LogRecordExporter,
    LogRecordExportResult,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from benchmarks import workloads as wl
from pygents._turn import new_uuid
from pygents_otel import PygentsInstrumentor


class NullExporter(SpanExporter):
    """Accepts every batch and keeps nothing."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class NullLogExporter(LogRecordExporter):
    """Accepts every batch of log records and keeps nothing."""

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def sdk_logger_provider() -> LoggerProvider:
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(BatchLogRecordProcessor(NullLogExporter()))
    return provider


def sdk_provider() -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(NullExporter()))
    return provider


async def _bare(x: int) -> None:
    return None


async def floor_w4(n: int, provider: TracerProvider) -> float:
    """The agent, turn and tool spans and span events of an instrumented W1, with the
    same attributes, created directly with the SDK around the same awaited call."""
    tracer = provider.get_tracer("floor")
    start = time.perf_counter()
    agent_span = tracer.start_span("invoke_agent bench", attributes=_agent_attributes())
    agent_ctx = trace.set_span_in_context(agent_span)
    for i in range(n):
        turn_id = new_uuid()
        agent_span.add_event("pygents.agent.before_turn", {QUEUE: n - i})
        turn_span = tracer.start_span(
            "turn bench_noop", context=agent_ctx, attributes=_turn_attributes(turn_id)
        )
        turn_span.add_event("pygents.turn.before_run", {TURN: turn_id, TOOL: "bench_noop"})
        tool_span = tracer.start_span(
            "execute_tool bench_noop",
            context=trace.set_span_in_context(turn_span),
            attributes=_tool_attributes(turn_id),
        )
        tool_span.add_event("pygents.tool.before_invoke")
        token = context.attach(trace.set_span_in_context(tool_span))
        try:
            async with asyncio.timeout(60):
                await _bare(i)
        finally:
            context.detach(token)
        tool_span.add_event("pygents.tool.after_invoke")
        tool_span.set_attributes({STOP: "completed"})
        tool_span.end()
        turn_span.add_event("pygents.turn.after_run", {TURN: turn_id, TOOL: "bench_noop"})
        turn_span.add_event(
            "pygents.turn.on_complete", {TURN: turn_id, TOOL: "bench_noop", STOP: "completed"}
        )
        turn_span.set_attributes({STOP: "completed"})
        turn_span.end()
        agent_span.add_event("pygents.agent.on_turn_value", {TURN: turn_id, TOOL: "bench_noop"})
        agent_span.add_event(
            "pygents.agent.after_turn", {TURN: turn_id, TOOL: "bench_noop", QUEUE: n - i - 1}
        )
    agent_span.set_attributes({STOP: "completed"})
    agent_span.end()
    return time.perf_counter() - start


QUEUE, TURN, TOOL, STOP = (
    "pygents.agent.queue.depth",
    "pygents.turn.uuid",
    "pygents.tool.name",
    "pygents.turn.stop_reason",
)


def _agent_attributes() -> dict[str, str]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "pygents",
        "gen_ai.agent.name": "bench",
        "gen_ai.agent.id": "bench@0",
        "gen_ai.agent.description": "benchmark",
    }


def _turn_attributes(turn_id: str) -> dict[str, str | float]:
    return {TURN: turn_id, "pygents.turn.timeout": 60.0, TOOL: "bench_noop"}


def _tool_attributes(turn_id: str) -> dict[str, str]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.provider.name": "pygents",
        "gen_ai.tool.name": "bench_noop",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "W1: a coroutine tool that does nothing.",
        "gen_ai.tool.call.id": turn_id,
    }


async def w4(n: int, provider: TracerProvider) -> float:
    """W1 traced by the instrumentor with the SDK (no metrics)."""
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, meter_provider=_NO_METRICS)
    try:
        return await wl.w1(n)
    finally:
        instrumentor.uninstrument()


async def w4_live(n: int, provider: TracerProvider, logs: LoggerProvider) -> float:
    """W4 with live mode on: two log records a turn (its start and end) besides the
    spans. Snapshots are taken once, at the start."""
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(
        tracer_provider=provider,
        meter_provider=_NO_METRICS,
        live=True,
        logger_provider=logs,
        snapshot_interval=3600,
    )
    try:
        return await wl.w1(n)
    finally:
        instrumentor.uninstrument()


async def w5(n: int) -> float:
    """W1 with the instrumentor installed while no SDK is configured."""
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument()
    try:
        return await wl.w1(n)
    finally:
        instrumentor.uninstrument()


class _NoMetrics:
    """A meter provider whose instruments do nothing (W4 measures tracing)."""

    def get_meter(self, *args: object, **kwargs: object) -> object:
        from opentelemetry.metrics import NoOpMeterProvider

        return NoOpMeterProvider().get_meter("pygents")


_NO_METRICS = _NoMetrics()
