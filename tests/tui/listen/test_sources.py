"""One state, two feeders: a turn that runs in this process is counted, charted and
logged by the same code whether the dashboard hears of it through the runtime's
subscription or over OTLP; and the app follows what each source says it can do."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider
from otlp_requests import Event, logs_batch
from test_listen_live import exporting, settle

from pygents import Agent, AgentRegistry, Turn, TurnTimeoutError, subscribe, tool
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.otlp.fleet import CAPABILITIES
from pygents_tui.feeders.process.model import DashboardModel
from pygents_tui.state import (
    POOL_SHOWN,
    QUEUE_SHOWN,
    Action,
    AgentEntry,
    AgentTotals,
    Capabilities,
    Capacity,
    ContextContents,
    LogEntry,
    Reply,
    TurnEntry,
    TurnFacts,
)
from pygents_tui.ui.app import Dashboard
from stuck_tools import blocking_tool

__all__ = ["exporting"]  # a fixture, shared with the live-mode tests

WALL = 1_700_000_000 * 10**9


def totals(agent: AgentTotals) -> tuple[Any, ...]:
    return (
        agent.phase,
        agent.completed,
        agent.failed,
        agent.timed_out,
        agent.cancelled,
        sum(agent.throughput),
    )


def ended(turn: TurnFacts) -> tuple[Any, ...]:
    return (turn.tool, turn.stop_reason, turn.timeout, turn.error is None)


def agent_row(agent: AgentEntry) -> tuple[Any, ...]:
    """What the agents table shows of an agent, less its label (a fleet's carries its
    service) and its error's text (which the OTLP sender cuts to its type)."""
    return (
        agent.name,
        agent.state,
        agent.gone,
        agent.completed,
        agent.failed,
        agent.timed_out,
        agent.cancelled,
        agent.values,
    )


def stored(turn: TurnEntry, agent: AgentEntry) -> tuple[Any, ...]:
    """A stored turn, as the running and timeline panels show it, against its agent."""
    return (
        turn.agent == agent.key,
        turn.agent_label == agent.label,
        turn.tool,
        turn.stop_reason,
        turn.timeout,
        turn.streaming,
        turn.values,
        turn.error is None,
        turn.ended is not None,
        turn.stale,
    )


def turn_ends(log: Iterable[LogEntry]) -> list[tuple[str, str]]:
    """The log's lines for ended turns, with the seconds taken (which each source
    measures on its own clock) and an error's text (which the OTLP sender cuts to
    its type) left out."""
    return [
        (entry.kind, re.sub(r"^(✔ .*) \d+\.\d\ds$", r"\1 …s", entry.text).split(":")[0])
        for entry in log
        if entry.text[:1] in "✔◷✖⊘"
    ]


async def test_a_turn_heard_in_process_and_over_otlp_is_counted_and_logged_alike(
    fleet: FleetModel, exporting: tuple[TracerProvider, LoggerProvider]
) -> None:
    @tool()
    async def ok(word: str) -> str:
        return word.upper()

    @tool()
    async def broken() -> str:
        raise LookupError("nothing here")

    model = DashboardModel()
    subscription = subscribe(model)
    try:
        stuck = blocking_tool()
        agent = Agent("same", "one agent, two feeders", [ok, broken, stuck])
        for word in ("a", "b"):
            await agent.put(Turn(ok, args=[word]))
        assert [value async for _, value in agent.run()] == ["A", "B"]
        await agent.put(Turn(broken))
        with pytest.raises(LookupError, match="nothing here"):
            [value async for _, value in agent.run()]
        await agent.put(Turn(stuck, timeout=0.02))
        with pytest.raises(TurnTimeoutError):
            [value async for _, value in agent.run()]
    finally:
        subscription.close()
    model.store.drain()
    await settle(fleet, exporting)

    local = model.store.agents["same"]
    (remote,) = fleet.store.agent_rows()
    assert isinstance(local, AgentTotals)
    assert isinstance(remote, AgentTotals)
    assert totals(local) == totals(remote) == ("failed", 2, 1, 1, 0, 2)
    assert turn_ends(model.store.log) == turn_ends(fleet.store.log)
    local_turns, remote_turns = list(model.store.recent), fleet.store.recent_turns()
    assert all(isinstance(turn, TurnFacts) for turn in (*local_turns, *remote_turns))
    assert [ended(turn) for turn in local_turns] == [ended(turn) for turn in remote_turns]
    # One store behind both feeders: the same records, and equal rows.
    assert isinstance(local, AgentEntry)
    assert isinstance(remote, AgentEntry)
    assert agent_row(local) == agent_row(remote) == ("same", "failed", False, 2, 1, 1, 0, 2)
    assert model.store.agent_rows() == [local]
    assert all(isinstance(turn, TurnEntry) for turn in (*local_turns, *remote_turns))
    assert [stored(turn, local) for turn in local_turns] == [
        stored(turn, remote) for turn in remote_turns
    ]
    assert [turn.key for turn in model.store.recent_turns("same")] == [t.uuid for t in local_turns]
    assert turn_ends(model.store.log) == [
        ("turn", "✔ ok …s"),
        ("turn", "✔ ok …s"),
        ("failed", "✖ broken"),
        ("timeout", "◷ blocks timed out after 0.02s"),
    ]


