"""OTLP requests built with the generated protobuf classes and decoded by the
listener's own decoder: the fleet model's tests feed it exactly what the receiver
would, without a network in between (the receiver's tests cover that)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from pygents_tui.listen.decode import Batch, Limits, decode

__all__ = ["Event", "SpanSpec", "logs_batch", "logs_batch_of", "new_id", "spans_batch", "value"]

_counter = itertools.count(1)


def new_id(size: int) -> bytes:
    return os.urandom(size - 4) + next(_counter).to_bytes(4, "big")


def value(item: Any) -> AnyValue:
    if isinstance(item, bool):
        return AnyValue(bool_value=item)
    if isinstance(item, int):
        return AnyValue(int_value=item)
    if isinstance(item, float):
        return AnyValue(double_value=item)
    if isinstance(item, (list, tuple)):
        return AnyValue(array_value=ArrayValue(values=[value(v) for v in item]))
    return AnyValue(string_value=str(item))


def _attributes(attributes: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=value(v)) for k, v in attributes.items()]


@dataclass
class Event:
    """One live record: its event name, attributes, time and span context."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_ns: int = 0
    trace_id: bytes = b""
    span_id: bytes = b""


@dataclass
class SpanSpec:
    name: str
    trace_id: bytes
    span_id: bytes
    parent_id: bytes = b""
    start_ns: int = 1_000_000_000
    end_ns: int = 2_000_000_000
    attributes: Mapping[str, Any] = field(default_factory=dict)
    error: bool = False


def _resource(service: str, instance: str | None) -> dict[str, Any]:
    found: dict[str, Any] = {"service.name": service}
    if instance is not None:
        found["service.instance.id"] = instance
    return found


def logs_batch(
    events: Sequence[Event],
    service: str = "svc",
    instance: str | None = "i-1",
    limits: Limits | None = None,
) -> Batch:
    return logs_batch_of([(service, instance, events)], limits)


def logs_batch_of(
    groups: Sequence[tuple[str, str | None, Sequence[Event]]], limits: Limits | None = None
) -> Batch:
    """One logs request of several resource groups: (service, instance, events) each."""
    request = logs_service_pb2.ExportLogsServiceRequest()
    for service, instance, events in groups:
        group = request.resource_logs.add()
        group.resource.attributes.extend(_attributes(_resource(service, instance)))
        records = group.scope_logs.add()
        records.scope.name = "pygents_otel.live"
        for event in events:
            records.log_records.append(
                LogRecord(
                    time_unix_nano=event.time_ns,
                    event_name=event.name,
                    attributes=_attributes(event.attributes),
                    trace_id=event.trace_id,
                    span_id=event.span_id,
                )
            )
    body = request.SerializeToString()
    return decode("logs", body, json_body=False, limits=limits or Limits())


def spans_batch(
    spans: Sequence[SpanSpec],
    service: str = "svc",
    instance: str | None = "i-1",
    limits: Limits | None = None,
) -> Batch:
    request = trace_service_pb2.ExportTraceServiceRequest()
    group = request.resource_spans.add()
    group.resource.attributes.extend(_attributes(_resource(service, instance)))
    scope = group.scope_spans.add()
    scope.scope.name = "pygents_otel"  # what pygents' own spans are sent under
    for spec in spans:
        scope.spans.append(
            Span(
                trace_id=spec.trace_id,
                span_id=spec.span_id,
                parent_span_id=spec.parent_id,
                name=spec.name,
                kind=Span.SPAN_KIND_INTERNAL,
                start_time_unix_nano=spec.start_ns,
                end_time_unix_nano=spec.end_ns,
                attributes=_attributes(spec.attributes),
                status=Status(code=Status.STATUS_CODE_ERROR if spec.error else 0),
            )
        )
    body = request.SerializeToString()
    return decode("traces", body, json_body=False, limits=limits or Limits())
