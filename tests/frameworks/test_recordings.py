"""The recordings in ``tests/frameworks/recordings/`` (written by ``record.py``) and
the harness's OTLP export: a recording must read with `pygents_tui.recording.Recording`
and hold what the frameworks send today; a run sent to a real ``listen`` receiver must
arrive whole."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import harness
import pytest
import record
from opentelemetry.sdk.trace import ReadableSpan

from pygents_tui.listen import Batch, Receiver
from pygents_tui.recording import Recording

Run = tuple[list[str], tuple[ReadableSpan, ...]]
RUNS = {
    "pydantic_ai.jsonl": "pydantic_ai_run",
    "openai_agents_otel.jsonl": "openai_agents_otel_run",
    "openai_agents_openinference.jsonl": "openai_agents_openinference_run",
}


def _recorded(name: str) -> list[dict[str, Any]]:
    """The spans of a recording, one per line, as OTLP/JSON, read through `Recording`."""
    spans = []
    with Recording(record.RECORDINGS / name) as recording:
        while (line := recording.read()) is not None:
            assert line.signal == "traces"
            (resource,) = json.loads(line.data)["resourceSpans"]
            (scope,) = resource["scopeSpans"]
            (span,) = scope["spans"]
            assert line.time_ns == int(span["endTimeUnixNano"])
            spans.append(span)
        assert not recording.drops
    return spans


def _shape(spans: Sequence[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """Each span's name, parent (by name, "" for a root or an absent parent) and status
    code: what the feeder folds, without ids, times or values. (Not the kind: OTel's
    util-genai 1.0b0 makes execute_tool spans CLIENT, 1.1b0 INTERNAL.)"""
    names = {s["spanId"]: s["name"] for s in spans}
    return [
        (s["name"], names.get(s.get("parentSpanId", ""), ""), s.get("status", {}).get("code", 0))
        for s in spans
    ]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_recording_reads_as_one_span_per_line_in_the_order_they_ended(name: str) -> None:
    spans = _recorded(name)
    assert spans
    ends = [int(s["endTimeUnixNano"]) for s in spans]
    assert ends == sorted(ends)
    assert {s["traceId"] for s in spans} == {
        f"{n:032x}" for n in (1, 2, 3)
    }  # three runs, fixed ids


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_recording_has_the_shape_the_framework_sends_today(
    name: str, request: pytest.FixtureRequest
) -> None:
    """If this fails after a framework upgrade, rerun ``uv run python tests/frameworks/record.py``
    and read the diff: it is what the feeder must now handle."""
    _, spans = request.getfixturevalue(RUNS[name])
    fresh = [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        for line in record.lines(record.normalized(spans)).splitlines()
    ]
    assert _shape(_recorded(name)) == _shape(fresh)


def test_normalizing_fixes_ids_times_ports_and_stack_traces(pydantic_ai_run: Run) -> None:
    _, spans = pydantic_ai_run
    fixed = record.normalized(spans)
    assert fixed[0].context is not None
    assert fixed[0].context.span_id == 1
    assert min(s.start_time or 0 for s in fixed) == record.BASE_NS
    traces = [e.attributes for s in fixed for e in s.events if e.name == "exception"]
    assert traces
    assert {t["exception.stacktrace"] for t in traces if t} == {record.STACKTRACE}
    assert record.lines(fixed) == record.lines(record.normalized(spans))


class _Collected:
    """A `Sink` that keeps what a real receiver decoded, and says when enough came."""

    def __init__(self, expected: int) -> None:
        self.batches: list[Batch] = []
        self.expected = expected
        self.enough = asyncio.Event()

    def ingest(self, batch: Batch) -> None:
        self.batches.append(batch)
        if sum(len(b.spans) for b in self.batches) >= self.expected:
            self.enough.set()

    def reject(self, signal: str, kind: str, reason: str) -> None:
        raise AssertionError(f"rejected {signal} {kind}: {reason}")


async def test_a_framework_run_sent_over_otlp_arrives_whole_at_a_real_listen_receiver(
    pydantic_ai_run: Run,
) -> None:
    _, expected = pydantic_ai_run
    sink = _Collected(len(expected))
    async with Receiver(sink, grpc_port=None, http_port=0) as receiver:
        telemetry = harness.telemetry(
            "pydantic-ai-weather", endpoint=f"{receiver.http_endpoint}/v1/traces"
        )
        try:
            # The OTLP exporter blocks while it sends, so the run goes on a thread of its
            # own: the receiver answers on this loop.
            await asyncio.to_thread(asyncio.run, harness.run_pydantic_ai(telemetry))
        finally:
            await asyncio.to_thread(telemetry.shutdown)
        await asyncio.wait_for(sink.enough.wait(), 30)
    received = [span for batch in sink.batches for span in batch.spans]
    assert sorted(s.name for s in received) == sorted(s.name for s in expected)
    assert {(s.resource.service, s.resource.instance) for s in received} == {
        ("pydantic-ai-weather", "pydantic-ai-weather-1")
    }
    agents = [s for s in received if s.name == "invoke_agent weather_agent"]
    assert [s.status for s in agents].count("error") == 1
