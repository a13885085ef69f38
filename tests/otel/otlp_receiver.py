"""A small, real OTLP receiver for tests: OTLP/HTTP (protobuf) and OTLP/gRPC on loopback.

Both receivers decode the wire bytes with the generated ``opentelemetry-proto``
classes, keep every span and metric they carry, and let a test *wait* (on a
``threading.Condition``, no polling) until the spans or metrics it expects have
arrived::

    with OTLPHttpReceiver() as receiver:
        exporter = OTLPSpanExporter(endpoint=receiver.traces_url)
        ...
        spans = receiver.wait_for_spans(lambda spans: len(spans) >= 3)

Both bind ``127.0.0.1`` on a free port and shut down cleanly when the ``with``
block ends. Import it from a test module in this directory as
``from otlp_receiver import ...`` (pytest puts the test file's directory on
``sys.path``).
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = [
    "OTLPGrpcReceiver",
    "OTLPHttpReceiver",
    "ReceivedEvent",
    "ReceivedLink",
    "ReceivedMetric",
    "ReceivedPoint",
    "ReceivedSpan",
    "decode_attributes",
    "decode_value",
]

ExportTraceServiceRequest = trace_service_pb2.ExportTraceServiceRequest
ExportTraceServiceResponse = trace_service_pb2.ExportTraceServiceResponse
ExportMetricsServiceRequest = metrics_service_pb2.ExportMetricsServiceRequest
ExportMetricsServiceResponse = metrics_service_pb2.ExportMetricsServiceResponse

PROTOBUF = "application/x-protobuf"


# -- decoded views -------------------------------------------------------------------------


def decode_value(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as the Python value it carries."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [decode_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return decode_attributes(value.kvlist_value.values)
    return getattr(value, kind)


def decode_attributes(attributes: Iterable[KeyValue]) -> dict[str, Any]:
    """OTLP ``KeyValue`` attributes as a plain dict."""
    return {kv.key: decode_value(kv.value) for kv in attributes}


@dataclass(frozen=True)
class ReceivedEvent:
    name: str
    attributes: dict[str, Any]
    time_unix_nano: int


@dataclass(frozen=True)
class ReceivedLink:
    trace_id: str  # 32 lowercase hex digits, as in ``traceparent``
    span_id: str  # 16 lowercase hex digits
    attributes: dict[str, Any]


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived on the wire, with ids as lowercase hex strings."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str  # "" for a root span
    kind: int  # Span.SpanKind value, e.g. Span.SPAN_KIND_INTERNAL
    status_code: int  # Status.StatusCode value
    status_message: str
    attributes: dict[str, Any]
    events: list[ReceivedEvent]
    links: list[ReceivedLink]
    start_time_unix_nano: int
    end_time_unix_nano: int
    resource: dict[str, Any]
    scope_name: str
    scope_version: str
    schema_url: str
    proto: Span = field(repr=False, compare=False)

    def event_names(self) -> list[str]:
        return [event.name for event in self.events]


@dataclass(frozen=True)
class ReceivedPoint:
    """One data point: ``value`` for sums and gauges; count/sum/buckets for histograms."""

    attributes: dict[str, Any]
    value: float | int | None = None
    count: int | None = None
    sum: float | None = None
    bucket_counts: tuple[int, ...] = ()
    explicit_bounds: tuple[float, ...] = ()


@dataclass(frozen=True)
class ReceivedMetric:
    name: str
    unit: str
    description: str
    data: str  # "sum", "gauge", "histogram", ...
    points: list[ReceivedPoint]
    resource: dict[str, Any]
    scope_name: str
    proto: Metric = field(repr=False, compare=False)


def _walk(request: Any, items: str) -> Iterator[tuple[dict[str, Any], Any, Any]]:
    """Each span or metric (``items``) of a request, with its resource and scope entry.

    OTLP nests both the same way: per resource, per instrumentation scope, the items.
    """
    for per_resource in getattr(request, f"resource_{items}"):
        resource = decode_attributes(per_resource.resource.attributes)
        for per_scope in getattr(per_resource, f"scope_{items}"):
            for item in getattr(per_scope, items):
                yield resource, per_scope, item


def _spans_of(request: Any) -> list[ReceivedSpan]:
    return [
        ReceivedSpan(
            name=span.name,
            trace_id=span.trace_id.hex(),
            span_id=span.span_id.hex(),
            parent_span_id=span.parent_span_id.hex(),
            kind=span.kind,
            status_code=span.status.code,
            status_message=span.status.message,
            attributes=decode_attributes(span.attributes),
            events=[
                ReceivedEvent(e.name, decode_attributes(e.attributes), e.time_unix_nano)
                for e in span.events
            ],
            links=[
                ReceivedLink(
                    link.trace_id.hex(), link.span_id.hex(), decode_attributes(link.attributes)
                )
                for link in span.links
            ],
            start_time_unix_nano=span.start_time_unix_nano,
            end_time_unix_nano=span.end_time_unix_nano,
            resource=resource,
            scope_name=scope_spans.scope.name,
            scope_version=scope_spans.scope.version,
            schema_url=scope_spans.schema_url,
            proto=span,
        )
        for resource, scope_spans, span in _walk(request, "spans")
    ]


def _point(point: Any, histogram: bool) -> ReceivedPoint:
    attributes = decode_attributes(point.attributes)
    if histogram:
        return ReceivedPoint(
            attributes,
            count=point.count,
            sum=point.sum,
            bucket_counts=tuple(point.bucket_counts),
            explicit_bounds=tuple(point.explicit_bounds),
        )
    kind = point.WhichOneof("value")
    return ReceivedPoint(attributes, value=getattr(point, kind) if kind else None)


def _metrics_of(request: Any) -> list[ReceivedMetric]:
    found: list[ReceivedMetric] = []
    for resource, scope_metrics, metric in _walk(request, "metrics"):
        data = metric.WhichOneof("data") or ""
        points = getattr(metric, data).data_points if data else []
        found.append(
            ReceivedMetric(
                name=metric.name,
                unit=metric.unit,
                description=metric.description,
                data=data,
                points=[_point(p, data == "histogram") for p in points],
                resource=resource,
                scope_name=scope_metrics.scope.name,
                proto=metric,
            )
        )
    return found


_DECODERS: dict[str, Callable[[Any], list[Any]]] = {"traces": _spans_of, "metrics": _metrics_of}


# -- collection ----------------------------------------------------------------------------


class _Collector:
    """The thread-safe store both receivers share, and their ``with`` block.

    Traces and metrics are kept the same way, under the signal's name: the spans or
    metrics decoded from every request, in arrival order.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._received: dict[str, list[Any]] = {signal: [] for signal in _DECODERS}

    def _add(self, signal: str, request: Any) -> None:
        decoded = _DECODERS[signal](request)
        with self._changed:
            self._received[signal].extend(decoded)
            self._changed.notify_all()

    def _copy(self, items: list[Any]) -> list[Any]:
        with self._changed:
            return list(items)

    @property
    def spans(self) -> list[ReceivedSpan]:
        return self._copy(self._received["traces"])

    @property
    def metrics(self) -> list[ReceivedMetric]:
        return self._copy(self._received["metrics"])

    def _wait(
        self, signal: str, predicate: Callable[[list[Any]], bool], timeout: float
    ) -> list[Any]:
        received = self._received[signal]
        with self._changed:
            if self._changed.wait_for(lambda: predicate(list(received)), timeout):
                return list(received)
            names = sorted(item.name for item in received)
        raise AssertionError(f"expected {signal} did not arrive within {timeout}s; got {names}")

    def wait_for_spans(
        self, predicate: Callable[[list[ReceivedSpan]], bool], timeout: float = 10.0
    ) -> list[ReceivedSpan]:
        """Block until ``predicate(all spans received so far)`` holds; return those spans.

        ``AssertionError`` (listing what did arrive) if it does not hold within ``timeout``.
        """
        return self._wait("traces", predicate, timeout)

    def wait_for_metrics(
        self, predicate: Callable[[list[ReceivedMetric]], bool], timeout: float = 10.0
    ) -> list[ReceivedMetric]:
        """Block until ``predicate(all metrics received so far)`` holds; return them."""
        return self._wait("metrics", predicate, timeout)

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def span_names(spans: Sequence[ReceivedSpan]) -> set[str]:
    return {span.name for span in spans}


