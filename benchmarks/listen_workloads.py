"""W8: OTLP spans per second that ``pygents-tui listen`` holds, with bounded memory.

The receiver and the fleet model run in this process, on one event loop, drained
ten times a second as the dashboard does. Sender processes (this module run as a
script) post OTLP export requests of 512 pygents-shaped spans — a turn span, its
tool span and an HTTP client span inside the tool, in a new trace per turn, fresh
ids in every request — as fast as the receiver answers, over HTTP/protobuf or gRPC.
The figure is spans folded into the model per second; memory is the process's
resident size sampled each second, compared between the first and the last
quarter of the run (bounded: it stops growing once the model's stores are full).
"""

from __future__ import annotations

import asyncio
import http.client
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver

__all__ = ["Source", "Throughput", "rss_mib", "send_http", "w8"]

TURNS_PER_REQUEST = 512 // 3
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Throughput:
    transport: str
    seconds: float
    spans: int
    spans_per_second: float
    rss_early_mib: float  # the largest resident size in the first quarter (after warm-up)
    rss_late_mib: float  # the largest in the last quarter
    dropped: int  # decoded spans the model's inbox had to drop (it fell behind)
    refused: int  # requests refused as malformed or too large (expected: none)

    @property
    def growth_mib(self) -> float:
        return self.rss_late_mib - self.rss_early_mib


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE / 2**20


async def w8(seconds: float, transport: str = "http", senders: int = 2) -> Throughput:
    """Run senders against a fresh receiver for ``seconds``; see the module docstring."""
    fleet = FleetModel(stale_after=3600.0)
    grpc_port, http_port = (0, None) if transport == "grpc" else (None, 0)
    async with Receiver(fleet, grpc_port=grpc_port, http_port=http_port) as receiver:
        target = receiver.grpc_endpoint if transport == "grpc" else receiver.http_endpoint
        assert target is not None
        processes = [
            await asyncio.create_subprocess_exec(
                sys.executable, "-m", "benchmarks.listen_workloads", "send", transport, target
            )
            for _ in range(senders)
        ]
        try:
            samples = await _measure(fleet, seconds)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                await process.wait()
    counts = fleet.store.counters()
    spans, elapsed, early, late = samples
    return Throughput(
        transport=transport,
        seconds=elapsed,
        spans=spans,
        spans_per_second=spans / elapsed,
        rss_early_mib=early,
        rss_late_mib=late,
        dropped=counts.get("dropped", 0),
        refused=counts.get("malformed", 0) + counts.get("too_large", 0),
    )


async def _measure(fleet: FleetModel, seconds: float) -> tuple[int, float, float, float]:
    """Drain at 10 Hz; count spans folded after a warm-up of a tenth of the run;
    sample the resident size once a second."""
    warm_up = max(seconds / 10, 0.5)
    loop = asyncio.get_running_loop()
    begin = loop.time()
    while loop.time() - begin < warm_up or fleet.store.counts["spans"] == 0:
        await asyncio.sleep(0.1)
        fleet.store.drain()
        if loop.time() - begin > warm_up + 30:
            raise RuntimeError("the OTLP senders never got through")
    start, first = loop.time(), fleet.store.counts["spans"]
    rss: list[tuple[float, float]] = []
    next_sample = start
    while (now := loop.time()) - start < seconds:
        await asyncio.sleep(0.1)
        fleet.store.drain()
        if now >= next_sample:
            rss.append((now - start, rss_mib()))
            next_sample += 1.0
    fleet.store.drain()
    elapsed = loop.time() - start
    quarter = elapsed / 4
    early = max((mib for at, mib in rss if at <= quarter), default=rss_mib())
    late = max((mib for at, mib in rss if at >= elapsed - quarter), default=rss_mib())
    return fleet.store.counts["spans"] - first, elapsed, early, late


# -- the sender process -----------------------------------------------------------------------


class Source(Protocol):
    """What a sender posts: the next export request's body (W8's, or W13's replays)."""

    def next(self) -> bytes: ...


