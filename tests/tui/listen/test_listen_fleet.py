"""The fleet model on its own, fed decoded requests on hand-moved clocks: the order
records and spans arrive in, agent state from snapshots and hooks, spans-only
senders, and every bound with its count."""

from __future__ import annotations

import pytest
from fake_clock import FakeClock
from otlp_requests import Event, SpanSpec, logs_batch, logs_batch_of, new_id, spans_batch

from pygents_tui.feeders import FleetLimits, FleetModel
from pygents_tui.state import Capacity

WALL = 1_700_000_000 * 10**9  # the model's wall clock, in nanoseconds
S = 10**9
AGENT = {"gen_ai.agent.name": "planner", "gen_ai.agent.id": "agent-1"}


def make(clock: FakeClock, limits: FleetLimits | None = None) -> FleetModel:
    return FleetModel(clock=clock, wall=lambda: WALL, stale_after=60.0, limits=limits)


def start(uuid: str, tool: str = "fetch", at: int = WALL, **extra: object) -> Event:
    attributes = {**AGENT, "pygents.turn.uuid": uuid, "gen_ai.tool.name": tool}
    attributes |= {"pygents.turn.timeout": 5.0, **extra}
    return Event("pygents.turn.start", attributes, at)


def end(uuid: str, reason: str = "completed", at: int = WALL, **extra: object) -> Event:
    attributes = {**AGENT, "pygents.turn.uuid": uuid, "pygents.turn.stop_reason": reason}
    return Event("pygents.turn.end", attributes | extra, at)


def turn_span(uuid: str, trace: bytes, span_id: bytes, **extra: object) -> SpanSpec:
    attributes = {"pygents.turn.uuid": uuid, "pygents.tool.name": "fetch"}
    return SpanSpec("turn fetch", trace, span_id, attributes=attributes | extra)


def test_a_turn_runs_against_its_timeout_on_the_model_clock(clock: FakeClock) -> None:
    fleet = make(clock)
    fleet.ingest(logs_batch([start("t1", at=WALL - 2 * S)]))
    fleet.store.drain()

    (turn,) = fleet.store.running_turns()
    assert turn.started == pytest.approx(998.0), "sent two seconds ago"
    clock.advance(1.5)
    assert turn.elapsed_at(fleet.store.clock()) == pytest.approx(3.5)
    assert turn.timeout == 5.0
    assert turn.details()[:2] == [("service", "svc@i-1"), ("turn", "t1")]


def test_a_sender_clock_far_off_moves_times_by_at_most_the_lag_bound(clock: FakeClock) -> None:
    fleet = make(clock)
    fleet.ingest(logs_batch([start("behind", at=WALL - 3600 * S), start("ahead", at=WALL + S)]))
    fleet.store.drain()

    started = {t.uuid: t.started for t in fleet.store.running_turns()}
    assert started == {"behind": 1000.0 - 30.0, "ahead": 1000.0}


def test_an_end_and_a_span_close_a_turn_once_in_either_order(clock: FakeClock) -> None:
    fleet = make(clock)
    trace = new_id(16)
    fleet.ingest(logs_batch([start("a", at=WALL - S), start("b", at=WALL - S)]))
    fleet.ingest(logs_batch([end("a", at=WALL)]))
    fleet.ingest(spans_batch([turn_span("b", trace, new_id(8), **{"pygents.values": 3})]))
    fleet.store.drain()
    fleet.ingest(spans_batch([turn_span("a", trace, new_id(8))]))
    fleet.ingest(logs_batch([end("b", "error", **{"error.type": "ValueError"})]))
    fleet.store.drain()

    (agent,) = fleet.store.agent_rows()
    assert (agent.completed, agent.failed, agent.values) == (2, 0, 3)
    assert [t.uuid for t in fleet.store.recent_turns()] == ["a", "b"]
    assert all(t.trace_id == trace.hex() for t in fleet.store.recent_turns())
    first = fleet.store.find_turn("a")
    assert first is not None
    assert first.elapsed_at(clock.now) == pytest.approx(1.0)


