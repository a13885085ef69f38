"""The store sorts its agent rows once per change of the list (`Tables.rows_version`),
not on every read: each feeder's write that adds, removes, renames or moves an agent
must show in the next `agent_rows()`, and a refresh that changes none of that must
not sort the agents again. One test per way an agent enters, leaves or moves: the
OTLP feeder (which a replayed recording goes through too), this process's agents,
and the Redis mailboxes' survey."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fake_clock import FakeClock
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from otlp_requests import Event, logs_batch

from pygents import Agent, AgentRegistry, subscribe, tool
from pygents.redis import MailboxStats, MailboxSurvey, Survey
from pygents_tui.feeders import FleetLimits, FleetModel
from pygents_tui.feeders.process.model import DashboardModel
from pygents_tui.feeders.redis.store import StoreAdapter
from pygents_tui.listen.decode import Batch, Limits, decode
from pygents_tui.state import Store
from pygents_tui.ui.widgets._panel import find_row

WALL = 1_700_000_000 * 10**9


def fleet_model(clock: FakeClock, **limits: int) -> FleetModel:
    return FleetModel(
        clock=clock, wall=lambda: WALL, stale_after=60.0, limits=FleetLimits(**limits)
    )


def hook(agent_id: str, name: str) -> Event:
    """A live record that names an agent (its queue depth: nothing else changes)."""
    attributes = {"gen_ai.agent.id": agent_id, "gen_ai.agent.name": name}
    return Event("pygents.agent.after_put", attributes | {"pygents.agent.queue.depth": 0}, WALL)


def from_run(service: str, instance: str, pid: int, events: Sequence[Event]) -> Batch:
    """A request from one run of a process (its pid in the resource: a restart is told
    by it), as `logs_batch` builds one."""
    request = logs_service_pb2.ExportLogsServiceRequest()
    group = request.resource_logs.add()
    resource = {"service.name": service, "service.instance.id": instance}
    group.resource.attributes.extend(
        [KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in resource.items()]
    )
    group.resource.attributes.append(KeyValue(key="process.pid", value=AnyValue(int_value=pid)))
    records = group.scope_logs.add()
    records.scope.name = "pygents_otel.live"
    for event in events:
        attributes = [
            KeyValue(key=k, value=AnyValue(string_value=str(v)))
            for k, v in event.attributes.items()
        ]
        records.log_records.append(
            LogRecord(time_unix_nano=event.time_ns, event_name=event.name, attributes=attributes)
        )
    return decode("logs", request.SerializeToString(), json_body=False, limits=Limits())


class Watch:
    """The store's rows as one reads them, and whether the last change moved
    `rows_version` (a write that changed the list without moving it would leave
    a stale sorted copy behind)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.version = store.rows_version

    def labels(self) -> list[str]:
        labels = [row.label for row in self.store.agent_rows()]
        assert self.store.rows_version != self.version, "the change did not move rows_version"
        self.version = self.store.rows_version
        return labels


# -- the OTLP feeder (and a recording replayed through it) --------------------------------


def test_an_agent_heard_of_for_the_first_time_is_listed_in_its_place(clock: FakeClock) -> None:
    fleet = fleet_model(clock)
    fleet.ingest(logs_batch([hook("b", "bravo")]))
    fleet.store.drain()
    watch = Watch(fleet.store)
    assert [row.label for row in fleet.store.agent_rows()] == ["svc@i-1/bravo"]

    fleet.ingest(logs_batch([hook("a", "alpha")]))
    fleet.store.drain()
    assert watch.labels() == ["svc@i-1/alpha", "svc@i-1/bravo"]


def test_an_agent_renamed_by_its_process_moves_to_its_new_place(clock: FakeClock) -> None:
    fleet = fleet_model(clock)
    fleet.ingest(logs_batch([hook("a", "alpha"), hook("b", "bravo")]))
    fleet.store.drain()
    watch = Watch(fleet.store)

    fleet.ingest(logs_batch([hook("a", "zulu")]))
    fleet.store.drain()
    assert watch.labels() == ["svc@i-1/bravo", "svc@i-1/zulu"]


def test_an_agent_evicted_past_the_bound_leaves_the_rows(clock: FakeClock) -> None:
    fleet = fleet_model(clock, agents=2)
    fleet.ingest(logs_batch([hook("a", "alpha"), hook("b", "bravo")]))
    fleet.store.drain()
    watch = Watch(fleet.store)

    fleet.ingest(logs_batch([hook("c", "charlie")]))
    fleet.store.drain()
    assert watch.labels() == ["svc@i-1/bravo", "svc@i-1/charlie"]
    assert fleet.store.counters()["agents_evicted"] == 1


