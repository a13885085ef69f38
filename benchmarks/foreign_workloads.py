"""W13: ``pygents-tui listen`` as the console of a mixed fleet, other frameworks' agents
among pygents' own.

Three sender processes replay the recorded telemetry of other frameworks
(``tests/frameworks/recordings/``: pydantic-ai, the OpenAI Agents SDK under
OpenTelemetry's instrumentation and under OpenInference's) into a real `Receiver`
on 127.0.0.1 over OTLP/HTTP protobuf, W8's sender loop (`send_http`) posting them.
Each request holds as many copies of one recording as fit in about 512 spans, for
one service of that sender's share, the services taken in turn; every copy gets
fresh trace and span ids (its parents rewritten alike) and its times moved to now,
so that each copy is a run of its own. The senders keep to a rate (spans a second)
rather than send flat out: a console is fed at the pace of its fleet, and the
operator's keys are measured meanwhile.

Beside them, pygents' own services send live records as in W12 (`fleet_workloads`:
built before the clock starts, handed to `FleetModel.ingest` on schedule), and the
listen app runs headless as ``pygents-tui listen`` builds it, the garbage collector
paced as there, while W12's rounds of keys are pressed (`fleet_workloads.press`).

Measured: spans folded into the model per second (after a warm-up), the key-press
p50/p95 as W12 measures them, and the resident size compared between the first and
the last quarter of the run, as W8 does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans, Span

from benchmarks import fleet_workloads as fw
from benchmarks import listen_workloads as lw
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetLimits, FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.recording import Recording

__all__ = ["KINDS", "ForeignRun", "Plan", "Replays", "w13"]

RECORDINGS = Path(__file__).resolve().parents[1] / "tests" / "frameworks" / "recordings"
# The service name's prefix for each kind of sender, and the recording it replays.
KINDS: dict[str, str] = {
    "pydantic-ai": "pydantic_ai.jsonl",
    "agents-otel": "openai_agents_otel.jsonl",
    "agents-oi": "openai_agents_openinference.jsonl",
}
SPANS_PER_REQUEST = 512
SETTLE = 10.0  # the longest the warm-up waits, past its length, for the table to settle


@dataclass(frozen=True)
class Plan:
    """``foreign`` services (split over the three kinds) sending ``rate`` spans/s in
    all, beside ``pygents`` services × ``agents`` sending ``turns`` turns/s as in W12."""

    foreign: int = 75
    pygents: int = 25
    agents: int = 20
    rate: float = 12_000.0
    turns: float = 500.0
    seconds: float = 30.0

    @classmethod
    def quick(cls) -> Plan:
        return cls(foreign=6, pygents=4, agents=5, rate=1_500.0, turns=40.0, seconds=1.0)


@dataclass(frozen=True)
class ForeignRun:
    """What W13 measured."""

    seconds: float  # the measured window, after the warm-up
    spans: int  # spans folded in it
    spans_per_second: float
    key_p50_ms: float
    key_p95_ms: float
    keys: int
    rss_early_mib: float  # the largest resident size in the first quarter
    rss_late_mib: float  # the largest in the last quarter
    agents: dict[str, int] = field(default_factory=dict)  # agent rows by kind (and "pygents")
    dropped: int = 0  # spans or records the model's inbox dropped (expected: none)
    refused: int = 0  # requests refused as malformed or too large (expected: none)

    @property
    def growth_mib(self) -> float:
        return self.rss_late_mib - self.rss_early_mib


# -- the sender process -----------------------------------------------------------------------


def _value(attributes: Any, key: str, value: str) -> None:
    """Set the string attribute ``key`` in a repeated KeyValue field, adding it if absent."""
    attribute: KeyValue
    for attribute in attributes:
        if attribute.key == key:
            attribute.value.string_value = value
            return
    attributes.add(key=key, value=AnyValue(string_value=value))


class Replays:
    """Export requests of one recording, copied, with fresh ids, moved to now, for
    each of ``services`` in turn, paced to ``rate`` spans a second (`lw.Source`)."""

    def __init__(self, kind: str, services: list[str], rate: float) -> None:
        self.services = services
        self.message = trace_service_pb2.ExportTraceServiceRequest()
        group = self.message.resource_spans.add()
        spans: list[tuple[str, str, Span]] = []  # (scope name, scope version, span)
        with Recording(RECORDINGS / KINDS[kind]) as recording:
            while (line := recording.read()) is not None:
                request = json_format.Parse(
                    line.data, trace_service_pb2.ExportTraceServiceRequest()
                )
                for resource in request.resource_spans:
                    if not len(group.resource.attributes):
                        group.resource.CopyFrom(resource.resource)
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            spans.append((scope.scope.name, scope.scope.version, span))
        self.copies = max(1, SPANS_PER_REQUEST // len(spans))
        scopes: dict[tuple[str, str], ScopeSpans] = {}
        self.spans: list[list[Span]] = []  # by copy, in the recording's order
        for _ in range(self.copies):
            copy = []
            for name, version, span in spans:
                scope = scopes.get((name, version))
                if scope is None:
                    scope = scopes[(name, version)] = group.scope_spans.add()
                    scope.scope.name, scope.scope.version = name, version
                added: Span = scope.spans.add()
                added.CopyFrom(span)
                copy.append(added)
            self.spans.append(copy)
        self.size = self.copies * len(spans)
        self.original = [(s.start_time_unix_nano, s.end_time_unix_nano) for s in self.spans[0]]
        self.last_end = max(end for _, end in self.original)
        own = {s.span_id for s in self.spans[0]}
        self.span_ids = sorted(own | {s.parent_span_id for s in self.spans[0] if s.parent_span_id})
        self.trace_ids = sorted({s.trace_id for s in self.spans[0]})
        self.from_ids = [(s.trace_id, s.span_id, s.parent_span_id) for s in self.spans[0]]
        self.interval = self.size / rate
        self.due = time.perf_counter()
        self.turn = 0

    def next(self) -> bytes:
        """The next request, when its time comes."""
        self.due += self.interval
        wait = self.due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        service = self.services[self.turn % len(self.services)]
        self.turn += 1
        attributes = self.message.resource_spans[0].resource.attributes
        _value(attributes, "service.name", service)
        _value(attributes, "service.instance.id", f"{service}-1")
        shift = time.time_ns() - self.last_end
        n_spans, n_traces = len(self.span_ids), len(self.trace_ids)
        for copy in self.spans:
            fresh = os.urandom(8 * n_spans + 16 * n_traces)
            span_id = {old: fresh[8 * i : 8 * i + 8] for i, old in enumerate(self.span_ids)}
            base = 8 * n_spans
            trace_id = {
                old: fresh[base + 16 * i : base + 16 * i + 16]
                for i, old in enumerate(self.trace_ids)
            }
            for span, (trace, own, parent), (start, end) in zip(
                copy, self.from_ids, self.original, strict=True
            ):
                span.trace_id = trace_id[trace]
                span.span_id = span_id[own]
                span.parent_span_id = span_id[parent] if parent else b""
                span.start_time_unix_nano = start + shift
                span.end_time_unix_nano = end + shift
        return bytes(self.message.SerializeToString())


def service_names(kind: str, first: int, count: int) -> list[str]:
    return [f"{kind}-{n:03d}" for n in range(first, first + count)]


class _Kinds:
    """Several kinds' replays from one process, a request of each in turn."""

    def __init__(self, replays: list[Replays]) -> None:
        self.replays = replays
        self.turn = 0

    def next(self) -> bytes:
        self.turn += 1
        return self.replays[self.turn % len(self.replays)].next()


