"""Stuck work and token use in ``pygents-tui listen``, driven with Pilot.

A fleet of one service is fed OTLP requests built and decoded as a sender's would be
(``otlp_requests``): a writer agent's completed ``draft`` turns teach the dashboard
the tool's pace, then one ``draft`` runs far longer; a model call's span inside it
carries ``gen_ai.usage.*`` counts. The fleet's clock is the test's, so "past three
times the p95" and "stale" are steps of the clock, not waits. The configuration
(price table, budget) is applied the way the command line applies it,
``Config.configure(app)``.
"""

from __future__ import annotations

from typing import Any

from fake_clock import FakeClock
from on_screen import screen_lines
from otlp_requests import Event, SpanSpec, logs_batch, spans_batch
from textual.pilot import Pilot
from textual.widgets import Static

from pygents_tui.cli._config import Config
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.state import Budget, Price
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.widgets import AgentsTable, RunningPanel

S = 10**9
WALL = 1_767_225_600 * S
SIZE = (130, 30)
WRITER = {"gen_ai.agent.name": "writer", "gen_ai.agent.id": "writer-1"}
TRACE = bytes([0xC4]) * 16
LEARNED = 10  # the stuck watch's min_samples: a p95 from fewer is no p95


class Clock(FakeClock):
    def wall(self) -> int:
        return WALL + round((self.now - 1000.0) * S)


def turn(uuid: str, kind: str, at: int, **extra: Any) -> Event:
    attributes = {**WRITER, "pygents.turn.uuid": uuid, "gen_ai.tool.name": "draft", **extra}
    return Event(f"pygents.turn.{kind}", attributes, at)


def model_call(input_tokens: int, output_tokens: int, seed: int = 1) -> SpanSpec:
    return SpanSpec(
        "chat gpt-4o",
        TRACE,
        bytes([0xC4, seed]) * 4,
        start_ns=WALL,
        end_ns=WALL + S,
        attributes={
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": input_tokens,
            "gen_ai.usage.output_tokens": output_tokens,
        },
    )


class Scene:
    """The writer's learned turns, then its long one (``t-long``, in trace TRACE)."""

    def __init__(self, config: Config | None = None, stale_after: float = 60.0) -> None:
        self.clock = Clock()
        self.fleet = FleetModel(clock=self.clock, wall=self.clock.wall, stale_after=stale_after)
        self.app = listen_app(self.fleet, "127.0.0.1", 4317, 4318)  # the scene feeds it
        if config is not None:
            config.configure(self.app)

    def learn(self) -> None:
        """Ten ``draft`` turns of one second each: the tool's p95 is one second."""
        events: list[Event] = []
        for n in range(LEARNED):
            start = self.clock.wall()
            events += [
                turn(f"t-{n}", "start", start),
                turn(f"t-{n}", "end", start + S, **{"pygents.turn.stop_reason": "completed"}),
            ]
            self.clock.advance(1.0)
        self.fleet.ingest(logs_batch(events))
        self.fleet.store.drain()

    def start_long(self) -> None:
        start = turn("t-long", "start", self.clock.wall())
        start.trace_id, start.span_id = TRACE, bytes([0xC4, 0]) * 4
        self.fleet.ingest(logs_batch([start]))
        self.fleet.store.drain()

    def spend(self, input_tokens: int, output_tokens: int, seed: int = 1) -> None:
        self.fleet.ingest(spans_batch([model_call(input_tokens, output_tokens, seed)]))

    async def repaint(self, pilot: Pilot[Any]) -> str:
        self.app.refresh_view()
        await pilot.pause()
        return "\n".join(screen_lines(self.app))


def status(app: Dashboard) -> str:
    return str(app.screen.query_one("#status").render())


def agent_cells(app: Dashboard) -> dict[str, list[str]]:
    table = app.screen.query_one(AgentsTable)
    return {str(key.value): [str(cell) for cell in table.get_row(key)] for key in table.rows}


async def test_a_turn_running_past_three_times_its_tools_p95_is_flagged_stuck() -> None:
    scene = Scene()
    async with scene.app.run_test(size=SIZE) as pilot:
        scene.app.refresh_timer.pause()
        scene.learn()
        scene.start_long()
        scene.clock.advance(2.5)  # under 3 × 1 s: not yet
        await scene.repaint(pilot)
        assert "stuck" not in status(scene.app)

        scene.clock.advance(1.0)  # 3.5 s: past 3 × p95
        screen = await scene.repaint(pilot)
        assert "1 stuck" in status(scene.app)
        assert "⚠ running 3.5× its tool's p95" in screen  # the Running panel says why
        assert "⚠ stuck 3.5s" in " ".join(screen.split())