def test_a_restarted_process_s_old_agents_leave_the_rows(clock: FakeClock) -> None:
    fleet = fleet_model(clock)
    fleet.ingest(from_run("box", "pod-1", 100, [hook("a", "alpha")]))
    fleet.store.drain()
    watch = Watch(fleet.store)

    fleet.ingest(from_run("box", "pod-1", 200, [hook("b", "bravo")]))
    fleet.store.drain()
    assert watch.labels() == ["box@pod-1/bravo"]
    assert fleet.store.counters()["restarts"] == 1


def test_forgetting_stale_services_and_clearing_finished_agents_empty_the_rows(
    clock: FakeClock,
) -> None:
    fleet = fleet_model(clock)
    fleet.ingest(logs_batch([hook("a", "alpha")], service="quiet"))
    fleet.ingest(logs_batch([hook("b", "bravo")], service="done"))
    fleet.ingest(logs_batch([Event("pygents.process.goodbye", {}, WALL)], service="done"))
    fleet.store.drain()
    watch = Watch(fleet.store)

    assert fleet.store.clear_finished() == 1
    assert watch.labels() == ["quiet@i-1/alpha"]
    clock.advance(61.0)
    fleet.store.drain()
    assert fleet.store.forget_stale() == 1
    assert watch.labels() == []


# -- this process's agents ------------------------------------------------------------------


async def test_this_process_s_agents_move_after_the_others_when_they_leave_and_back(
    clock: FakeClock,
) -> None:
    @tool()
    async def noop() -> None:
        return None

    model = DashboardModel(clock=clock, max_finished=1)
    with subscribe(model):
        first = Agent("alpha", "stays", [noop])
        model.store.drain()
        watch = Watch(model.store)
        second = Agent("bravo", "leaves", [noop])
        model.store.drain()
        assert watch.labels() == ["alpha", "bravo"]

        AgentRegistry.discard("alpha", first)
        model.store.drain()
        assert watch.labels() == ["bravo", "alpha"], "a finished agent goes after the others"

        first = Agent("alpha", "the same name again", [noop])
        model.store.drain()
        assert watch.labels() == ["alpha", "bravo"]

        AgentRegistry.discard("alpha", first)
        model.store.drain()
        AgentRegistry.discard("bravo", second)
        model.store.drain()
        assert watch.labels() == ["bravo"], "past max_finished, the oldest is forgotten"


# -- the Redis mailboxes' survey ------------------------------------------------------------


def survey(*names: str) -> Survey:
    mailboxes = (
        MailboxSurvey(MailboxStats(name, 0, 0, 0, 0), False, (), (), (), (), 0) for name in names
    )
    return Survey(1_767_225_600.0, tuple(mailboxes))


def test_a_mailbox_that_comes_or_goes_in_a_survey_changes_the_rows(clock: FakeClock) -> None:
    fleet = fleet_model(clock)
    adapter = StoreAdapter(fleet, "pygents")
    adapter.apply(survey("planner"))
    watch = Watch(fleet.store)

    adapter.apply(survey("checker", "planner"))
    assert watch.labels() == ["redis/checker", "redis/planner"]
    adapter.apply(survey("planner"))
    assert watch.labels() == ["redis/planner"]


# -- reading ----------------------------------------------------------------------------------


def test_a_refresh_that_changes_no_agent_s_place_reads_the_rows_sorted_before(
    clock: FakeClock, monkeypatch: Any
) -> None:
    fleet = fleet_model(clock)
    fleet.ingest(logs_batch([hook(f"id-{n}", f"agent-{n}") for n in range(50)]))
    fleet.store.drain()
    first = fleet.store.agent_rows()
    sorts: list[int] = []
    real_sorted: Callable[..., Any] = sorted
    monkeypatch.setattr("builtins.sorted", lambda *a, **k: sorts.append(1) or real_sorted(*a, **k))

    fleet.ingest(logs_batch([hook("id-7", "agent-7")]))  # known agent, same name
    fleet.store.drain()
    again = fleet.store.agent_rows()
    assert again == first
    assert again is not first, "each reader gets a list of its own"
    assert sorts == []
    assert find_row(fleet.store, first[3].key) is first[3]
    assert find_row(fleet.store, "no such agent") is None
