"""The receiver's decoding lanes: protobuf bodies decoded in processes of their own
(`pygents_tui.listen.offload`), the Batch sent back pickled over a pipe.

Real traffic (aiohttp) to a real receiver on 127.0.0.1, real lane processes, a real
fleet model. What is asserted is what arrived and who decoded it, compared with the
same body decoded in this process; never how long anything took.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Iterable

import aiohttp
import pytest
from hostile_traffic import PROTOBUF, eventually, post, raw_field, request_of_spans
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from otlp_requests import new_id, value

from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.otlp.folding import _by_resource
from pygents_tui.listen import Batch, Limits, Receiver
from pygents_tui.listen.decode import Malformed, decode
from pygents_tui.listen.values import Reads

JSON = "application/json"


class Kept:
    """A sink in front of the fleet model that keeps every batch as it arrived."""

    def __init__(self, fleet: FleetModel) -> None:
        self.fleet = fleet
        self.batches: list[Batch] = []

    def ingest(self, batch: Batch) -> None:
        self.batches.append(batch)
        self.fleet.ingest(batch)

    def reject(self, signal: str, kind: str, reason: str) -> None:
        self.fleet.reject(signal, kind, reason)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        yield session


def spans_request(
    groups: Iterable[tuple[str, list[tuple[str, dict[str, object]]]]],
) -> tuple[bytes, list[tuple[str, str]]]:
    """A traces request of resource groups, (service, [(span name, attributes)]) each,
    every span in a trace of its own: the body, and (trace id, name) per span."""
    message = trace_service_pb2.ExportTraceServiceRequest()
    sent: list[tuple[str, str]] = []
    for service, spans in groups:
        group = message.resource_spans.add()
        group.resource.attributes.add(key="service.name", value=value(service))
        group.resource.attributes.add(key="service.instance.id", value=value(f"{service}-1"))
        scope = group.scope_spans.add()
        scope.scope.name = "lanes"
        for name, attributes in spans:
            trace_id = new_id(16)
            scope.spans.append(
                Span(
                    trace_id=trace_id,
                    span_id=new_id(8),
                    name=name,
                    start_time_unix_nano=1_000_000_000,
                    end_time_unix_nano=2_000_000_000,
                    attributes=[KeyValue(key=k, value=value(v)) for k, v in attributes.items()],
                )
            )
            sent.append((trace_id.hex(), name))
    return bytes(message.SerializeToString()), sent


def named_spans(tag: str, count: int) -> tuple[bytes, list[tuple[str, str]]]:
    spans = [(f"{tag}-{n}", {"n": n, "tag": tag}) for n in range(count)]
    return spans_request([(f"svc-{tag}", spans)])


def folded_names(fleet: FleetModel, sent: list[tuple[str, str]]) -> list[list[str]]:
    """The names of the spans the fleet holds under each sent span's trace id."""
    return [[span.name for span in fleet.traces.spans(trace_id)] for trace_id, _ in sent]


def in_process(body: bytes, limits: Limits) -> tuple[Batch | Malformed, int]:
    """``body`` decoded here, as a lane would: the batch (or the refusal) and the
    values read."""
    reads = Reads(limits.max_reads_per_request)
    try:
        found: Batch | Malformed = decode(
            "traces", body, json_body=False, limits=limits, reads=reads
        )
    except Malformed as exc:
        found = exc
    return found, limits.max_reads_per_request - reads.left


async def post_answer(
    session: aiohttp.ClientSession, receiver: Receiver, body: bytes
) -> tuple[int, bytes]:
    url = f"{receiver.http_endpoint}/v1/traces"
    async with session.post(url, data=body, headers={"Content-Type": PROTOBUF}) as reply:
        return reply.status, await reply.read()


def error_message(answer: bytes) -> str:
    """The message of an OTLP/HTTP protobuf error answer: a google.rpc.Status of
    its code (field 1, a varint) and its message (field 2), nothing else."""
    assert answer[0] == 0x08

    def varint(position: int) -> tuple[int, int]:
        number = shift = 0
        while True:
            byte = answer[position]
            number |= (byte & 0x7F) << shift
            position, shift = position + 1, shift + 7
            if not byte & 0x80:
                return number, position

    _, position = varint(1)
    assert answer[position] == 0x12
    length, position = varint(position + 1)
    assert position + length == len(answer)
    return answer[position:].decode()