async def test_the_stuck_key_jumps_to_the_stuck_turn_and_says_so_when_there_is_none() -> None:
    scene = Scene()
    async with scene.app.run_test(size=SIZE, notifications=True) as pilot:
        scene.app.refresh_timer.pause()
        scene.learn()
        await scene.repaint(pilot)
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert [n.message for n in scene.app._notifications] == ["nothing stuck"]

        scene.start_long()
        scene.clock.advance(4.0)
        await scene.repaint(pilot)
        await pilot.press("escape", "4")  # away from Running, on another panel
        await pilot.press("exclamation_mark")
        await pilot.pause()
        running = scene.app.screen.query_one(RunningPanel)
        assert scene.app.screen.query_one("#tabs").active == "tab-running"  # type: ignore[attr-defined]
        long = scene.fleet.store.find_turn("t-long")
        assert long is not None
        assert running.marked == long.key
        assert scene.app.selected_agent == long.agent
        await pilot.press("exclamation_mark")  # one stuck turn: wraps round to it
        assert running.marked == long.key


async def test_the_turns_of_a_stale_process_show_as_orphaned() -> None:
    scene = Scene(stale_after=5.0)
    async with scene.app.run_test(size=SIZE) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        await scene.repaint(pilot)
        assert "orphaned" not in status(scene.app)
        scene.clock.advance(6.0)  # the process stopped sending
        screen = await scene.repaint(pilot)
        assert "1 orphaned" in status(scene.app)
        assert "stuck" not in status(scene.app)  # one reason, counted once
        assert "⚠ orphaned: its process went quiet" in screen


PRICED = Config(prices={"gpt-4o": Price(input=2.5, output=10.0)})


async def test_a_model_calls_tokens_show_per_agent_and_for_the_fleet_with_their_cost() -> None:
    scene = Scene(PRICED)
    async with scene.app.run_test(size=SIZE) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        await scene.repaint(pilot)
        assert "Tokens" not in await scene.repaint(pilot)  # no model call yet: no column
        scene.spend(120_000, 30_000)
        screen = await scene.repaint(pilot)
        assert "150k tok · 150k tok/min · $0.60" in status(scene.app)
        (cells,) = agent_cells(scene.app).values()
        assert "150k $0.60" in cells
        assert "Tokens" in screen
        scene.spend(120_000, 30_000)  # the same span sent again: counted once
        await scene.repaint(pilot)
        assert "150k tok" in status(scene.app)


async def test_without_a_price_table_tokens_show_and_no_cost() -> None:
    scene = Scene()
    async with scene.app.run_test(size=SIZE) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        scene.spend(800, 40)
        await scene.repaint(pilot)
        assert status(scene.app).endswith("840 tok · 840 tok/min")
        (cells,) = agent_cells(scene.app).values()
        assert "840" in cells


async def test_a_fleet_budget_passed_is_toasted_once_and_marked_in_the_status_line() -> None:
    config = Config(fleet_budget=Budget(tokens=1000))
    scene = Scene(config)
    async with scene.app.run_test(size=SIZE, notifications=True) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        scene.spend(600, 100)
        await scene.repaint(pilot)
        assert "⚠ budget" not in status(scene.app)
        scene.spend(600, 100, seed=2)
        await scene.repaint(pilot)
        scene.spend(600, 100, seed=3)
        await scene.repaint(pilot)
        toasts = [n.message for n in scene.app._notifications]
        assert toasts == ["the fleet passed its token budget: 1.4k tok of 1.0k"]
        assert status(scene.app).endswith("⚠ budget")


async def test_an_agent_budget_by_name_names_the_agent_in_its_toast() -> None:
    config = Config(agent_budgets={"writer": Budget(tokens=100)})
    scene = Scene(config)
    async with scene.app.run_test(size=SIZE, notifications=True) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        scene.spend(600, 100)
        await scene.repaint(pilot)
        toasts = [n.message for n in scene.app._notifications]
        assert toasts == ["svc@i-1/writer passed its token budget: 700 tok of 100"]


