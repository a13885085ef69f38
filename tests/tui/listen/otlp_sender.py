"""A process's worth of real OpenTelemetry SDK pointed at the listener, emitting
spans and live log records shaped like the schema ``pygents_otel`` sends.

The real ``TracerProvider`` and ``LoggerProvider`` with batch processors and the
real OTLP exporters (gRPC or HTTP) do the sending; only the *content* is made up
here, as a stand-in for ``pygents_otel``'s live mode. ``await sender.sent()``
returns once every span and record emitted so far has been exported and answered,
which (the receiver answering after handing the batch over) means it is ingested::

    sender = Sender("grpc", receiver.grpc_endpoint, service="checkout")
    agent = sender.agent("planner")
    run = sender.run_start(agent)
    turn = sender.turn_start(agent, run, "fetch", timeout=5.0)
    await sender.sent()

Import it from a test module here as ``from otlp_sender import Sender``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from grpc import Compression as GrpcCompression
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (
    OTLPLogExporter as GrpcLogExporter,
)
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import (
    OTLPLogExporter as HttpLogExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

__all__ = ["FakeAgent", "FakeTurn", "MakeSender", "Sender"]


@dataclass(frozen=True)
class FakeAgent:
    name: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def common(self) -> dict[str, Any]:
        return {"gen_ai.agent.name": self.name, "gen_ai.agent.id": self.id}


@dataclass
class FakeTurn:
    agent: FakeAgent
    tool: str
    span: Span
    uuid: str = field(default_factory=lambda: str(uuid.uuid4()))
    values: int = 0

    @property
    def trace_id(self) -> str:
        return format(self.span.get_span_context().trace_id, "032x")


class Sender:
    """One "process": a resource, a tracer and a logger exporting to the listener."""

    def __init__(
        self,
        protocol: str,
        endpoint: str | None,
        *,
        service: str = "checkout",
        instance: str | None = None,
        extra: Mapping[str, Any] | None = None,
        gzip: bool = False,
        clock_offset: float = 0.0,
    ) -> None:
        """``clock_offset``: seconds the sender's clock is off (negative: behind); every
        record's and span's time is stamped from that clock."""
        self.clock_offset_ns = int(clock_offset * 1e9)
        assert endpoint is not None, "that transport of the receiver is off"
        attributes: dict[str, Any] = {
            "service.name": service,
            "host.name": "test-host",
            "process.pid": 4242,
            **(extra or {}),
        }
        if instance is not None:
            attributes["service.instance.id"] = instance
        resource = Resource(attributes)  # exactly these: no detected instance id
        if protocol == "grpc":
            compression: Any = GrpcCompression.Gzip if gzip else None
            spans: Any = GrpcSpanExporter(endpoint=endpoint, insecure=True, compression=compression)
            logs: Any = GrpcLogExporter(endpoint=endpoint, insecure=True, compression=compression)
        else:
            compression = Compression.Gzip if gzip else Compression.NoCompression
            spans = HttpSpanExporter(endpoint=f"{endpoint}/v1/traces", compression=compression)
            logs = HttpLogExporter(endpoint=f"{endpoint}/v1/logs", compression=compression)
        self.tracer_provider = TracerProvider(resource=resource)
        self.tracer_provider.add_span_processor(BatchSpanProcessor(spans))
        self.logger_provider = LoggerProvider(resource=resource)
        self.logger_provider.add_log_record_processor(BatchLogRecordProcessor(logs))
        self.tracer = self.tracer_provider.get_tracer("pygents_otel")
        self.logger = self.logger_provider.get_logger("pygents_otel.live")

    # -- plumbing ----------------------------------------------------------------------------

    def now_ns(self) -> int:
        """The time on this sender's clock."""
        return time.time_ns() + self.clock_offset_ns

    def event(self, name: str, attributes: Mapping[str, Any], span: Span | None = None) -> None:
        """A live record: the OTel event form (``event_name``) plus the ``event.name``
        attribute older back ends read, in the context of ``span``."""
        context = trace.set_span_in_context(span) if span is not None else None
        self.logger.emit(
            timestamp=self.now_ns(),
            context=context,
            event_name=name,
            attributes={"event.name": name, **attributes},
        )

    async def sent(self) -> None:
        """Export everything emitted so far; returns once the receiver answered."""
        spans = await asyncio.to_thread(self.tracer_provider.force_flush, 10_000)
        logs = await asyncio.to_thread(self.logger_provider.force_flush, 10_000)
        assert spans, "the span exporter did not flush in time"
        assert logs, "the log exporter did not flush in time"

    async def close(self) -> None:
        await asyncio.to_thread(self.tracer_provider.shutdown)
        await asyncio.to_thread(self.logger_provider.shutdown)

    # -- the live schema -----------------------------------------------------------------------

    def agent(self, name: str) -> FakeAgent:
        return FakeAgent(name)

    def run_start(self, agent: FakeAgent) -> Span:
        span = self.tracer.start_span(
            f"invoke_agent {agent.name}",
            attributes={"gen_ai.operation.name": "invoke_agent", **agent.common},
            start_time=self.now_ns(),
        )
        self.event("pygents.agent_run.start", agent.common, span)
        return span

    def run_end(self, agent: FakeAgent, span: Span, reason: str = "completed") -> None:
        self.event("pygents.agent_run.end", {**agent.common, "pygents.stop_reason": reason}, span)
        span.set_attribute("pygents.agent.stop_reason", reason)
        span.end(end_time=self.now_ns())

    def turn_start(
        self,
        agent: FakeAgent,
        run: Span,
        tool: str,
        *,
        timeout: float = 5.0,
        streaming: bool = False,
        args_preview: str | None = None,
    ) -> FakeTurn:
        span = self.tracer.start_span(
            f"turn {tool}", context=trace.set_span_in_context(run), start_time=self.now_ns()
        )
        turn = FakeTurn(agent, tool, span)
        span.set_attributes(
            {
                "pygents.turn.uuid": turn.uuid,
                "pygents.turn.timeout": timeout,
                "pygents.tool.name": tool,
            }
        )
        attributes: dict[str, Any] = {
            **agent.common,
            "pygents.turn.uuid": turn.uuid,
            "gen_ai.tool.name": tool,
            "pygents.turn.timeout": timeout,
            "pygents.turn.streaming": streaming,
            "pygents.tags": ["live", "test"],
        }
        if args_preview is not None:
            attributes["pygents.turn.args_preview"] = args_preview
        self.event("pygents.turn.start", attributes, span)
        return turn

    def value(self, turn: FakeTurn, preview: str | None = None, count: int | None = None) -> None:
        turn.values = count if count is not None else turn.values + 1
        attributes: dict[str, Any] = {
            **turn.agent.common,
            "pygents.turn.uuid": turn.uuid,
            "pygents.turn.values": turn.values,
        }
        if preview is not None:
            attributes["pygents.value.preview"] = preview
        self.event("pygents.turn.on_value", attributes, turn.span)

    def turn_end(
        self,
        turn: FakeTurn,
        reason: str = "completed",
        *,
        error_type: str | None = None,
        record: bool = True,
        end_span: bool = True,
    ) -> None:
        attributes: dict[str, Any] = {
            **turn.agent.common,
            "pygents.turn.uuid": turn.uuid,
            "pygents.turn.stop_reason": reason,
            "pygents.turn.values": turn.values,
        }
        if error_type is not None:
            attributes["error.type"] = error_type
        if record:
            self.event("pygents.turn.end", attributes, turn.span)
        if end_span:
            turn.span.set_attributes(
                {"pygents.turn.stop_reason": reason, "pygents.values": turn.values}
            )
            if error_type is not None:
                turn.span.set_attribute("error.type", error_type)
                turn.span.set_status(Status(StatusCode.ERROR, error_type))
            turn.span.end(end_time=self.now_ns())

    def tool_span(self, turn: FakeTurn) -> Span:
        return self.tracer.start_span(
            f"execute_tool {turn.tool}",
            context=trace.set_span_in_context(turn.span),
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": turn.tool},
            start_time=self.now_ns(),
        )

    def foreign_span(self, name: str, parent: Span, kind: SpanKind = SpanKind.CLIENT) -> Span:
        """A span pygents does not make (an HTTP call, a model's ``chat``)."""
        return self.tracer.start_span(
            name, context=trace.set_span_in_context(parent), kind=kind, start_time=self.now_ns()
        )

    def snapshot(self, agent: FakeAgent, state: str, **attributes: Any) -> None:
        self.event(
            "pygents.agent.snapshot", {**agent.common, "pygents.agent.state": state, **attributes}
        )

    def hook(self, agent: FakeAgent, name: str, **attributes: Any) -> None:
        self.event(f"pygents.agent.{name}", {**agent.common, **attributes})

    def context(self, agent: FakeAgent, store: str, event: str, **attributes: Any) -> None:
        self.event(f"pygents.{store}.{event}", {**agent.common, **attributes})

    def heartbeat(self) -> None:
        self.event("pygents.process.heartbeat", {})


MakeSender = Callable[..., Sender]
