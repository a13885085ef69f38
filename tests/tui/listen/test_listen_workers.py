"""The proof: three real worker processes, traced by ``pygents_otel`` in live mode
and exporting with the real OTLP exporters (two over gRPC, one over HTTP), watched
by the receiver and the fleet model with no Textual in between.

The fleet model must show every service's agent (two of them named alike, kept
apart), each running turn with its timeout *while it runs* — the worker's tool waits
for a line on its standard input, which only the test writes — then its completion,
and the exact count of the values streamed before it. Nothing sleeps: the test waits
for the model to say so, on the model's own arrival signal, within a bounded time.
"""

from __future__ import annotations

import time

from worker_processes import VALUES, Spawn, drain_until

from pygents import StopReason
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver

DEADLINE = 90.0  # seconds for the whole scenario: only a broken pipeline waits this long


async def test_three_worker_processes_show_live_in_the_fleet_model(
    fleet: FleetModel, receiver: Receiver, spawn: Spawn
) -> None:
    grpc = f"http://{receiver.grpc_endpoint}"
    http = receiver.http_endpoint
    assert http is not None
    workers = [
        spawn("configure", "checkout", "planner", grpc, "grpc"),
        spawn("sdk", "billing", "planner", grpc, "grpc"),
        spawn("configure", "search", "indexer", http, "http/protobuf"),
    ]
    deadline = time.monotonic() + DEADLINE
    services = {w.service for w in workers}

    def waiting() -> bool:
        running = {t.service.name for t in fleet.store.running_turns()}
        return running == services

    await drain_until(fleet, waiting, deadline, workers)

    rows = fleet.store.agent_rows()
    assert sorted((a.service.name, a.name) for a in rows) == [
        ("billing", "planner"),
        ("checkout", "planner"),
        ("search", "indexer"),
    ]
    assert len({a.key for a in rows}) == 3, "two planners in two processes stay apart"
    for turn in fleet.store.running_turns():
        assert turn.tool == "wait_for_go"
        assert turn.timeout == 60.0
        assert turn.ended is None
        assert turn.elapsed_at(fleet.store.clock()) >= 0.0
    for agent in rows:
        assert agent.state == "running"
        assert agent.current_tool == "wait_for_go"
        assert agent.values == VALUES, "the stream's values, counted exactly"
        assert agent.completed == 1
    streamed = [t for t in fleet.store.recent_turns() if t.tool == "stream"]
    assert sorted(t.values for t in streamed) == [VALUES] * 3
    assert all(t.stop_reason is StopReason.COMPLETED for t in streamed)

    for worker in workers:
        worker.go()

    def finished() -> bool:
        done = [t for t in fleet.store.recent_turns() if t.tool == "wait_for_go"]
        return not fleet.store.running_turns() and len(done) == 3

    await drain_until(fleet, finished, deadline, workers)

    for turn in fleet.store.recent_turns():
        assert turn.stop_reason is StopReason.COMPLETED
        assert turn.trace_id is not None, "linked to its trace"
    for agent in fleet.store.agent_rows():
        assert agent.completed == 2
        assert agent.current_turn is None
    for worker in workers:
        assert worker.process.wait(timeout=max(1.0, deadline - time.monotonic())) == 0
