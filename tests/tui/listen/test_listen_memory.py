"""Sustained ingestion keeps the fleet model's memory bounded: far more spans,
records, traces, turns, agents and services than any of its stores holds, and the
traced memory stops growing once every store is full."""

from __future__ import annotations

import gc
import tracemalloc

from otlp_requests import Event, SpanSpec, logs_batch, new_id, spans_batch

from pygents_tui.feeders import FleetLimits, FleetModel

WALL = 1_700_000_000 * 10**9
TURNS_PER_ROUND = 40


def one_round(fleet: FleetModel, round_number: int) -> None:
    """40 turns of one service: start and value records; for 36 of them an end
    record and three spans (turn, tool, and an HTTP call inside the tool) in a new
    trace each, while 4 keep running."""
    service = f"svc-{round_number % 20}"
    events: list[Event] = []
    spans: list[SpanSpec] = []
    for n in range(TURNS_PER_ROUND):
        uuid = f"{round_number}-{n}"
        agent = {
            "gen_ai.agent.id": f"agent-{(round_number * 7 + n) % 100}",
            "gen_ai.agent.name": "w",
        }
        turn = {**agent, "pygents.turn.uuid": uuid}
        events.append(Event("pygents.turn.start", turn | {"gen_ai.tool.name": "fetch"}, WALL))
        events.append(Event("pygents.turn.on_value", turn | {"pygents.value.preview": "v" * 200}))
        if not n % 10:
            continue  # these keep running
        events.append(Event("pygents.turn.end", turn | {"pygents.turn.values": 1}, WALL))
        trace, turn_id, tool_id = new_id(16), new_id(8), new_id(8)
        spans.append(SpanSpec("turn fetch", trace, turn_id, attributes={"pygents.turn.uuid": uuid}))
        spans.append(SpanSpec("execute_tool fetch", trace, tool_id, parent_id=turn_id))
        spans.append(
            SpanSpec("GET", trace, new_id(8), parent_id=tool_id, attributes={"url.full": "u" * 300})
        )
    fleet.ingest(logs_batch(events, service=service))
    fleet.ingest(spans_batch(spans, service=service))
    fleet.store.drain()


def test_sustained_ingestion_keeps_memory_bounded() -> None:
    limits = FleetLimits(
        services=8,
        agents=32,
        turns=1000,
        running=20,
        log=300,
        service_log=50,
        service_turns=50,
        recent=100,
        values=20,
        trace_bytes=1024 * 1024,
        agent_spans=100,
    )
    fleet = FleetModel(clock=lambda: 1000.0, wall=lambda: WALL, limits=limits)
    tracemalloc.start()
    try:
        for number in range(30):  # fills every store
            one_round(fleet, number)
        gc.collect()
        full, _ = tracemalloc.get_traced_memory()
        for number in range(30, 120):
            one_round(fleet, number)
        gc.collect()
        later, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    counts = fleet.store.counters()
    assert counts["spans"] == 120 * 36 * 3
    assert counts["traces_evicted"] > 3000
    assert counts["services_evicted"] > 0
    assert counts["agents_evicted"] > 0
    assert counts["running_evicted"] > 0
    assert len(fleet.store.turns) <= limits.turns
    assert fleet.traces.size <= limits.trace_bytes
    growth = later - full
    assert growth < 256 * 1024, f"traced memory grew by {growth:,} bytes after the stores filled"