def test_a_start_arriving_after_its_end_does_not_reopen_the_turn(clock: FakeClock) -> None:
    fleet = make(clock)
    fleet.ingest(logs_batch([end("late", "timeout", **{"error.type": "TurnTimeoutError"})]))
    fleet.ingest(logs_batch([start("late")]))
    fleet.store.drain()

    assert fleet.store.running_turns() == []
    (agent,) = fleet.store.agent_rows()
    assert agent.timed_out == 1


def test_a_returned_value_counts_once_and_a_routed_output_never_in_any_order(
    clock: FakeClock,
) -> None:
    """What a turn that does not stream returned counts as its one value (``run``
    counts it so), unless its span or end record says it was no value (a turn or a
    context item its run routed): then never, whichever of start, span and end came
    first."""
    fleet = make(clock)
    trace = new_id(16)
    returns = {"pygents.turn.streaming": False}
    routed = {"pygents.turn.output_kind": "turn"}
    fleet.ingest(logs_batch([start("value", **returns), end("value")]))
    fleet.ingest(logs_batch([start("start-first", **returns), end("start-first", **routed)]))
    fleet.ingest(logs_batch([end("end-first", **routed), start("end-first", **returns)]))
    fleet.ingest(logs_batch([start("span-first", **returns)]))
    fleet.ingest(spans_batch([turn_span("span-first", trace, new_id(8), **routed)]))
    fleet.ingest(logs_batch([end("span-first")]))
    fleet.store.drain()

    (agent,) = fleet.store.agent_rows()
    assert (agent.completed, agent.values) == (4, 1)
    counted = {t.uuid: t.values for t in fleet.store.recent_turns()}
    assert counted == {"value": 1, "start-first": 0, "end-first": 0, "span-first": 0}


def test_value_counts_only_grow_whatever_order_they_arrive_in(clock: FakeClock) -> None:
    fleet = make(clock)
    uuid = {"pygents.turn.uuid": "s"}
    values = [
        Event("pygents.turn.on_value", AGENT | uuid | {"pygents.turn.values": n}) for n in (1, 3, 2)
    ]
    preview = {"pygents.turn.values": 4, "pygents.value.preview": "[b]4[/b]"}
    values.append(Event("pygents.turn.on_value", AGENT | uuid | preview))
    values.append(Event("pygents.turn.on_value", AGENT | uuid))  # no count: one more
    fleet.ingest(logs_batch([start("s", streaming=True), *values]))
    fleet.store.drain()

    (agent,) = fleet.store.agent_rows()
    assert agent.values == 5
    total, tail = fleet.store.value_tail(agent.key)
    assert total == 1
    assert [(v.tool, v.text) for v in tail] == [("fetch", "[b]4[/b]")]
    assert fleet.store.unavailable("values") is None
    fleet.ingest(logs_batch([end("s", **{"pygents.turn.values": 9})]))
    fleet.store.drain()
    assert agent.values == 9


def test_snapshots_and_hooks_carry_state_depth_context_and_the_current_turn(
    clock: FakeClock,
) -> None:
    fleet = make(clock)
    snapshot = {
        "pygents.agent.state": "running",
        "pygents.agent.queue.depth": 3,
        "pygents.context_queue.size": 2,
        "pygents.context_queue.limit": 10,
        "pygents.context_pool.size": 1,
        "pygents.agent.current_turn.uuid": "cur",
    }
    fleet.ingest(
        logs_batch([start("cur", "think"), Event("pygents.agent.snapshot", AGENT | snapshot)])
    )
    fleet.store.drain()
    (agent,) = fleet.store.agent_rows()
    assert (agent.state, agent.queue_depth) == ("running", 3)
    assert agent.context_queue == Capacity(2, 10)
    assert agent.context_pool == Capacity(1, None)
    assert (agent.current_turn, agent.current_tool) == ("s1/cur", "think")

    fleet.ingest(
        logs_batch(
            [
                Event(
                    "pygents.agent.after_put",
                    AGENT | {"pygents.agent.queue.depth": 4, "gen_ai.tool.name": "x"},
                ),
                Event("pygents.agent.on_pause", AGENT | {"pygents.agent.paused": True}),
                Event(
                    "pygents.context_pool.on_evict",
                    AGENT
                    | {
                        "pygents.context.size": 7,
                        "pygents.context.limit": 8,
                        "pygents.context.item.id": "doc-3",
                    },
                ),
            ]
        )
    )
    fleet.store.drain()
    assert (agent.state, agent.queue_depth, agent.evictions) == ("paused", 4, 1)
    assert agent.context_pool == Capacity(7, 8)
    texts = [entry.text for entry in fleet.store.event_log()[1]]
    assert texts[-3:] == ["← x queued", "‖ paused", "♻ pool evicted doc-3"]

    fleet.ingest(logs_batch([Event("pygents.agent.on_resume", AGENT), end("cur")]))
    fleet.ingest(
        logs_batch([Event("pygents.agent_run.end", AGENT | {"pygents.stop_reason": "completed"})])
    )
    fleet.ingest(
        logs_batch([Event("pygents.agent.snapshot", AGENT | {"pygents.agent.state": "idle"})])
    )
    fleet.store.drain()
    assert agent.state == "finished", "an idle snapshot keeps a finished run's state"
    assert agent.current_turn is None
    assert fleet.store.unavailable("queue") == "queue contents are not sent over OTLP; depth only"