def heard_agent(fleet: FleetModel) -> None:
    """One agent of one service, as a snapshot record says it is."""
    attributes = {"gen_ai.agent.name": "planner", "gen_ai.agent.id": "agent-1"}
    snapshot = {**attributes, "pygents.agent.state": "running"}
    fleet.ingest(logs_batch([Event("pygents.agent.snapshot", snapshot, WALL)]))


async def test_pause_on_an_agent_heard_over_otlp_answers_in_one_line_that_it_is_not_offered(
    fleet: FleetModel, until: Any
) -> None:
    heard_agent(fleet)
    app = Dashboard(view=fleet.store)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.selected_agent is not None)
        await pilot.press("p")
        await until(pilot, lambda: bool(app._notifications))
        (toast,) = list(app._notifications)
        line = CAPABILITIES.why_not("pause")
        assert line is not None
        assert toast.message == line
        assert "\n" not in toast.message
        assert toast.severity == "warning"


async def test_an_in_process_source_handed_in_as_a_view_pauses_its_agents_as_it_offers(
    until: Any,
) -> None:
    @tool()
    async def ok() -> None:
        return None

    agent = Agent("pausable", "waits", [ok])
    assert AgentRegistry.find("pausable") is agent
    app = Dashboard(view=DashboardModel().store)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.selected_agent == "pausable")
        await pilot.press("p")
        await until(pilot, lambda: agent.is_paused)
        (toast,) = list(app._notifications)
        assert toast.message == "pausable will pause before its next turn"


def heard_agents(fleet: FleetModel, *names: str) -> list[str]:
    """Agents of one service, as snapshot records say they run; their keys, by name."""
    fleet.ingest(
        logs_batch(
            [
                Event(
                    "pygents.agent.snapshot",
                    {
                        "gen_ai.agent.name": name,
                        "gen_ai.agent.id": f"id-{name}",
                        "pygents.agent.state": "running",
                    },
                    WALL,
                )
                for name in names
            ]
        )
    )
    fleet.store.drain()
    keys = {row.name: row.key for row in fleet.store.agent_rows()}
    return [keys[name] for name in names]


class Mailboxes:
    """A second source of the shape a Redis mailboxes source will have (`Source`):
    it serves the agents it was given, offers pausing them, and notes what it did."""

    def __init__(self, *agents: str) -> None:
        self.agents = set(agents)
        self.done: list[tuple[str, str]] = []

    def serves(self, agent: str) -> bool:
        return agent in self.agents

    def capabilities(self, agent: str | None) -> Capabilities:
        return Capabilities()

    def act(self, action: Action, agent: str) -> Reply:
        self.done.append((action, agent))
        return Reply(f"asked {agent} to pause")


