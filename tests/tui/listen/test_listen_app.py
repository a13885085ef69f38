"""The dashboard in listen mode, driven with Pilot: the app ``pygents-tui listen``
builds (``listen_app``), fed by the real receiver on 127.0.0.1, which the real
OpenTelemetry SDK and OTLP exporters (gRPC and HTTP) send to.

``await sender.sent()`` returns once the receiver has answered, i.e. once the batch
is in the fleet model; ``until`` then lets the app's timer fold and paint it. The
fleet model's monotonic clock is the test's, so that staleness is a step of the
clock, not a wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from fake_clock import FakeClock
from otlp_sender import MakeSender
from textual.widgets import DataTable

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens import HelpScreen, InspectorScreen

SIZE = (130, 40)
TextOf = Callable[[Dashboard], str]


@pytest.fixture
def clock() -> FakeClock:
    """The fleet model's monotonic clock; it moves when the test moves it."""
    return FakeClock(5000.0)


@pytest.fixture
def fleet(clock: FakeClock) -> FleetModel:
    """Overrides the listener fixtures' model: on the test's clock, stale after 5 s."""
    return FleetModel(clock=clock, wall=time.time_ns, stale_after=5.0)


def app_of(fleet: FleetModel, receiver: Receiver) -> Dashboard:
    """The app ``pygents-tui listen`` runs, for ``fleet`` fed by ``receiver``."""
    return listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)


def agents_table(app: Dashboard) -> DataTable[Any]:
    return app.screen.query_one("#agents", DataTable)


def agent_cells(app: Dashboard) -> dict[str, list[str]]:
    """The agents table's rows by agent label: every cell as shown."""
    table = agents_table(app)
    rows = (table.get_row_at(index) for index in range(table.row_count))
    return {str(row[0]): [str(cell) for cell in row] for row in rows}


async def test_agents_of_two_services_with_the_same_name_are_two_rows(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any, text_of: TextOf
) -> None:
    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE) as pilot:
        checkout = senders("grpc", service="checkout", instance="pod-a")
        billing = senders("http", service="billing", instance="pod-b")
        for sender, timeout in ((checkout, 9.0), (billing, 4.0)):
            agent = sender.agent("planner")
            run = sender.run_start(agent)
            sender.turn_start(agent, run, "fetch", timeout=timeout)
            await sender.sent()

        await until(pilot, lambda: len(agent_cells(app)) == 2)
        rows = agent_cells(app)
        assert sorted(rows) == ["billing@pod-b/planner", "checkout@pod-a/planner"]
        assert all(cells[1] == "running" and cells[3] == "fetch" for cells in rows.values())
        screen = text_of(app)
        assert "listen · gRPC 127.0.0.1:" in screen  # the title says where it listens
        assert "2 services · 2 agent(s) · 2 turn(s) running" in screen
        for label in rows:
            assert label in screen
        # Both turns run against their own timeouts in the Running panel.
        assert "left" in screen
        assert screen.count("fetch") >= 4  # two agent rows and two running bars


async def test_the_status_line_counts_processes_apart_from_the_services_they_run(
    fleet: FleetModel,
    receiver: Receiver,
    senders: MakeSender,
    clock: FakeClock,
    until: Any,
    text_of: TextOf,
) -> None:
    """Two processes of ``checkout`` and one of ``billing``: three processes of two
    services, not three services."""
    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE) as pilot:
        for service, instance in (("checkout", "a"), ("checkout", "b"), ("billing", "c")):
            sender = senders("grpc", service=service, instance=instance)
            sender.run_start(sender.agent("planner"))
            await sender.sent()
        await until(pilot, lambda: "3 processes of 2 services · 3 agent(s)" in text_of(app))

        clock.advance(6.0)  # past --stale-after: staleness is the processes'
        await until(pilot, lambda: "3 processes of 2 services (3 stale) ·" in text_of(app))


async def test_a_process_that_stops_sending_is_marked_stale_not_removed(
    fleet: FleetModel,
    receiver: Receiver,
    senders: MakeSender,
    clock: FakeClock,
    until: Any,
    text_of: TextOf,
) -> None:
    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("grpc", service="worker", instance="w-1")
        agent = sender.agent("crawler")
        run = sender.run_start(agent)
        sender.turn_start(agent, run, "crawl", timeout=30.0)
        await sender.sent()
        await until(
            pilot, lambda: agent_cells(app).get("worker@w-1/crawler", [""] * 2)[1] == "running"
        )

        clock.advance(6.0)  # past --stale-after, with no news from the process
        await until(pilot, lambda: agent_cells(app)["worker@w-1/crawler"][1] == "stale")
        screen = text_of(app)
        assert "1 service (1 stale)" in screen
        assert "stale: no news" in screen  # its running turn, marked
        assert "crawl" in screen  # ... and still listed

        sender.heartbeat()  # news again: no longer stale
        await sender.sent()
        await until(pilot, lambda: agent_cells(app)["worker@w-1/crawler"][1] == "running")
        assert "stale" not in text_of(app)