# -- OTLP/HTTP -----------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _HttpServer

    def do_POST(self) -> None:
        routes = {
            "/v1/traces": ("traces", ExportTraceServiceRequest, ExportTraceServiceResponse),
            "/v1/metrics": ("metrics", ExportMetricsServiceRequest, ExportMetricsServiceResponse),
        }
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if path not in routes:
            self._reply(404, b"", "text/plain")
            return
        content_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip()
        if content_type != PROTOBUF:
            self._reply(415, f"expected {PROTOBUF}".encode(), "text/plain")
            return
        encoding = (self.headers.get("Content-Encoding") or "").strip().lower()
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        signal, request_type, response_type = routes[path]
        try:
            request = request_type.FromString(body)
        except Exception:  # a malformed body is the client's error
            self._reply(400, b"malformed protobuf", "text/plain")
            return
        receiver = self.server.receiver
        with receiver._changed:
            receiver.http_requests.append((path, content_type, encoding))
        receiver._add(signal, request)
        self._reply(200, response_type().SerializeToString(), PROTOBUF)

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, receiver: OTLPHttpReceiver) -> None:
        self.receiver = receiver
        super().__init__(("127.0.0.1", 0), _Handler)


class OTLPHttpReceiver(_Collector):
    """OTLP/HTTP with protobuf bodies: ``POST /v1/traces`` and ``POST /v1/metrics``."""

    def __init__(self) -> None:
        super().__init__()
        self.http_requests: list[tuple[str, str, str]] = []  # (path, content type, encoding)
        self._server: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the receiver is not running"
        return int(self._server.server_address[1])

    @property
    def endpoint(self) -> str:
        """The base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes it."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def traces_url(self) -> str:
        return f"{self.endpoint}/v1/traces"

    @property
    def metrics_url(self) -> str:
        return f"{self.endpoint}/v1/metrics"

    def start(self) -> Self:
        self._server = _HttpServer(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="otlp-http-receiver",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        assert self._thread is not None
        self._thread.join(timeout=5)
        self._server = None
        self._thread = None


# -- OTLP/gRPC -----------------------------------------------------------------------------


class _Service:
    """Either gRPC service: ``Export`` keeps the request and answers with an empty response.

    The generated ``add_*Servicer_to_server`` functions only look ``Export`` up, so one
    class serves the trace and the metrics service.
    """

    def __init__(self, receiver: _Collector, signal: str, response: Callable[[], Any]) -> None:
        self.receiver, self.signal, self.response = receiver, signal, response

    def Export(self, request: Any, context: Any) -> Any:
        self.receiver._add(self.signal, request)
        return self.response()


class OTLPGrpcReceiver(_Collector):
    """OTLP/gRPC: the ``TraceService`` and ``MetricsService`` ``Export`` methods."""

    def __init__(self) -> None:
        super().__init__()
        self._server: Any = None
        self._executor: ThreadPoolExecutor | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        assert self._port is not None, "the receiver is not running"
        return self._port

    @property
    def endpoint(self) -> str:
        """``host:port``, as the gRPC exporters take it (with ``insecure=True``)."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="otlp-grpc")
        server = grpc.server(self._executor)
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(
            _Service(self, "traces", ExportTraceServiceResponse), server
        )
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(
            _Service(self, "metrics", ExportMetricsServiceResponse), server
        )
        port = server.add_insecure_port("127.0.0.1:0")
        if not port:
            raise RuntimeError("could not bind a gRPC port on 127.0.0.1")
        server.start()
        self._server, self._port = server, port
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.stop(grace=None).wait(timeout=5)
        assert self._executor is not None
        self._executor.shutdown(wait=True)
        self._server = None
        self._executor = None