def nested_kvlist(levels: int) -> tuple[bytes, str]:
    """A span whose one attribute is an AnyValue of ``levels`` nested key-value
    lists, spliced from raw fields: the generated classes refuse to build one this
    deep. AnyValue.kvlist_value = 6, KeyValueList.values = 1, KeyValue key = 1 and
    value = 2, AnyValue.string_value = 1; Span trace_id = 1, span_id = 2,
    attributes = 9."""
    inner = raw_field(1, b"bottom")
    for level in range(levels):
        pair = raw_field(1, f"l{level}".encode()) + raw_field(2, inner)
        inner = raw_field(6, raw_field(1, pair))
    attribute = raw_field(1, b"deep") + raw_field(2, inner)
    trace_id = new_id(16)
    span = raw_field(1, trace_id) + raw_field(2, new_id(8)) + raw_field(9, attribute)
    return request_of_spans([span]), trace_id.hex()


async def test_protobuf_bodies_are_decoded_in_another_process_and_arrive_whole(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """Two resource groups, attributes of every kind (arrays arrive as tuples): the
    batch that comes back from the lane equals the one decoded here, each group's
    spans share one ResourceInfo object (the folding groups by its identity), and
    the fleet holds the spans under their ids with their attributes."""
    sink = Kept(fleet)
    attributes: dict[str, object] = {
        "text": "hello",
        "count": 7,
        "ratio": 0.5,
        "flag": True,
        "tags": ("a", "b", "c"),
        "numbers": (1, 2, 3),
    }
    body, sent = spans_request(
        [
            ("alpha", [("a0", attributes), ("a1", {}), ("a2", {"k": "v"})]),
            ("beta", [("b0", attributes), ("b1", {"tags": ("x",)})]),
        ]
    )
    expected, _ = in_process(body, Limits())
    assert isinstance(expected, Batch)
    async with Receiver(sink, grpc_port=None, http_port=0) as receiver:
        assert await post(http, receiver, body) == 200
        lanes = receiver._offload.process_ids

    assert lanes, "no lane process decoded the body"
    assert os.getpid() not in lanes
    [batch] = sink.batches
    assert batch == expected
    runs = list(_by_resource(batch.spans, lambda span: span.resource))
    assert [[span.name for span in run] for run in runs] == [["a0", "a1", "a2"], ["b0", "b1"]]
    for run in runs:
        assert all(span.resource is run[0].resource for span in run)
    assert runs[0][0].resource is not runs[1][0].resource
    assert batch.spans[0].attributes["tags"] == ("a", "b", "c")
    assert batch.spans[0].attributes["numbers"] == (1, 2, 3)
    fleet.store.drain()
    assert folded_names(fleet, sent) == [[name] for _, name in sent]
    [first] = fleet.traces.spans(sent[0][0])
    assert dict(first.attributes) == attributes
    assert first.resource.service == "alpha"
    assert first.resource.instance == "alpha-1"
    assert len(first.span_id) == 16


async def test_a_lane_killed_from_outside_costs_no_request_and_a_new_one_serves_the_next(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    """Every lane is killed (SIGKILL) between two requests: the next requests are all
    answered 200 and folded, and a lane of a new process serves them. The dead
    process's pipes are closed when it is replaced (every warning is an error here:
    a pipe left to the garbage collector fails the test)."""
    body, sent = named_spans("before", 2)
    assert await post(http, receiver, body) == 200
    killed = receiver._offload.process_ids
    assert killed
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    # Seen dead (and reaped) before the next request: that one finds its lane gone.
    await eventually(lambda: not set(receiver._offload.process_ids) & set(killed))

    statuses = []
    after: list[tuple[str, str]] = []
    for number in range(4):
        body, spans = named_spans(f"after{number}", 3)
        statuses.append(await post(http, receiver, body))
        after += spans
    lanes = receiver._offload.process_ids

    assert statuses == [200] * 4
    assert lanes, "no new lane was started"
    assert not set(lanes) & set(killed)
    assert os.getpid() not in lanes
    fleet.store.drain()
    assert folded_names(fleet, sent + after) == [[name] for _, name in sent + after]


async def test_the_values_a_lane_reads_are_counted_as_if_read_here(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    """The receiver's count of values read is what the lane spent: the same as the
    same body costs decoded in this process."""
    attributes: dict[str, object] = {f"k{n}": ("x", "y", n) for n in range(20)}
    body, _ = spans_request([("reader", [(f"s{n}", attributes) for n in range(10)])])
    _, read_here = in_process(body, Limits())

    assert await post(http, receiver, body) == 200

    assert receiver._offload.process_ids
    assert read_here > 0
    assert receiver.values_read == read_here


async def test_hostile_bodies_get_the_answers_decoding_here_gives_and_leave_the_lane_in_step(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """Garbage is a 400 and a body of more values than the budget a 413, each with
    the message decoding here raises; a value nested as deep as protobuf parses is
    accepted and cut at the depth limit, and one nested 100 deep is refused as
    protobuf refuses it. After each, a valid request is answered 200 and its own
    spans are folded; no lane died on the way."""
    limits = Limits(max_reads_per_request=1_000)
    over_budget, _ = spans_request(
        [("greedy", [(f"g{n}", {f"k{i}": i for i in range(60)}) for n in range(20)])]
    )
    deepest, deepest_trace = nested_kvlist(31)
    hostile = {
        "garbage": b"\xff\xfe not a protobuf request at all",
        "over budget": over_budget,
        "deepest parsed": deepest,
        "100 deep": nested_kvlist(100)[0],
    }
    answers: dict[str, tuple[int, str, int]] = {}
    expected: dict[str, tuple[int, str, int]] = {}
    followers: list[tuple[str, str]] = []
    follower_statuses = []
    lanes_seen: set[int] = set()
    async with Receiver(fleet, grpc_port=None, http_port=0, limits=limits) as receiver:
        for number, (what, body) in enumerate(hostile.items()):
            found, read_here = in_process(body, limits)
            if isinstance(found, Malformed):
                code = 413 if found.status == "too_large" else 400
                expected[what] = (code, str(found), read_here)
            else:
                expected[what] = (200, "", read_here)
            read_before = receiver.values_read
            code, answer = await post_answer(http, receiver, body)
            message = error_message(answer) if code != 200 else ""
            answers[what] = (code, message, receiver.values_read - read_before)
            lanes_seen.update(receiver._offload.process_ids)

            follower, spans = named_spans(f"follower{number}", 2)
            follower_statuses.append(await post(http, receiver, follower))
            followers += spans
            lanes_seen.update(receiver._offload.process_ids)
        lanes_left = receiver._offload.process_ids

    assert answers == expected
    assert [answers[what][0] for what in hostile] == [400, 413, 200, 400]
    assert follower_statuses == [200] * len(hostile)
    assert lanes_seen
    assert set(lanes_left) == lanes_seen, "a lane died on a hostile body"
    fleet.store.drain()
    assert folded_names(fleet, followers) == [[name] for _, name in followers]
    [kept] = fleet.traces.spans(deepest_trace)
    assert limits.max_depth == 4
    assert kept.attributes["deep"] == "{l30: {l29: {l28: {l27: {…}}}}}"  # 4 levels, then cut


async def test_a_sender_that_hangs_up_mid_request_does_not_put_the_lane_out_of_step(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    """A large body is sent, and its sender goes away once the receiver has handed
    it to a lane, before the answer: the requests after it are answered 200, and
    each trace the fleet holds has its own request's spans, none another's."""
    large, cancelled_spans = named_spans("cancelled", 10_000)
    url = f"{receiver.http_endpoint}/v1/traces"

    async def send_large() -> int:
        async with http.post(url, data=large, headers={"Content-Type": PROTOBUF}) as reply:
            return reply.status

    sending = asyncio.create_task(send_large())
    await eventually(lambda: receiver.requests["http traces"] or sending.done(), within=30)
    assert not sending.done(), "the large body was answered before its sender could hang up"
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending

    # The receiver is done with it (its bytes released once its decoding ended);
    # then requests three at a time, so that every worker thread's lane serves some.
    await eventually(lambda: receiver.in_flight_bytes == 0, within=30)
    statuses: list[int] = []
    later: list[tuple[str, str]] = []
    for round_ in range(4):
        bodies = []
        for number in range(3):
            body, spans = named_spans(f"later{round_}.{number}", 3)
            bodies.append(body)
            later += spans
        statuses += await asyncio.gather(*(post(http, receiver, body) for body in bodies))

    assert statuses == [200] * 12
    fleet.store.drain()
    assert folded_names(fleet, later) == [[name] for _, name in later]
    for names, (_, name) in zip(folded_names(fleet, cancelled_spans), cancelled_spans, strict=True):
        assert names in ([], [name])  # folded whole or not at all, never another's


async def test_stopping_the_receiver_ends_every_lane_process(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """Protobuf lanes (two requests at once, so both worker threads may have one)
    and the OTLP/JSON lane: once stop() returns, none of their processes exists."""
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        bodies = [named_spans(f"stop{n}", 200)[0] for n in range(4)]
        statuses = await asyncio.gather(*(post(http, receiver, body) for body in bodies))
        url = f"{receiver.http_endpoint}/v1/traces"
        async with http.post(url, data=b"{}", headers={"Content-Type": JSON}) as reply:
            statuses.append(reply.status)
        lanes = receiver._offload.process_ids
        json_lane = receiver.json_process_id
        assert json_lane is not None
        await receiver.stop()

    assert statuses == [200] * 5
    assert lanes
    pids = [*lanes, json_lane]
    assert os.getpid() not in pids

    def gone(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    await eventually(lambda: all(gone(pid) for pid in pids), within=10)