def test_listen_tokens_and_a_stuck_turn(snap_compare: Any) -> None:
    """The status line's stuck count and fleet tokens with their cost, the agents'
    Tokens column, and the stuck turn in Running with the reason in place of its bar."""
    scene = Scene(PRICED)

    async def run_before(pilot: Pilot[Any]) -> None:
        scene.app.refresh_timer.pause()
        scene.learn()
        scene.start_long()
        scene.spend(12_000, 300)
        scene.clock.advance(4.0)
        await scene.repaint(pilot)
        assert scene.app.view_error is None

    assert snap_compare(scene.app, run_before=run_before, terminal_size=SIZE)


async def test_an_exclamation_mark_typed_in_the_filter_is_text_not_the_stuck_key() -> None:
    scene = Scene()
    async with scene.app.run_test(size=SIZE, notifications=True) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        await scene.repaint(pilot)
        await pilot.press("slash", "exclamation_mark", "d")
        await pilot.pause()
        assert scene.app.screen.query_one("#filter").value == "!d"  # type: ignore[attr-defined]
        assert not scene.app._notifications  # no "nothing stuck"


async def test_on_a_narrow_screen_the_tokens_column_gives_its_width_first() -> None:
    scene = Scene(PRICED)
    async with scene.app.run_test(size=(80, 24)) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        scene.spend(12_000, 300)
        await scene.repaint(pilot)
        table = scene.app.screen.query_one(AgentsTable)
        widths = {column.key.value: column.width for column in table.columns.values()}
        assert widths["tokens"] == 0
        (narrow,) = agent_cells(scene.app).values()
        assert narrow[0] == "svc@i-1/writer"  # the label kept whole
    wide = Scene(PRICED)
    async with wide.app.run_test(size=SIZE) as pilot:
        wide.app.refresh_timer.pause()
        wide.start_long()
        wide.spend(12_000, 300)
        await wide.repaint(pilot)
        (cells,) = agent_cells(wide.app).values()
        assert "12.3k $0.03" in cells


async def test_at_80_columns_the_status_line_keeps_its_stuck_count_and_budget_mark() -> None:
    """The status line was cut at the screen's edge, and its last parts (stuck turns,
    the budget mark) were the first to go; now the figures other panels show too give
    way first (`pygents_tui.ui.screens._status.GIVE_UP`)."""
    scene = Scene(Config(prices=PRICED.prices, fleet_budget=Budget(tokens=1000)))
    async with scene.app.run_test(size=(80, 24), notifications=True) as pilot:
        scene.app.refresh_timer.pause()
        scene.learn()
        scene.start_long()
        scene.spend(12_000, 300)
        scene.clock.advance(4.0)
        screen = (await scene.repaint(pilot)).splitlines()
        (line,) = [row for row in screen if "agent(s)" in row]
        assert "1 stuck" in line
        assert line.rstrip().endswith("⚠ budget")
        assert "event(s)" not in line, "the event count gave way first"
        assert "1 agent(s)" in line
    wide = Scene(Config(prices=PRICED.prices, fleet_budget=Budget(tokens=1000)))
    async with wide.app.run_test(size=(200, 24), notifications=True) as pilot:
        wide.app.refresh_timer.pause()
        wide.learn()
        wide.start_long()
        wide.spend(12_000, 300)
        wide.clock.advance(4.0)
        await wide.repaint(pilot)
        assert "event(s) · 1 stuck · 12.3k tok" in status(wide.app), "all of it when it fits"


async def test_the_inspector_shows_the_tokens_of_the_turn_s_service() -> None:
    """Tokens are tallied per agent, per service and for the fleet; a service's show
    in the inspector of any of its turns."""
    scene = Scene(PRICED)
    async with scene.app.run_test(size=SIZE) as pilot:
        scene.app.refresh_timer.pause()
        scene.start_long()
        scene.spend(120_000, 30_000)
        await scene.repaint(pilot)
        turn = scene.fleet.store.find_turn("t-long")
        assert turn is not None
        await scene.app.push_screen(InspectorScreen(scene.fleet.store, turn))
        await pilot.pause()
        body = str(scene.app.screen.query_one("#inspector-body", Static).render())
        assert "tokens    service svc: 150k tok · 150k tok/min · $0.60" in body