class _Requests:
    """One export request rebuilt with fresh trace, span and turn ids each time."""

    def __init__(self, pid: int) -> None:
        self.message = trace_service_pb2.ExportTraceServiceRequest()
        group = self.message.resource_spans.add()
        for key, value in (
            ("service.name", "bench-listen"),
            ("service.instance.id", f"sender-{pid}"),
        ):
            group.resource.attributes.add(key=key, value=AnyValue(string_value=value))
        scope = group.scope_spans.add()
        scope.scope.name = "pygents_otel"  # what pygents' own spans are sent under
        spans = scope.spans
        now = time.time_ns()
        self.turns: list[tuple[Span, Span, Span]] = []
        for n in range(TURNS_PER_REQUEST):
            turn = spans.add(name="turn fetch", kind=Span.SPAN_KIND_INTERNAL)
            turn.attributes.extend(
                [
                    KeyValue(key="pygents.turn.uuid", value=AnyValue(string_value="")),
                    KeyValue(key="pygents.turn.timeout", value=AnyValue(double_value=5.0)),
                    KeyValue(key="pygents.tool.name", value=AnyValue(string_value="fetch")),
                    KeyValue(
                        key="pygents.turn.stop_reason", value=AnyValue(string_value="completed")
                    ),
                ]
            )
            tool = spans.add(name="execute_tool fetch", kind=Span.SPAN_KIND_INTERNAL)
            tool.attributes.extend(
                [
                    KeyValue(
                        key="gen_ai.operation.name", value=AnyValue(string_value="execute_tool")
                    ),
                    KeyValue(key="gen_ai.tool.name", value=AnyValue(string_value="fetch")),
                ]
            )
            call = spans.add(name="GET", kind=Span.SPAN_KIND_CLIENT)
            call.attributes.extend(
                [
                    KeyValue(key="http.request.method", value=AnyValue(string_value="GET")),
                    KeyValue(
                        key="url.full", value=AnyValue(string_value=f"https://example.com/{n}")
                    ),
                ]
            )
            for offset, span in enumerate((turn, tool, call)):
                span.start_time_unix_nano = now + offset * 1000
                span.end_time_unix_nano = now + 10_000_000 - offset * 1000
            self.turns.append((turn, tool, call))

    def next(self) -> bytes:
        for turn, tool, call in self.turns:
            trace_id = os.urandom(16)
            turn.trace_id = tool.trace_id = call.trace_id = trace_id
            turn.span_id, tool.span_id, call.span_id = (os.urandom(8) for _ in range(3))
            tool.parent_span_id, call.parent_span_id = turn.span_id, tool.span_id
            turn.attributes[0].value.string_value = trace_id.hex()
        return bytes(self.message.SerializeToString())


def send_http(base: str, requests: Source) -> None:
    """POST ``requests`` to ``base``'s ``/v1/traces`` as OTLP/HTTP protobuf, one after
    the other on one connection, until the receiver goes away or refuses one."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
    headers = {"Content-Type": "application/x-protobuf"}
    while True:
        connection.request("POST", "/v1/traces", body=requests.next(), headers=headers)
        reply = connection.getresponse()
        reply.read()
        if reply.status != 200:
            raise SystemExit(f"the receiver answered {reply.status}")


def _send_grpc(target: str, requests: _Requests) -> None:
    name = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name
    with grpc.insecure_channel(target) as channel:
        export: Any = channel.unary_unary(f"/{name}/Export")
        while True:
            export(requests.next(), timeout=30)


def _send(transport: str, target: str) -> int:
    requests = _Requests(os.getpid())
    try:
        if transport == "grpc":
            _send_grpc(target, requests)
        else:
            send_http(target, requests)
    except (ConnectionError, grpc.RpcError, KeyboardInterrupt):
        pass  # the receiver went away: the run is over
    return 0


def main(argv: list[str]) -> int:
    """``python -m benchmarks.listen_workloads [--quick]`` measures W8 alone (60 s over
    HTTP, 20 s over gRPC; 1 s each with ``--quick``); ``... send http|grpc TARGET``
    is a sender process, posting until it is killed."""
    if argv[:1] == ["send"]:
        return _send(argv[1], argv[2])
    quick = "--quick" in argv
    for transport, seconds in (("http", 60.0), ("grpc", 20.0)):
        res = asyncio.run(w8(1.0 if quick else seconds, transport))
        print(
            f"W8 {transport:<4} {res.spans_per_second:>9,.0f} spans/s over {res.seconds:.0f} s"
            f" ({res.spans:,} spans), RSS {res.rss_early_mib:.0f} -> {res.rss_late_mib:.0f} MiB"
            f" ({res.growth_mib:+.1f}), dropped {res.dropped}, refused {res.refused}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