def _send(target: str, rate: float, shares: list[str]) -> int:
    """Post the replays of ``shares`` (``KIND=SERVICES`` each), ``rate`` spans/s in all."""
    counts = [(kind, int(count)) for kind, count in (share.split("=") for share in shares)]
    each = rate / len(counts)
    source = _Kinds([Replays(kind, service_names(kind, 0, n), each) for kind, n in counts])
    with contextlib.suppress(ConnectionError, KeyboardInterrupt):
        lw.send_http(target, source)  # until the receiver goes away: the run is over
    return 0


# -- the run -----------------------------------------------------------------------------------


async def _senders(plan: Plan, target: str) -> list[asyncio.subprocess.Process]:
    """A process a kind, or one for all at a low rate (``--quick``: a process takes
    a second or more to start on a busy machine, and one is enough there)."""
    counts = [plan.foreign // len(KINDS) + (i < plan.foreign % len(KINDS)) for i in range(3)]
    shares = [f"{kind}={n}" for kind, n in zip(KINDS, counts, strict=True) if n]
    groups = [shares] if plan.rate <= 3_000 else [[share] for share in shares]
    return [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.foreign_workloads",
            "send",
            target,
            str(plan.rate * len(group) / len(shares)),
            *group,
        )
        for group in groups
    ]


async def _sample_rss(samples: list[tuple[float, float]], start: float) -> None:
    while True:
        samples.append((time.perf_counter() - start, fw.rss_mib()))
        await asyncio.sleep(1.0)


def _agents(fleet: FleetModel) -> dict[str, int]:
    """Agent rows by the kind of service they belong to."""
    by_kind: dict[str, int] = {}
    for row in fleet.store.agent_rows():
        kind = next((k for k in KINDS if row.label.startswith(k)), "pygents")
        by_kind[kind] = by_kind.get(kind, 0) + 1
    return by_kind


