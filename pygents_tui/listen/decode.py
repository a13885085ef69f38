"""OTLP requests (protobuf or JSON) as plain, bounded, frozen data.

One decoder for both transports: the gRPC servicers and the HTTP handlers hand it
the raw bytes they received and get back a `Batch` of `ReceivedSpan`,
`ReceivedRecord` and metric counts, or a `Malformed` error that the
transport turns into its status code. Everything kept is cut to a bounded size
here, once, so that nothing downstream ever holds a 10 MB string or a deeply
nested value: a hostile or broken sender costs at most the message-size limit, and
only while its request is being decoded.

Each span and record carries ``size``: every byte it keeps alive, its share of the
resource included, so the byte-bounded stores downstream bound real memory. The
work of decoding is bounded too: at most ``Limits.max_reads_per_request`` values
are read per request, whatever the sender repeats (see `values.Reads`).
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Final, Literal

from google.protobuf import json_format  # type: ignore[import-untyped]  # no stubs installed
from google.protobuf.message import Message  # type: ignore[import-untyped]  # no stubs installed
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from pygents_otel import _names as k
from pygents_tui.listen.values import (
    Limits,
    OverBudget,
    Reads,
    Value,
    attributes_of,
    cut_middle,
    name_of,
    value_of,
)

__all__ = [
    "Batch",
    "Limits",
    "Malformed",
    "Reads",
    "ReceivedRecord",
    "ReceivedSpan",
    "ResourceInfo",
    "Signal",
    "Value",
    "cut_middle",
    "decode",
    "response",
]

Signal = Literal["traces", "logs", "metrics"]

_REQUESTS: Final[dict[str, type[Message]]] = {
    "traces": trace_service_pb2.ExportTraceServiceRequest,
    "logs": logs_service_pb2.ExportLogsServiceRequest,
    "metrics": metrics_service_pb2.ExportMetricsServiceRequest,
}
_KINDS: Final = ("unspecified", "internal", "server", "client", "producer", "consumer")
_STATUS: Final = ("unset", "ok", "error")
_SEVERITY: Final = ("", "trace", "debug", "info", "warn", "error", "fatal")
# What a decoded span or record costs beyond the objects counted one by one (its
# name, attributes, resource...): the object itself, its ids and times. Measured with
# tracemalloc, so the byte-bounded stores bound real memory; the estimate errs high
# (about 1.05x for array-heavy items, up to 2x for small ones, since a resource shared
# by a batch is counted in each of its items: it may outlive any one of them).
_SPAN_BYTES: Final = 400
_RECORD_BYTES: Final = 250
_RESOURCE_BYTES: Final = 100  # a ResourceInfo beyond its strings
_getsizeof: Final = sys.getsizeof
_JSON_IDS: Final = frozenset(
    ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
)


class Malformed(Exception):
    """The request cannot be decoded. ``status`` says how the transport answers."""

    def __init__(self, message: str, status: Literal["invalid", "too_large"] = "invalid"):
        super().__init__(cut_middle(message, 300))
        self.status = status


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """Who sent it: the service and its instance (``service.instance.id``, else
    host and pid), which key the fleet's services.

    Only these five are kept of a resource's attributes: every span holds its
    resource, and a resource of large attributes would otherwise be kept alive by
    each span. ``size`` is the bytes it holds, part of each span's and record's."""

    service: str
    instance: str
    host: str | None
    pid: int | None
    created: str | None = None  # process.creation.time: tells a restart from its predecessor
    size: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return (self.service, self.instance)


@dataclass(frozen=True, slots=True)
class ReceivedSpan:
    resource: ResourceInfo
    scope: str
    trace_id: str  # 32 lowercase hex digits
    span_id: str  # 16 lowercase hex digits
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str
    status_message: str
    attributes: Mapping[str, Value]
    dropped_attributes: int
    size: int  # an estimate of the bytes it holds, for the byte-bounded stores

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent pickled by a decoding process (`pygents_tui.listen.offload`): made again
        # from its fields, at about half what the default (a state set field by
        # field) costs the process that unpickles it, the dashboard's.
        return (ReceivedSpan, _span_fields(self))


@dataclass(frozen=True, slots=True)
class ReceivedRecord:
    """A log record; the live signal uses its ``event_name``."""

    resource: ResourceInfo
    scope: str
    event_name: str
    time_ns: int  # 0 when the sender sent no time
    severity: str
    body: str | None
    trace_id: str | None
    span_id: str | None
    attributes: Mapping[str, Value]
    dropped_attributes: int
    size: int

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReceivedRecord, _record_fields(self))  # as `ReceivedSpan.__reduce__`


_span_fields: Final = attrgetter(*(field.name for field in fields(ReceivedSpan)))
_record_fields: Final = attrgetter(*(field.name for field in fields(ReceivedRecord)))


@dataclass(frozen=True, slots=True)
class Batch:
    """What one request carried, decoded. ``rejected`` items were invalid on their
    own (bad ids) and are reported back as a partial success with ``reason``."""

    signal: Signal
    spans: tuple[ReceivedSpan, ...] = ()
    records: tuple[ReceivedRecord, ...] = ()
    points: tuple[tuple[ResourceInfo, int], ...] = ()
    rejected: int = 0
    reason: str = ""
    size: int = 0

    @property
    def items(self) -> int:
        return len(self.spans) + len(self.records) + sum(n for _, n in self.points)


# -- entry points --------------------------------------------------------------------


def decode(
    signal: Signal, body: bytes, *, json_body: bool, limits: Limits, reads: Reads | None = None
) -> Batch:
    """Parse and bound one request body; `Malformed` when it cannot be. ``reads``:
    the reading budget to spend, when the caller wants to see what was spent."""
    message = _parse(signal, body, json_body, limits)
    try:
        if reads is None:
            reads = Reads(limits.max_reads_per_request)
        return _BUILDERS[signal](message, limits, reads)
    except OverBudget:
        raise Malformed(
            f"more than {limits.max_reads_per_request:,} attribute values in one request;"
            " export smaller batches",
            "too_large",
        ) from None


def _parse(signal: Signal, body: bytes, json_body: bool, limits: Limits) -> Any:
    """The request message, its size and item count checked; `Malformed` if not."""
    if len(body) > limits.max_message_bytes:
        raise Malformed(
            f"request of {len(body):,} bytes exceeds the {limits.max_message_bytes:,}-byte limit",
            "too_large",
        )
    message = _REQUESTS[signal]()
    try:
        if json_body:
            document = _hex_ids_to_base64(json.loads(body), _json_budget(limits))
            json_format.ParseDict(document, message, ignore_unknown_fields=True)
        else:
            message.ParseFromString(body)
    except Malformed:
        raise
    except Exception as exc:  # hostile bytes raise all sorts; each is just "malformed"
        kind = "OTLP/JSON" if json_body else "protobuf"
        raise Malformed(f"not a valid {kind} {signal} request ({type(exc).__name__})") from None
    _check_count(signal, message, limits.max_items_per_request)
    return message


_PATHS: Final = {
    "traces": ("resource_spans", "scope_spans", "spans"),
    "logs": ("resource_logs", "scope_logs", "log_records"),
    "metrics": ("resource_metrics", "scope_metrics", "metrics"),
}


def _check_count(signal: Signal, message: Any, limit: int) -> None:
    """Refuse a request with more items than ``limit`` before converting any, in at
    most ``limit`` steps however the items are spread over groups."""
    groups, scopes, items = _PATHS[signal]
    count = 0
    for group in getattr(message, groups):
        count += 1
        for scope in getattr(group, scopes):
            count += 1 + len(getattr(scope, items))
            if count > limit:
                break
        if count > limit:
            raise Malformed(
                f"more than {limit:,} items in one request; export smaller batches", "too_large"
            )


def response(signal: Signal, rejected: int = 0, reason: str = "") -> Message:
    """The OTLP answer: empty on success, a partial success when items were rejected."""
    if signal == "traces":
        return trace_service_pb2.ExportTraceServiceResponse(
            partial_success=trace_service_pb2.ExportTracePartialSuccess(
                rejected_spans=rejected, error_message=reason
            )
            if rejected
            else None
        )
    if signal == "logs":
        return logs_service_pb2.ExportLogsServiceResponse(
            partial_success=logs_service_pb2.ExportLogsPartialSuccess(
                rejected_log_records=rejected, error_message=reason
            )
            if rejected
            else None
        )
    return metrics_service_pb2.ExportMetricsServiceResponse()


def _json_budget(limits: Limits) -> int:
    """The JSON values an OTLP/JSON request may hold: what its protobuf form may
    read, an attribute being about four JSON values (its object's two entries, its
    value's object and the value itself)."""
    return _JSON_VALUES_PER_READ * limits.max_reads_per_request


_JSON_VALUES_PER_READ: Final = 4
_JSON_ID_DEPTH: Final = 12  # ids are rewritten no deeper: OTLP puts them at depth 6


def _hex_ids_to_base64(document: Any, budget: int) -> Any:
    """OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping
    expects base64: rewrite them in place (anything odd is left for the parser to
    reject). Every value of the document is counted on the way, and a document of
    more than ``budget`` is refused as too large before it is parsed: the parser is
    pure Python, and 4 MB of empty objects took it 23 s. Refused as soon as the
    count passes the budget, so the walk itself is bounded by it."""
    stack: list[tuple[Any, int]] = [(document, 0)] if isinstance(document, (dict, list)) else []
    count = 0
    while stack:
        node, depth = stack.pop()
        count += len(node)
        if count > budget:
            raise Malformed(
                f"more than {budget:,} values in one OTLP/JSON request; export smaller batches",
                "too_large",
            )
        if isinstance(node, list):
            stack.extend((item, depth + 1) for item in node if isinstance(item, (dict, list)))
            continue
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                stack.append((value, depth + 1))
            elif key in _JSON_IDS and isinstance(value, str) and depth <= _JSON_ID_DEPTH:
                try:
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
                except ValueError:
                    raise Malformed(f"{cut_middle(key, 20)} is not a hex string") from None
    return document


_RESOURCE_KEYS: Final = frozenset(
    (k.SERVICE_NAME, k.SERVICE_INSTANCE, k.HOST_NAME, k.PROCESS_PID, k.PROCESS_CREATION_TIME)
)


def _resource(resource: Any, limits: Limits, reads: Reads) -> ResourceInfo:
    pairs = resource.attributes
    reads.spend(len(pairs))  # every key is looked at, to find the five kept
    attributes = {
        pair.key: value_of(pair.value, limits, reads)
        for pair in pairs
        if pair.key in _RESOURCE_KEYS
    }
    service = attributes.get(k.SERVICE_NAME)
    instance = attributes.get(k.SERVICE_INSTANCE)
    host = attributes.get(k.HOST_NAME)
    pid = attributes.get(k.PROCESS_PID)
    created = attributes.get(k.PROCESS_CREATION_TIME)
    host_name = name_of(host, limits) if host is not None and host != "" else None
    pid_number = pid if isinstance(pid, int) and not isinstance(pid, bool) else None
    if instance is not None and instance != "":
        instance_id = name_of(instance, limits)
    elif host_name is not None or pid_number is not None:
        instance_id = f"{host_name or '?'}:{pid_number if pid_number is not None else '?'}"
    else:
        instance_id = ""
    service_name = name_of(service, limits) if service else k.UNKNOWN_SERVICE
    size = _RESOURCE_BYTES + _getsizeof(service_name) + _getsizeof(instance_id)
    created_at = name_of(created, limits) if isinstance(created, str) and created else None
    size += _getsizeof(host_name) + _getsizeof(pid_number) + _getsizeof(created_at)
    return ResourceInfo(service_name, instance_id, host_name, pid_number, created_at, size)


# -- signals ---------------------------------------------------------------------------


def _scoped(
    groups: Any, scopes: str, items: str, limits: Limits, reads: Reads
) -> Iterator[tuple[ResourceInfo, str, int, Any]]:
    """Each scope's items of a request, with their resource, scope name and the bytes
    those two cost (counted in each item holding them): one walk for spans and records."""
    for group in groups:
        resource = _resource(group.resource, limits, reads)
        for scoped in getattr(group, scopes):
            scope = name_of(scoped.scope.name, limits)
            yield resource, scope, resource.size + _getsizeof(scope), getattr(scoped, items)


_EVENTS_READ: Final = 16  # a failed span's events looked at for its exception
_EXCEPTION_KEYS: Final = ("exception.type", "exception.message")


def _exception_of(events: Any) -> str:
    """Why a failed span failed, when its status says nothing: its ``exception``
    event's type and message (the OpenTelemetry convention; pydantic-ai's failed tool
    calls say it only there). Only the first events, and only two string attributes
    of one, are read: the rest of a hostile span's events cost nothing."""
    for event in events[:_EVENTS_READ]:
        if event.name != "exception":
            continue
        found = dict.fromkeys(_EXCEPTION_KEYS, "")
        for attribute in event.attributes[:64]:
            if attribute.key in found and attribute.value.HasField("string_value"):
                found[attribute.key] = attribute.value.string_value
        kind, text = found.values()
        return f"{kind}: {text}" if kind and text else kind or text
    return ""


def _spans(request: Any, limits: Limits, reads: Reads) -> Batch:
    spans: list[ReceivedSpan] = []
    rejected = 0
    total = 0
    scoped = _scoped(request.resource_spans, "scope_spans", "spans", limits, reads)
    for resource, scope, shared, found in scoped:
        for span in found:
            trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
            if (
                len(trace_id) != 16
                or len(span_id) != 8
                or len(parent) not in (0, 8)
                or not any(trace_id)
                or not any(span_id)
            ):
                rejected += 1
                continue
            attributes, dropped, size = attributes_of(span.attributes, limits, reads)
            name = name_of(span.name, limits)
            status = span.status
            start, end = span.start_time_unix_nano, span.end_time_unix_nano
            message = status.message
            if not message and status.code == 2:  # a failed span that says why in an event
                message = _exception_of(span.events)
            message = cut_middle(message, limits.max_value)
            size += _SPAN_BYTES + shared + _getsizeof(name) + _getsizeof(message)
            total += size
            spans.append(
                ReceivedSpan(
                    resource=resource,
                    scope=scope,
                    trace_id=trace_id.hex(),
                    span_id=span_id.hex(),
                    parent_id=parent.hex() if any(parent) else None,
                    name=name,
                    kind=_KINDS[span.kind] if 0 <= span.kind < len(_KINDS) else "unspecified",
                    start_ns=start,
                    end_ns=max(end, start),
                    status=_STATUS[status.code] if 0 <= status.code < 3 else "unset",
                    status_message=message,
                    attributes=attributes,
                    dropped_attributes=dropped + span.dropped_attributes_count,
                    size=size,
                )
            )
    reason = "trace ids must be 16 bytes and span ids 8, not all zero" if rejected else ""
    return Batch("traces", spans=tuple(spans), rejected=rejected, reason=reason, size=total)


def _records(request: Any, limits: Limits, reads: Reads) -> Batch:
    records: list[ReceivedRecord] = []
    rejected = 0
    total = 0
    scoped = _scoped(request.resource_logs, "scope_logs", "log_records", limits, reads)
    for resource, scope, shared, found in scoped:
        for record in found:
            trace_id, span_id = record.trace_id, record.span_id
            if len(trace_id) not in (0, 16) or len(span_id) not in (0, 8):
                rejected += 1
                continue
            attributes, dropped, size = attributes_of(record.attributes, limits, reads)
            event_name = name_of(record.event_name or attributes.get(k.EVENT_NAME, ""), limits)
            value = value_of(record.body, limits, reads) if record.HasField("body") else None
            body = None if value is None else str(value)
            severity = record.severity_number
            size += _RECORD_BYTES + shared + _getsizeof(event_name) + _getsizeof(body)
            total += size
            records.append(
                ReceivedRecord(
                    resource=resource,
                    scope=scope,
                    event_name=event_name,
                    time_ns=record.time_unix_nano or record.observed_time_unix_nano,
                    severity=_SEVERITY[(severity + 3) // 4] if 0 < severity <= 24 else "",
                    body=body,
                    trace_id=trace_id.hex() if any(trace_id) else None,
                    span_id=span_id.hex() if any(span_id) else None,
                    attributes=attributes,
                    dropped_attributes=dropped + record.dropped_attributes_count,
                    size=size,
                )
            )
    reason = "trace ids must be empty or 16 bytes, span ids empty or 8" if rejected else ""
    return Batch("logs", records=tuple(records), rejected=rejected, reason=reason, size=total)


def _metrics(request: Any, limits: Limits, reads: Reads) -> Batch:
    """Metrics are accepted and counted per service (they show a process is alive);
    the dashboard takes its live numbers from the records instead."""
    points: list[tuple[ResourceInfo, int]] = []
    for resource_metrics in request.resource_metrics:
        count = 0
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                if data:
                    count += len(getattr(metric, data).data_points)
        points.append((_resource(resource_metrics.resource, limits, reads), count))
    size = sum(400 + resource.size for resource, _ in points)
    return Batch("metrics", points=tuple(points), size=size)


_BUILDERS: Final = {"traces": _spans, "logs": _records, "metrics": _metrics}
