"""Hostile and broken input, through the real HTTP and gRPC paths: each kind is
answered with the right OTLP status, counted, never stored unbounded, and the
receiver keeps serving afterwards. Nothing received is ever run or parsed as markup.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import grpc
import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Limits, Receiver

PROTOBUF = "application/x-protobuf"
TRANSPORTS = ["grpc", "http"]
TRACE_ID = bytes(range(1, 17))
SERVICES = {
    "traces": (trace_service_pb2, "TraceService", trace_service_pb2.ExportTraceServiceResponse),
    "logs": (logs_service_pb2, "LogsService", logs_service_pb2.ExportLogsServiceResponse),
    "metrics": (
        metrics_service_pb2,
        "MetricsService",
        metrics_service_pb2.ExportMetricsServiceResponse,
    ),
}


@dataclass
class Answer:
    ok: bool
    status: str  # the HTTP status code, or the gRPC status code's name
    message: bytes  # the body (HTTP) or the details (gRPC)
    response: Any = None  # the decoded OTLP response when ok


class Raw:
    """Sends arbitrary bytes as an OTLP export, over HTTP or gRPC."""

    def __init__(self, receiver: Receiver, session: aiohttp.ClientSession) -> None:
        self.receiver = receiver
        self.session = session
        self.channel = grpc.aio.insecure_channel(receiver.grpc_endpoint)

    async def send(self, transport: str, body: bytes, signal: str = "traces") -> Answer:
        if transport == "grpc":
            return await self.grpc(body, signal)
        return await self.http(body, signal)

    async def http(
        self,
        body: bytes,
        signal: str = "traces",
        content_type: str = PROTOBUF,
        encoding: str | None = None,
    ) -> Answer:
        headers = {"Content-Type": content_type}
        if encoding is not None:
            headers["Content-Encoding"] = encoding
        url = f"{self.receiver.http_endpoint}/v1/{signal}"
        data: Any = io.BytesIO(body) if len(body) > 1_000_000 else body
        async with self.session.post(url, data=data, headers=headers) as reply:
            data = await reply.read()
            response = None
            if reply.status == 200 and content_type == PROTOBUF:
                response = SERVICES[signal][2].FromString(data)
            return Answer(reply.status == 200, str(reply.status), data, response)

    async def grpc(self, body: bytes, signal: str = "traces") -> Answer:
        module, service, response_type = SERVICES[signal]
        name = module.DESCRIPTOR.services_by_name[service].full_name
        call = self.channel.unary_unary(
            f"/{name}/Export", response_deserializer=response_type.FromString
        )
        try:
            response = await call(body, timeout=10)
        except grpc.aio.AioRpcError as error:
            return Answer(False, error.code().name, (error.details() or "").encode())
        return Answer(True, "OK", b"", response)


@pytest.fixture
async def raw(receiver: Receiver) -> AsyncIterator[Raw]:
    # One connection per request: a server may close a connection after refusing a
    # request (aiohttp 3.8 does after a 413), and a hostile sender reuses nothing.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        sender = Raw(receiver, session)
        yield sender
        await sender.channel.close()


def request(*spans: Span, resource: dict[str, str] | None = None) -> bytes:
    message = trace_service_pb2.ExportTraceServiceRequest()
    group = message.resource_spans.add()
    for key, value in (resource or {"service.name": "hostile"}).items():
        group.resource.attributes.add(key=key, value=AnyValue(string_value=value))
    group.scope_spans.add().spans.extend(spans)
    return message.SerializeToString()


def span(name: str = "op", span_id: int = 1, **attributes: AnyValue) -> Span:
    return Span(
        trace_id=TRACE_ID,
        span_id=span_id.to_bytes(8, "big"),
        name=name,
        start_time_unix_nano=1_000,
        end_time_unix_nano=2_000,
        attributes=[KeyValue(key=k, value=v) for k, v in attributes.items()],
    )


def text(value: str) -> AnyValue:
    return AnyValue(string_value=value)


def nested(depth: int) -> AnyValue:
    """Arrays in key-value lists in arrays..., ``depth`` levels (twice as many
    protobuf messages)."""
    value = text("leaf")
    for level in range(depth):
        if level % 2:
            value = AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key="k", value=value)]))
        else:
            value = AnyValue(array_value=ArrayValue(values=[value]))
    return value


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field, written by hand."""
    size, length = bytearray(), len(payload)
    while True:
        size.append((length & 0x7F) | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            break
    return bytes([number << 3 | 2]) + bytes(size) + payload


def too_deep_request(depth: int) -> bytes:
    """A request whose one attribute nests ``depth`` arrays: beyond what protobuf's
    own classes will build, so it is written by hand (AnyValue.array_value = 5,
    ArrayValue.values = 1, Span.attributes = 9; request, resource and scope spans
    nest their children in fields 1, 2 and 2)."""
    value = _field(1, b"leaf")
    for _ in range(depth):
        value = _field(5, _field(1, value))
    attribute = _field(1, b"deep") + _field(2, value)
    one_span = span().SerializeToString() + _field(9, attribute)
    return _field(1, _field(2, _field(2, one_span)))


def stored(fleet: FleetModel) -> Any:
    fleet.store.drain()
    spans = fleet.traces.spans(TRACE_ID.hex())
    assert len(spans) == 1, spans
    return spans[0]


FAILED = {"grpc": "INVALID_ARGUMENT", "http": "400"}
TOO_LARGE = {"grpc": "INVALID_ARGUMENT", "http": "413"}  # gRPC: not to be retried


# -- undecodable bytes --------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("signal", ["traces", "logs", "metrics"])
async def test_garbage_bytes_are_refused_as_invalid_and_counted(
    raw: Raw, fleet: FleetModel, transport: str, signal: str
) -> None:
    answer = await raw.send(transport, b"\xff\xff\xff\x0f not protobuf at all", signal)

    assert answer.status == FAILED[transport]
    assert b"not a valid protobuf" in answer.message
    assert fleet.store.counters()["malformed"] == 1
    assert fleet.last_rejection is not None
    assert signal in fleet.last_rejection
    fleet.store.drain()
    assert fleet.store.services == {}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_invalid_utf8_in_a_string_field_is_refused_as_invalid(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    body = request(span("XXXXXXXX")).replace(b"XXXXXXXX", b"\xff\xfe\xfd\xfc\xc3\x28\xa0\xa1")

    answer = await raw.send(transport, body)

    assert answer.status == FAILED[transport]
    assert fleet.store.counters()["malformed"] == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_values_nested_beyond_the_protobuf_limit_are_refused(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    answer = await raw.send(transport, too_deep_request(300))

    assert answer.status == FAILED[transport]
    assert fleet.store.counters()["malformed"] == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_deeply_nested_values_are_kept_as_short_text(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    answer = await raw.send(transport, request(span(deep=nested(30))))

    assert answer.ok
    value = stored(fleet).attributes["deep"]
    assert isinstance(value, str)
    assert len(value) <= Limits().max_value
    assert "[…]" in value or "{…}" in value


# -- sizes --------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_ten_megabyte_string_is_refused_as_too_large(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    body = request(span(huge=text("x" * 10_000_000)))

    answer = await raw.send(transport, body)

    assert answer.status == TOO_LARGE[transport]
    assert b"-byte limit" in answer.message
    assert fleet.store.counters()["too_large"] == 1
    assert "malformed" not in fleet.store.counters()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_millions_of_empty_items_in_a_small_request_are_refused_before_decoding(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    empty_span = _field(2, b"")  # ScopeSpans.spans = 2, an empty Span
    body = _field(1, _field(2, empty_span * 1_000_000))

    answer = await raw.send(transport, body)

    assert answer.status == TOO_LARGE[transport]
    assert b"export smaller batches" in answer.message
    assert fleet.store.counters()["too_large"] == 1
    assert "rejected" not in fleet.store.counters()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_under_a_raised_limit_a_ten_megabyte_string_is_stored_cut_to_its_bound(
    fleet: FleetModel, transport: str
) -> None:
    limits = Limits(max_message_bytes=16 * 1024 * 1024)
    async with (
        Receiver(fleet, grpc_port=0, http_port=0, limits=limits) as receiver,
        aiohttp.ClientSession() as session,
    ):
        raw = Raw(receiver, session)
        huge = "head" + "x" * 10_000_000 + "tail"
        answer = await raw.send(transport, request(span(huge=text(huge))))
        await raw.channel.close()

    assert answer.ok
    value = stored(fleet).attributes["huge"]
    assert len(value) == limits.max_value
    assert value.startswith("headxxx")
    assert value.endswith("xxxtail")
    assert "…" in value


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_thousands_of_attributes_are_kept_to_their_bound_and_the_rest_counted(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    many = {f"key.{i}": text("v" * 1000) for i in range(3000)}
    long_key = "k" * 5000

    answer = await raw.send(transport, request(span(**{long_key: text("x")}, **many)))

    assert answer.ok
    kept = stored(fleet)
    assert len(kept.attributes) == Limits().max_attributes
    assert kept.dropped_attributes == 3001 - Limits().max_attributes
    assert all(len(key) <= Limits().max_name for key in kept.attributes)


# -- content that looks like something else ---------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_markup_like_text_is_stored_verbatim_as_data(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    name = "[bold]turn[/bold] [/x] [link=file:///etc/passwd]x[/link]"
    resource = {"service.name": "[red]svc[/]", "service.instance.id": "[i]"}
    answer = await raw.send(
        transport, request(span(name, **{"gen_ai.agent.name": text("[blink]a")}), resource=resource)
    )

    assert answer.ok
    kept = stored(fleet)
    assert kept.name == name
    assert kept.attributes["gen_ai.agent.name"] == "[blink]a"
    assert [s.label for s in fleet.store.service_rows()] == ["[red]svc[/]@[i]"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_spans_with_invalid_ids_are_rejected_as_a_partial_success(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    broken = span("broken", 2)
    broken.trace_id = b"short"
    zero = span("zero", 3)
    zero.span_id = bytes(8)

    answer = await raw.send(transport, request(span("fine"), broken, zero))

    assert answer.ok
    partial = answer.response.partial_success
    assert partial.rejected_spans == 2
    assert "16 bytes" in partial.error_message
    assert stored(fleet).name == "fine"
    assert fleet.store.counters()["rejected"] == 2


# -- HTTP only ----------------------------------------------------------------------------


async def test_http_refuses_other_content_types_and_encodings(raw: Raw, fleet: FleetModel) -> None:
    body = request(span())
    assert (await raw.http(body, content_type="text/plain")).status == "415"
    assert (await raw.http(body, encoding="br")).status == "415"
    assert fleet.store.counters()["unsupported"] == 2
    async with raw.session.get(f"{raw.receiver.http_endpoint}/v1/traces") as reply:
        assert reply.status == 405
    async with raw.session.post(f"{raw.receiver.http_endpoint}/v1/spans", data=body) as reply:
        assert reply.status == 404


async def test_http_inflates_gzip_within_the_limit_only(raw: Raw, fleet: FleetModel) -> None:
    bomb = gzip.compress(b"\0" * (Limits().max_message_bytes + 1))
    assert len(bomb) < 10_000

    assert (await raw.http(bomb, encoding="gzip")).status == "413"
    assert (await raw.http(b"\x1f\x8b not gzip", encoding="gzip")).status == "400"
    assert (await raw.http(gzip.compress(request(span()))[:-8], encoding="gzip")).status == "400"
    assert (await raw.http(gzip.compress(request(span())), encoding="gzip")).ok
    assert fleet.store.counters()["too_large"] == 1
    assert fleet.store.counters()["malformed"] == 2


async def test_http_refuses_an_oversized_body_before_reading_it_all(
    raw: Raw, fleet: FleetModel
) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: streamed
        for _ in range(80):
            yield b"\0" * 65536

    url = f"{raw.receiver.http_endpoint}/v1/logs"
    async with raw.session.post(url, data=chunks(), headers={"Content-Type": PROTOBUF}) as reply:
        assert reply.status == 413
    assert fleet.store.counters()["too_large"] == 1


async def test_otlp_json_with_hex_ids_is_accepted_and_answered_in_json(
    raw: Raw, fleet: FleetModel
) -> None:
    document = {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "js"}}]
                },
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "1700000000000000000",
                                "eventName": "pygents.agent.snapshot",
                                "traceId": TRACE_ID.hex(),
                                "spanId": "0102030405060708",
                                "attributes": [
                                    {"key": "gen_ai.agent.name", "value": {"stringValue": "web"}},
                                    {
                                        "key": "pygents.agent.state",
                                        "value": {"stringValue": "paused"},
                                    },
                                    {
                                        "key": "pygents.agent.queue.depth",
                                        "value": {"intValue": "4"},
                                    },
                                ],
                                "unknownField": {"ignored": True},
                            }
                        ]
                    }
                ],
            }
        ]
    }
    body = json.dumps(document).encode()

    answer = await raw.http(body, "logs", content_type="application/json")

    assert answer.ok
    assert json.loads(answer.message) == {}
    fleet.store.drain()
    (row,) = fleet.store.agent_rows()
    assert (row.label, row.state, row.queue_depth) == ("js/web", "paused", 4)


async def test_broken_otlp_json_is_refused_as_invalid(raw: Raw, fleet: FleetModel) -> None:
    bad_hex = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}
    wrong_shape = {"resourceSpans": 5}
    too_deep = "[" * 100_000 + "]" * 100_000
    for body in (json.dumps(bad_hex), json.dumps(wrong_shape), too_deep, "{", "\udcff"):
        answer = await raw.http(
            body.encode("utf-8", "surrogateescape"), content_type="application/json"
        )
        assert answer.status == "400", body[:40]
        assert json.loads(answer.message)["code"] == 3
    assert fleet.store.counters()["malformed"] == 5


# -- metrics, and still serving ----------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_after_all_that_the_receiver_still_serves(
    raw: Raw, fleet: FleetModel, transport: str
) -> None:
    for body in (b"\x00\xff", request(span(huge=text("x" * 5_000_000))), request(span())):
        await raw.send(transport, body)

    assert (await raw.send(transport, request(span("alive", 9)))).ok
    fleet.store.drain()
    assert {s.name for s in fleet.traces.spans(TRACE_ID.hex())} == {"op", "alive"}