async def w13(plan: Plan | None = None) -> ForeignRun:
    """Run W13 (see the module docstring) with ``plan`` (the full size by default)."""
    plan = plan or Plan()
    warm_up = max(plan.seconds / 10, min(2.0, plan.seconds / 2))
    own = fw.Plan(
        services=plan.pygents,
        agents=plan.agents,
        rate=plan.turns,
        seconds=warm_up + SETTLE + plan.seconds,
    )
    fleet = FleetModel(stale_after=3600.0, limits=FleetLimits())
    rss: list[tuple[float, float]] = []
    async with contextlib.AsyncExitStack() as stack:
        # The senders first: they take a second or two to start, as long as the
        # rest takes to build.
        receiver = await stack.enter_async_context(Receiver(fleet, grpc_port=None, http_port=0))
        assert receiver.http_endpoint is not None
        processes = await _senders(plan, receiver.http_endpoint)

        async def stop() -> None:
            for process in processes:
                process.terminate()
            for process in processes:
                await process.wait()

        stack.push_async_callback(stop)
        requests = deque(fw.build(own, time.time_ns()))
        app = listen_app(fleet, "127.0.0.1", 4317, None)
        fresh = fw.Freshness(fleet, app.refresh_view)  # produce() notes its samples there
        pilot = await stack.enter_async_context(app.run_test(size=fw.SIZE))
        await stack.enter_async_context(fw.paced())
        await pilot.pause()
        # The warm-up: the senders' spans arriving and every service's rows in the
        # table (the foreign services' come in turn, a request each, and sort above
        # pygents' ones), before anything is counted: a row added above the cursor
        # moves it, and W12's keys expect it to move only when pressed.
        began = time.perf_counter()
        producer = asyncio.create_task(fw.produce(fleet, requests, fresh, began))
        rows, settled, quiet = -1, began, min(1.0, plan.seconds / 2)
        while time.perf_counter() - began < warm_up or time.perf_counter() - settled < quiet:
            await asyncio.sleep(0.1)  # the app's refresh drains the model meanwhile
            if (now := len(fleet.store.agent_rows())) != rows or not fleet.store.counts["spans"]:
                rows, settled = now, time.perf_counter()
            if time.perf_counter() - began > warm_up + SETTLE:
                raise RuntimeError("the table did not settle: are the senders getting through?")
        start, first = time.perf_counter(), fleet.store.counts["spans"]
        dropped = fleet.store.counters().get("dropped", 0)
        sampler = asyncio.create_task(_sample_rss(rss, start))
        keys = await fw.press(app, start + plan.seconds)
        fleet.store.drain()
        elapsed = time.perf_counter() - start
        spans = fleet.store.counts["spans"] - first
        sampler.cancel()
        producer.cancel()
        agents = _agents(fleet)
        counts = fleet.store.counters()
        await pilot.press("q")
    ms = [k * 1000 for k in keys]
    quarter = elapsed / 4
    early = max((mib for at, mib in rss if at <= quarter), default=fw.rss_mib())
    late = max((mib for at, mib in rss if at >= elapsed - quarter), default=fw.rss_mib())
    return ForeignRun(
        seconds=elapsed,
        spans=spans,
        spans_per_second=spans / elapsed,
        key_p50_ms=statistics.median(ms),
        key_p95_ms=fw.percentile(ms, 0.95),
        keys=len(ms),
        rss_early_mib=early,
        rss_late_mib=late,
        agents=agents,
        dropped=counts.get("dropped", 0) - dropped,
        refused=counts.get("malformed", 0) + counts.get("too_large", 0),
    )


def main(argv: list[str]) -> int:
    """``python -m benchmarks.foreign_workloads [--quick]``: W13 alone; ``... send TARGET
    RATE KIND=SERVICES...`` is a sender process, posting until it is killed."""
    if argv[:1] == ["send"]:
        return _send(argv[1], float(argv[2]), argv[3:])
    plan = Plan.quick() if "--quick" in argv else Plan()
    res = asyncio.run(w13(plan))
    print(
        f"W13 {res.spans_per_second:,.0f} spans/s folded over {res.seconds:.0f} s"
        f" ({res.spans:,} spans), keys p95 {res.key_p95_ms:,.0f} ms"
        f" (p50 {res.key_p50_ms:,.0f} ms, {res.keys} keys),"
        f" RSS {res.rss_early_mib:.0f} -> {res.rss_late_mib:.0f} MiB ({res.growth_mib:+.1f}),"
        f" agents {json.dumps(res.agents)}, dropped {res.dropped}, refused {res.refused}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