async def test_the_inspector_shows_the_turns_trace_with_spans_pygents_did_not_make(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any, text_of: TextOf
) -> None:
    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("http", service="weather", instance="w-1")
        agent = sender.agent("forecaster")
        run = sender.run_start(agent)
        turn = sender.turn_start(agent, run, "forecast", timeout=5.0)
        tool = sender.tool_span(turn)
        call = sender.foreign_span("GET /v1/forecast", tool)
        call.set_attribute("url.full", "https://api.example/v1/forecast?city=[bold]Oslo")
        call.end()
        query = sender.foreign_span("SELECT cities", tool)
        query.set_attribute("db.query.text", "SELECT name FROM cities")
        query.end()
        tool.end()
        sender.turn_end(turn)
        sender.run_end(agent, run)
        await sender.sent()

        def ended() -> bool:
            found = fleet.store.find_turn(turn.uuid)
            return found is not None and found.ended is not None

        await until(pilot, ended)
        found = fleet.store.find_turn(turn.uuid)
        assert found is not None
        app.action_inspect(found.key)
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        assert "forecast (coroutine) on weather@w-1/forecaster" in screen
        assert "completed after" in screen
        assert turn.trace_id in screen
        assert "trace spans  5 spans of its trace so far" in screen
        lines = screen.splitlines()

        def indent(name: str) -> int:
            (line,) = [line for line in lines if f" {name} " in line]
            return line.index(name)

        # The tree: the run, its turn, the tool, and inside the tool an HTTP call and
        # a query that are not pygents' own.
        assert indent("invoke_agent forecaster") < indent("turn forecast")
        assert indent("turn forecast") < indent("execute_tool forecast")
        assert indent("execute_tool forecast") < indent("GET /v1/forecast")
        assert indent("GET /v1/forecast") == indent("SELECT cities")
        # Their telling attributes, shown as plain text (the URL is markup-like).
        assert "url.full=https://api.example/v1/forecast?city=[bold]Oslo" in screen
        assert "db.query.text=SELECT name FROM cities" in screen
        assert "client" in screen  # the span kind of the calls


async def test_the_inspector_says_what_the_turns_and_the_spans_figures_measure(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any, text_of: TextOf
) -> None:
    """The turn's seconds run from its start to its end as its process stamped them;
    the trace's figure, from the first span received to the last one's end: with the
    turn's own span not yet there, it is no measure of the turn, and says so (a turn
    read "completed after 0.979s of 1.2s" beside "2 span(s) over 619.3ms")."""

    def dialog() -> list[str]:
        """The inspector's lines, without its frame and what shows around it."""
        lines = [line.split("█") for line in text_of(app).splitlines()]
        return [parts[1].strip() for parts in lines if len(parts) > 2]

    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("grpc", service="weather", instance="w-1")
        agent = sender.agent("forecaster")
        run = sender.run_start(agent)
        turn = sender.turn_start(agent, run, "forecast", timeout=1.2)
        tool = sender.tool_span(turn)
        sender.foreign_span("chat gpt-x", tool).end()
        tool.end()
        sender.turn_end(turn, end_span=False)  # its record now, its span later
        await sender.sent()

        def ended() -> bool:
            found = fleet.store.find_turn(turn.uuid)
            return found is not None and found.ended is not None

        await until(pilot, ended)
        found = fleet.store.find_turn(turn.uuid)
        assert found is not None
        app.action_inspect(found.key)
        await until(pilot, lambda: "trace spans  2 spans" in text_of(app))
        lines = dialog()
        (state,) = [line for line in lines if line.startswith("state ")]
        assert state.startswith("state     completed after ")
        assert state.endswith("s of 1.2s (its timeout)")
        assert "timed     start to end, both stamped by the agent's process" in lines
        at = lines.index("trace spans  2 spans of its trace so far")
        assert lines[at + 1].endswith(" from the first one's start to the last one's end")
        assert lines[at + 2] == "the turn's own span is not among them (yet)"

        turn.span.end(end_time=sender.now_ns())
        await sender.sent()
        await until(pilot, lambda: "trace spans  3 spans" in text_of(app))
        lines = dialog()
        at = lines.index("trace spans  3 spans of its trace so far")
        assert lines[at + 2].startswith("the turn's own span: ")


async def test_what_is_not_sent_over_otlp_is_said_in_one_line_per_panel(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any, text_of: TextOf
) -> None:
    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        sender = senders("grpc", service="notes", instance="n-1")
        agent = sender.agent("scribe")
        run = sender.run_start(agent)
        sender.snapshot(
            agent,
            "running",
            **{
                "pygents.agent.queue.depth": 3,
                "pygents.context_queue.size": 2,
                "pygents.context_queue.limit": 10,
                "pygents.context_pool.size": 4,
            },
        )
        turn = sender.turn_start(agent, run, "write", streaming=True)
        sender.value(turn)  # counted; no preview (content capture off)
        await sender.sent()
        await until(pilot, lambda: agent_cells(app).get("notes@n-1/scribe", [""] * 6)[5] == "1")

        await pilot.press("1")
        await until(pilot, lambda: "3 waiting" in text_of(app))
        assert "queue contents are not sent over OTLP; depth only" in text_of(app)

        await pilot.press("3")
        line = "values are counted; previews are sent only with content capture on"
        await until(pilot, lambda: line in text_of(app))

        await pilot.press("4")
        await until(
            pilot, lambda: "context items are not sent over OTLP; sizes only" in text_of(app)
        )
        screen = text_of(app)
        assert "queue  2/10" in screen
        assert "pool   4/∞ · evictions 0" in screen

        await pilot.press("p")  # nothing to pause from here
        await until(pilot, lambda: "cannot pause or resume remote agents" in text_of(app))

        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert "read-only: pygents-tui listen only receives telemetry" in text_of(app)


async def test_with_spans_only_the_agents_panel_says_live_records_are_off(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any, text_of: TextOf
) -> None:
    app = app_of(fleet, receiver)
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("grpc", service="legacy", instance="l-1")
        run = sender.tracer.start_span(
            "invoke_agent sorter",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sorter"},
        )
        run.end()
        await sender.sent()
        line = "no live records yet: turns show when their spans end (turn live mode on)"
        await until(pilot, lambda: line in text_of(app))
        assert "legacy@l-1/sorter" in text_of(app)
