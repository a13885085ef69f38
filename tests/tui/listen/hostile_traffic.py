"""Hostile OTLP requests and the helpers the receiver-safety tests send them with:
built with the generated protobuf classes, except where a request of millions of
repeats is spliced together from raw fields (building it message by message would
take longer than the test)."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Callable

import aiohttp
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from pygents_tui.listen import Receiver

PROTOBUF = "application/x-protobuf"


def array_of_text(items: int, length: int, tag: str) -> AnyValue:
    return AnyValue(
        array_value=ArrayValue(
            values=[AnyValue(string_value=f"{tag}{n:06d}".ljust(length, "x")) for n in range(items)]
        )
    )


def traces_request(
    spans: list[Span], resource: list[KeyValue] | None = None, service: str = "hostile"
) -> bytes:
    message = trace_service_pb2.ExportTraceServiceRequest()
    group = message.resource_spans.add()
    group.resource.attributes.add(key="service.name", value=AnyValue(string_value=service))
    group.resource.attributes.extend(resource or [])
    group.scope_spans.add().spans.extend(spans)
    return bytes(message.SerializeToString())


def empty_span(number: int, attributes: list[KeyValue] | None = None) -> Span:
    return Span(
        trace_id=number.to_bytes(16, "big"),
        span_id=(number + 1).to_bytes(8, "big"),
        name="",
        attributes=attributes or [],
    )


def raw_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field; a request of two million attributes is
    too slow to build with the generated classes, so its repeats are spliced in."""
    size, length = bytearray(), len(payload)
    while True:
        size.append((length & 0x7F) | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            break
    return bytes([number << 3 | 2]) + bytes(size) + payload


def request_of_spans(raw_spans: list[bytes]) -> bytes:
    """Request > resource spans (1) > scope spans (2) > spans (2)."""
    return raw_field(1, raw_field(2, b"".join(raw_field(2, s) for s in raw_spans)))


EMPTY_ATTRIBUTE = raw_field(9, b"")  # Span.attributes = 9: a KeyValue with key "" and no value


async def post(
    session: aiohttp.ClientSession, receiver: Receiver, body: bytes, *, gzipped: bool = False
) -> int:
    headers = {"Content-Type": PROTOBUF}
    if gzipped:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    url = f"{receiver.http_endpoint}/v1/traces"
    async with session.post(url, data=body, headers=headers) as reply:
        await reply.read()
        return reply.status


async def eventually(check: Callable[[], object], *, within: float = 10.0) -> None:
    """Wait for ``check()`` to hold, polling (what it watches has no event to wait
    on); a TimeoutError past ``within`` seconds."""
    async with asyncio.timeout(within):
        while True:
            if check():
                return
            await asyncio.sleep(0.005)


def export_one_span(endpoint: str) -> tuple[SpanExportResult, str]:
    """One span through the real OTLP/gRPC exporter, retries and all (blocking): the
    export's result, and the span's trace id."""
    tracer = TracerProvider(resource=Resource.create({"service.name": "real"})).get_tracer("t")
    span = tracer.start_span("after the stall")
    span.end()
    exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True, timeout=15)
    try:
        result = exporter.export([span])  # type: ignore[list-item]  # an SDK span is readable
    finally:
        exporter.shutdown()
    return result, format(span.get_span_context().trace_id, "032x")