def test_with_spans_only_turns_count_for_their_agent_once_its_run_span_arrives(
    clock: FakeClock,
) -> None:
    fleet = make(clock)
    trace, run = new_id(16), new_id(8)
    turns = [turn_span(f"u{i}", trace, new_id(8)) for i in range(3)]
    for spec in turns:
        spec.parent_id = run
    turns[2].attributes = {**turns[2].attributes, "pygents.turn.stop_reason": "error"}
    fleet.ingest(spans_batch(turns))
    fleet.store.drain()
    assert fleet.store.agent_rows() == []
    assert [t.agent for t in fleet.store.recent_turns()] == [None, None, None]
    assert fleet.store.unavailable("running") is not None

    agent_span = SpanSpec(
        "invoke_agent planner",
        trace,
        run,
        attributes=AGENT
        | {"gen_ai.operation.name": "invoke_agent", "pygents.agent.stop_reason": "completed"},
    )
    fleet.ingest(spans_batch([agent_span]))
    fleet.store.drain()

    (agent,) = fleet.store.agent_rows()
    assert (agent.completed, agent.failed, agent.state) == (2, 1, "finished")
    assert {t.agent for t in fleet.store.recent_turns()} == {agent.key}


def test_the_services_bound_evicts_the_least_recently_heard_of_and_counts_it(
    clock: FakeClock,
) -> None:
    fleet = make(clock, limits=FleetLimits(services=2))
    for name in ("a", "b", "c"):
        clock.advance(1)
        fleet.ingest(logs_batch([start(f"{name}-turn")], service=name))
        fleet.store.drain()

    assert sorted(s.name for s in fleet.store.service_rows()) == ["b", "c"]
    assert fleet.store.counters()["services_evicted"] == 1
    assert {t.service.name for t in fleet.store.running_turns()} == {"b", "c"}
    assert fleet.store.find_turn("a-turn") is None


def test_a_request_naming_more_services_than_the_bound_evicts_and_counts_each_once(
    clock: FakeClock,
) -> None:
    fleet = make(clock, limits=FleetLimits(services=256))
    names = [f"svc-{n}" for n in range(300)]
    beat = [Event("pygents.process.heartbeat", {}, WALL)]
    fleet.ingest(logs_batch_of([(name, "i-1", beat) for name in names]))
    fleet.store.drain()

    assert fleet.store.counters()["services_evicted"] == 300 - 256
    assert sorted(s.name for s in fleet.store.service_rows()) == sorted(names[44:])
    assert sum(1 for entry in fleet.store.log if entry.text == "new service") == 300


def test_the_eviction_count_equals_the_names_evicted_across_requests(clock: FakeClock) -> None:
    fleet = make(clock, limits=FleetLimits(services=256))
    beat = [Event("pygents.process.heartbeat", {}, WALL)]
    for first in range(0, 3000, 500):
        groups = [(f"new-{n}", "i-1", beat) for n in range(first, first + 500)]
        clock.advance(1)
        fleet.ingest(logs_batch_of(groups))
    fleet.store.drain()

    assert fleet.store.counters()["services_evicted"] == 3000 - 256
    assert len(fleet.store.service_rows()) == 256