async def test_pause_goes_through_the_source_serving_an_agent_and_its_neighbour_gets_the_otlp_line(
    fleet: FleetModel, until: Any
) -> None:
    served, heard = heard_agents(fleet, "served", "heard")
    mailboxes = Mailboxes(served)
    fleet.store.sources.attach(mailboxes)
    assert fleet.store.sources.of(served).offers("pause")
    assert fleet.store.sources.of(heard).why_not("pause") == CAPABILITIES.why_not("pause")
    # some agent can be paused: the help lists p
    assert fleet.store.sources.of(None).offers("pause")

    app = Dashboard(view=fleet.store)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.selected_agent is not None)
        first = app.selected_agent
        await pilot.press("p")
        await until(pilot, lambda: len(app._notifications) == 1)
        await pilot.press("down")
        await until(pilot, lambda: app.selected_agent not in (None, first))
        await pilot.press("p")
        await until(pilot, lambda: len(app._notifications) == 2)
        by_agent = {first: 0, app.selected_agent: 1}
        toasts = list(app._notifications)
        served_toast, heard_toast = toasts[by_agent[served]], toasts[by_agent[heard]]
    assert mailboxes.done == [("pause", served)]
    assert served_toast.message == f"asked {served} to pause"
    assert served_toast.severity == "information"
    assert heard_toast.message == CAPABILITIES.why_not("pause")
    assert heard_toast.severity == "warning"


def test_an_agent_whose_queue_and_context_a_feeder_set_offers_them_and_its_neighbour_its_sizes(
    fleet: FleetModel,
) -> None:
    known, other = heard_agents(fleet, "known", "other")
    context = ContextContents(Capacity(1, 5), ("hello",), Capacity(1, None), (("a", "b", "c"),))
    store = fleet.store
    assert store.set_contents(known, [("1", "search", "q='x'", "5s")], more=3, context=context)
    assert not fleet.store.set_contents("s9/nobody", [])

    assert store.queued_turns(known) == [("1", "search", "q='x'", "5s"), ("…", "3 more", "", "")]
    assert fleet.store.context_contents(known) == context
    assert fleet.store.unavailable("queue", known) is None
    assert fleet.store.unavailable("context", known) is None
    assert fleet.store.unavailable("queue", other) == CAPABILITIES.panel_note("queue")
    assert fleet.store.unavailable("context", other) == CAPABILITIES.panel_note("context")
    assert fleet.store.queued_turns(other) == []
    assert fleet.store.context_contents(other) is None


async def test_the_queue_and_context_panels_show_what_a_feeder_set_for_a_remote_agent(
    fleet: FleetModel, until: Any, text_of: Callable[[Any], str]
) -> None:
    (known,) = heard_agents(fleet, "known")
    context = ContextContents(Capacity(1, 5), ("remembered",), Capacity(0, None), ())
    fleet.store.set_contents(known, [("1", "search", "q='x'", "5s")], more=3, context=context)
    depth_only = CAPABILITIES.panel_note("queue")
    assert depth_only is not None
    app = Dashboard(view=fleet.store)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.selected_agent == known)
        await pilot.press("1")
        await until(pilot, lambda: "3 more" in text_of(app))
        queue = text_of(app)
        await pilot.press("4")
        await until(pilot, lambda: "remembered" in text_of(app))
    assert "search" in queue
    assert "q='x'" in queue
    assert depth_only not in queue
    assert "(contents not sent)" not in queue


def test_contents_a_feeder_sets_are_bounded_and_what_is_left_out_is_counted(
    fleet: FleetModel,
) -> None:
    (flooded,) = heard_agents(fleet, "flooded")
    huge = "x" * 100_000
    rows = [(str(i), huge, huge, huge) for i in range(1, 1001)]
    context = ContextContents(
        Capacity(5000, None), (huge,) * 5000, Capacity(5000, None), ((huge, huge, huge),) * 5000
    )
    assert fleet.store.set_contents(flooded, rows, more=7, context=context)

    listed = fleet.store.queued_turns(flooded)
    assert len(listed) == QUEUE_SHOWN + 1
    assert listed[-1] == ("…", f"{1000 - QUEUE_SHOWN + 7} more", "", "")
    assert max(len(field) for row in listed for field in row) <= 200
    kept = fleet.store.context_contents(flooded)
    assert kept is not None
    assert len(kept.queue_items) <= 200
    assert len(kept.pool_items) == POOL_SHOWN
    assert max(len(text) for text in kept.queue_items) <= 200
    assert max(len(text) for item in kept.pool_items for text in item) <= 100
    assert kept.pool.size == 5000  # the sizes are the agent's, whatever is listed
