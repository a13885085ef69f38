"""The receiver's starvation paths: a peer whose calls never send their message, and
an OTLP/JSON body that is slow to decode, must not keep other senders out.

Real traffic (aiohttp, grpcio, the OTel exporter) to a real receiver on 127.0.0.1;
what is asserted is who got through while the attack was still under way (the order
of events), never how long anything took.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import os
import signal
from collections.abc import AsyncIterator

import aiohttp
import grpc
import pytest
from hostile_traffic import PROTOBUF, empty_span, eventually, export_one_span, post, traces_request
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.trace.export import SpanExportResult

from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Batch, Limits, Receiver

JSON = "application/json"

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
# Its own connection: channels to one target otherwise share gRPC's global pool of
# connections, and the attacker would be the same peer as the sender it attacks.
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        yield session


async def test_twenty_stalled_grpc_calls_from_one_peer_do_not_keep_other_senders_out(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """The calls are opened and never send their message, and stay open (a long
    receive timeout): meanwhile an HTTP export and a real gRPC exporter, each on its
    own connection, get through. The stalled peer holds only its share of calls, the
    rest refused at once, and those it holds are still open when the others are
    done (closing the channel cancels them: the receiver had not ended them)."""
    limits = Limits(receive_timeout=60.0)
    async with Receiver(fleet, grpc_port=0, http_port=0, limits=limits) as receiver:
        channel = grpc.aio.insecure_channel(str(receiver.grpc_endpoint), options=OWN_CONNECTION)
        try:
            opener = channel.stream_unary(TRACE_EXPORT)
            stalled = [opener() for _ in range(20)]
            await asyncio.wait_for(asyncio.gather(*(c.wait_for_connection() for c in stalled)), 10)

            http_status = await post(http, receiver, traces_request([empty_span(3)]))
            result, trace_id = await asyncio.wait_for(
                asyncio.to_thread(export_one_span, str(receiver.grpc_endpoint)), 60
            )
            refused = 20 - limits.max_calls_per_connection
            # The refusals' answers, all on their way by now, have arrived.
            await eventually(lambda: sum(call.done() for call in stalled) >= refused)
        finally:
            await channel.close()
        codes = [await call.code() for call in stalled]

    assert http_status == 200
    assert result is SpanExportResult.SUCCESS
    held = limits.max_calls_per_connection
    assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 20 - held
    assert codes.count(grpc.StatusCode.CANCELLED) == held, codes
    assert fleet.store.counts["refused"] == 20 - held
    assert "calls open on this connection" in (fleet.last_rejection or "")
    fleet.store.drain()
    assert [span.name for span in fleet.traces.spans(trace_id)] == ["after the stall"]


# -- OTLP/JSON: decoded off the event loop, charged before it is parsed -------------------------


def heavy_json_body(spans: int, attributes: int = 8) -> bytes:
    """An OTLP/JSON traces request within every per-request limit that still takes
    about a second to parse: json_format is pure Python."""
    document = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "heavy"}}]
                },
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": f"{n:032x}",
                                "spanId": f"{n:016x}",
                                "name": "x" * 100,
                                "attributes": [
                                    {"key": f"k{i}", "value": {"stringValue": "v" * 20}}
                                    for i in range(attributes)
                                ],
                            }
                            for n in range(1, spans + 1)
                        ]
                    }
                ],
            }
        ]
    }
    return json.dumps(document).encode()


def logs_request() -> bytes:
    message = logs_service_pb2.ExportLogsServiceRequest()
    group = message.resource_logs.add()
    group.resource.attributes.add(key="service.name", value=AnyValue(string_value="small"))
    group.scope_logs.add().log_records.add(event_name="pygents.process.heartbeat")
    return bytes(message.SerializeToString())


class InOrder:
    """A sink in front of the fleet model that notes the order requests arrive in."""

    def __init__(self, fleet: FleetModel) -> None:
        self.fleet = fleet
        self.ingested: list[str] = []

    def ingest(self, batch: Batch) -> None:
        self.ingested.append(batch.signal)
        self.fleet.ingest(batch)

    def reject(self, signal: str, kind: str, reason: str) -> None:
        self.fleet.reject(signal, kind, reason)


async def test_a_small_export_is_accepted_while_a_large_json_body_is_still_being_decoded(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """The large body has been received and handed to the decoder (it is counted
    then) before the small one is sent; the small one is nonetheless decoded and
    ingested first. On the event loop, the large one would block everything until
    it was done."""
    sink = InOrder(fleet)
    body = heavy_json_body(5_000)
    async with Receiver(sink, grpc_port=None, http_port=0) as receiver:
        url = f"{receiver.http_endpoint}/v1/traces"

        async def large() -> int:
            data = io.BytesIO(body)  # raw bytes this large, aiohttp warns of
            async with http.post(url, data=data, headers={"Content-Type": JSON}) as reply:
                await reply.read()
                return reply.status

        sending = asyncio.create_task(large())
        await eventually(lambda: receiver.requests["http traces"] or sending.done(), within=30)
        small = logs_request()
        async with http.post(
            f"{receiver.http_endpoint}/v1/logs", data=small, headers={"Content-Type": PROTOBUF}
        ) as reply:
            small_status = reply.status
        order_then = list(sink.ingested)
        large_status = await asyncio.wait_for(sending, 60)

    assert small_status == 200
    assert large_status == 200
    assert order_then == ["logs"], "the small export waited for the large one's decoding"
    assert sink.ingested == ["logs", "traces"]
    fleet.store.drain()
    assert fleet.store.counters()["spans"] == 5_000


async def test_a_gzipped_body_that_inflates_past_the_room_left_is_refused_before_it_is_parsed(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """A stalled upload of unknown size holds the largest body allowed; a small
    gzipped JSON body fits as sent, but not once inflated: it is refused busy (503,
    retried by exporters) and never parsed."""
    go_on = asyncio.Event()
    limit = 1024 * 1024
    limits = Limits(max_message_bytes=limit, max_in_flight_bytes=limit + limit // 2)
    inflated = heavy_json_body(2_000, attributes=2)
    assert limit // 2 < len(inflated) < limit
    packed = gzip.compress(inflated)
    assert len(packed) < limit // 8

    async def stalls() -> AsyncIterator[bytes]:
        yield b"\x0a"
        await go_on.wait()

    async with Receiver(fleet, grpc_port=None, http_port=0, limits=limits) as receiver:
        url = f"{receiver.http_endpoint}/v1/traces"
        headers = {"Content-Type": PROTOBUF}
        stalled = asyncio.create_task(http.post(url, data=stalls(), headers=headers))
        try:
            await eventually(lambda: receiver.in_flight_bytes >= limit)  # the stall admitted
            gzipped = {"Content-Type": JSON, "Content-Encoding": "gzip"}
            async with http.post(url, data=packed, headers=gzipped) as reply:
                status = reply.status
                answer = await reply.json()
        finally:
            go_on.set()
            stalled.cancel()
            await asyncio.gather(stalled, return_exceptions=True)
        parsed = sum(receiver.requests.values())

    assert status == 503
    assert "bytes of requests are being received" in answer["message"]
    assert parsed == 0, "the body was parsed before the budget was checked"
    assert receiver.values_read == 0
    assert fleet.store.counts["refused"] == 1


async def test_an_otlp_json_body_of_more_values_than_its_budget_is_refused_before_it_is_parsed(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    """300,000 empty spans: under 1 MB, 4 KB gzipped, and seconds of parsing for
    protobuf's pure-Python JSON parser before the item limit could refuse it. The
    walk that counts the document's values refuses it first, and says why."""
    body = b'{"resourceSpans":[{"scopeSpans":[{"spans":[' + b",".join([b"{}"] * 300_000)
    body += b"]}]}]}"
    headers = {"Content-Type": JSON, "Content-Encoding": "gzip"}
    url = f"{receiver.http_endpoint}/v1/traces"
    async with http.post(url, data=gzip.compress(body), headers=headers) as reply:
        status = reply.status
        answer = await reply.json()

    assert status == 413
    budget = 4 * Limits().max_reads_per_request
    assert answer["message"] == (
        f"more than {budget:,} values in one OTLP/JSON request; export smaller batches"
    )
    assert fleet.store.counts["too_large"] == 1
    assert receiver.values_read == 0
    assert await post(http, receiver, traces_request([empty_span(9)])) == 200


async def test_otlp_json_is_parsed_in_a_process_of_its_own_and_one_killed_is_replaced(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    """The parse runs beside the event loop, not on it or in a thread sharing the
    interpreter with it; a process killed from outside costs no request: the one it
    was to parse is parsed in a thread, and the next starts a new process."""
    url = f"{receiver.http_endpoint}/v1/traces"
    headers = {"Content-Type": JSON}
    statuses = []
    pids = []
    for number in range(3):
        async with http.post(url, data=heavy_json_body(number + 1), headers=headers) as reply:
            statuses.append(reply.status)
        pids.append(receiver.json_process_id)
        if number == 0:
            assert pids[0] is not None
            os.kill(pids[0], signal.SIGKILL)

    assert statuses == [200, 200, 200]
    assert None not in (pids[0], pids[2])
    assert os.getpid() not in pids
    assert pids[2] != pids[0]
    fleet.store.drain()
    assert fleet.store.counters()["spans"] == 1 + 2 + 3