def test_the_agents_bound_evicts_the_least_recently_heard_of_and_counts_it(
    clock: FakeClock,
) -> None:
    fleet = make(clock, limits=FleetLimits(agents=3))
    events = [
        Event("pygents.agent.snapshot", {"gen_ai.agent.id": f"id-{i}", "gen_ai.agent.name": "w"})
        for i in range(5)
    ]
    fleet.ingest(logs_batch(events))
    fleet.store.drain()

    assert [a.key for a in fleet.store.agent_rows()] == ["s1/id-2", "s1/id-3", "s1/id-4"]
    assert len(fleet.store.services[("svc", "i-1")].agents) == 3
    assert fleet.store.counters()["agents_evicted"] == 2


def test_a_full_inbox_drops_the_oldest_batches_and_counts_them(clock: FakeClock) -> None:
    first = logs_batch([start(f"old-{i}") for i in range(10)])
    fleet = make(clock, limits=FleetLimits(pending_bytes=first.size + 1))
    fleet.ingest(first)
    fleet.ingest(logs_batch([start("new")]))
    assert fleet.store.counters()["dropped"] == 10
    assert fleet.arrived.is_set()

    assert fleet.store.drain()
    assert [t.uuid for t in fleet.store.running_turns()] == ["new"]
    assert not fleet.arrived.is_set()


def test_rings_and_running_turns_stay_bounded_and_say_what_they_dropped(clock: FakeClock) -> None:
    limits = FleetLimits(log=5, service_log=3, running=4, values=2, recent=3, turns=50)
    fleet = make(clock, limits=limits)
    preview = {"pygents.value.preview": "v", "pygents.turn.uuid": "r-0"}
    events = [start("r-0")]
    events += [Event("pygents.turn.on_value", AGENT | preview) for _ in range(5)]
    events += [start(f"r-{i}") for i in range(1, 10)]
    fleet.ingest(logs_batch(events))
    fleet.ingest(logs_batch([end(f"r-{i}") for i in range(6, 10)]))
    fleet.store.drain()

    assert fleet.store.running_turns() == []  # the four newest ran; the rest were evicted
    assert fleet.store.counters()["running_evicted"] == 6
    total, tail = fleet.store.value_tail("s1/agent-1")
    assert (total, len(tail)) == (5, 2)
    assert len(fleet.store.event_log()[1]) == 5
    assert fleet.store.counters()["log_dropped"] == fleet.store.event_log()[0] - 5
    (service,) = fleet.store.service_rows()
    assert len(service.log) == 3
    assert service.log.dropped > 0
    assert len(fleet.store.recent_turns()) == 3


def test_a_running_turn_pushed_out_of_the_turn_index_still_ends(clock: FakeClock) -> None:
    fleet = make(clock, limits=FleetLimits(turns=2))
    fleet.ingest(logs_batch([start("first", at=WALL - 3 * S), start("second"), start("third")]))
    fleet.store.drain()
    fleet.ingest(logs_batch([end("first")]))
    fleet.store.drain()

    assert [t.uuid for t in fleet.store.running_turns()] == ["second", "third"]
    (ended,) = fleet.store.recent_turns()
    assert ended.uuid == "first"
    assert ended.elapsed_at(clock.now) == pytest.approx(3.0)
    assert fleet.store.agent_rows()[0].completed == 1


def test_throughput_counts_completed_turns_per_second_and_quiet_seconds_as_zero(
    clock: FakeClock,
) -> None:
    fleet = make(clock)
    fleet.ingest(logs_batch([start("x"), end("x"), start("y"), end("y")]))
    fleet.store.drain()
    (agent,) = fleet.store.agent_rows()
    assert list(agent.throughput)[-1] == 2

    clock.advance(3)
    assert fleet.store.drain()
    assert list(agent.throughput)[-4:] == [2, 0, 0, 0]
    assert len(agent.throughput) == 60


def test_any_record_even_an_unknown_one_brings_a_stale_service_back(clock: FakeClock) -> None:
    fleet = make(clock)
    fleet.ingest(logs_batch([Event("pygents.process.heartbeat")]))
    fleet.store.drain()
    (service,) = fleet.store.service_rows()
    clock.advance(61)
    fleet.store.drain()
    assert service.stale
    fleet.ingest(logs_batch([Event("unrelated.event")]))
    fleet.store.drain()
    assert not service.stale
    assert fleet.store.agent_rows() == []
