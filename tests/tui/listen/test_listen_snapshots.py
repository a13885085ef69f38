"""SVG snapshots of ``pygents-tui listen``'s screens, on a fixed fleet.

The scene is three processes: two ``checkout`` instances that both run an agent
named ``planner``, and a ``billing`` process that stopped sending (stale), its turn
still running. What they "sent" is built as OTLP requests and decoded by the
listener's own decoder (``otlp_requests``); the fleet model's monotonic clock and
its wall clock are the scene's, and every id is fixed, so times, bars and ids are
exact. The refresh timer is paused and the scene repaints at fixed points.

Regenerate with ``uv run pytest tests/tui/listen/test_listen_snapshots.py
--snapshot-update``, then look at the SVGs before committing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from fake_clock import FakeClock
from on_screen import screen_lines
from otlp_requests import Event, SpanSpec, logs_batch, spans_batch
from textual.pilot import Pilot

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.widgets import AgentsTable

S = 10**9
WALL = 1_767_225_600 * S  # 2026-01-01T00:00:00Z: the wall clock at fake second 1000
SIZE = (110, 30)


class SceneClock(FakeClock):
    """The fake clock, with the wall clock (OTLP nanoseconds) that goes with it."""

    def wall(self) -> int:
        return WALL + round((self.now - 1000.0) * S)


def ids(seed: int) -> tuple[bytes, bytes, bytes, bytes]:
    """A trace id and three span ids, fixed by ``seed``."""
    return (
        bytes([seed]) * 16,
        bytes([seed, 1]) * 4,
        bytes([seed, 2]) * 4,
        bytes([seed, 3]) * 4,
    )


def agent(name: str, agent_id: str) -> dict[str, Any]:
    return {"gen_ai.agent.name": name, "gen_ai.agent.id": agent_id}


def turn_start(who: dict[str, Any], uuid: str, tool: str, at: int, **extra: Any) -> Event:
    attributes = {**who, "pygents.turn.uuid": uuid, "gen_ai.tool.name": tool, **extra}
    return Event("pygents.turn.start", attributes, at)


def turn_end(who: dict[str, Any], uuid: str, reason: str, at: int, **extra: Any) -> Event:
    attributes = {**who, "pygents.turn.uuid": uuid, "pygents.turn.stop_reason": reason}
    return Event("pygents.turn.end", {**attributes, **extra}, at)


class FleetScene:
    def __init__(self, app: Dashboard, fleet: FleetModel, clock: SceneClock) -> None:
        self.app, self.fleet, self.clock = app, fleet, clock

    def play(self) -> None:
        fleet, clock = self.fleet, self.clock
        now = clock.wall

        # billing@pod-c: a long archive turn starts, then the process goes quiet.
        archiver = agent("archiver", "arch-1")
        fleet.ingest(
            logs_batch(
                [
                    Event("pygents.agent_run.start", archiver, now() - 1 * S),
                    turn_start(
                        archiver, "t-archive", "archive", now(), **{"pygents.turn.timeout": 30.0}
                    ),
                ],
                service="billing",
                instance="pod-c",
            )
        )
        fleet.store.drain()
        clock.advance(6.0)  # past stale_after

        # checkout@pod-a: a planner that finished a traced turn and is streaming a fetch.
        planner_a = agent("planner", "planner-a")
        trace, run_span, turn_span, tool_span = ids(0xA1)
        fleet.ingest(
            logs_batch(
                [
                    Event("pygents.agent_run.start", planner_a, now() - 6 * S),
                    Event(
                        "pygents.agent.snapshot",
                        {
                            **planner_a,
                            "pygents.agent.state": "running",
                            "pygents.agent.queue.depth": 2,
                            "pygents.context_queue.size": 3,
                            "pygents.context_queue.limit": 10,
                            "pygents.context_pool.size": 1,
                        },
                        now() - 5 * S,
                    ),
                    turn_start(
                        planner_a, "t-plan", "plan", now() - 5 * S, **{"pygents.turn.timeout": 5.0}
                    ),
                    turn_end(planner_a, "t-plan", "completed", now() - 4 * S),
                    turn_start(
                        planner_a,
                        "t-fetch",
                        "fetch",
                        now() - 3 * S,
                        **{"pygents.turn.timeout": 10.0, "pygents.turn.streaming": True},
                    ),
                    Event(
                        "pygents.turn.on_value",
                        {**planner_a, "pygents.turn.uuid": "t-fetch", "pygents.turn.values": 2},
                        now() - 2 * S,
                    ),
                ],
                service="checkout",
                instance="pod-a",
            )
        )
        plan_start, plan_end = now() - 5 * S, now() - 4 * S
        fleet.ingest(
            spans_batch(
                [
                    SpanSpec(
                        "turn plan",
                        trace,
                        turn_span,
                        parent_id=run_span,
                        start_ns=plan_start,
                        end_ns=plan_end,
                        attributes={"pygents.turn.uuid": "t-plan", "pygents.tool.name": "plan"},
                    ),
                    SpanSpec(
                        "execute_tool plan",
                        trace,
                        tool_span,
                        parent_id=turn_span,
                        start_ns=plan_start + S // 10,
                        end_ns=plan_end - S // 10,
                        attributes={"gen_ai.operation.name": "execute_tool"},
                    ),
                    SpanSpec(
                        "chat gpt-4o-mini",
                        trace,
                        bytes([0xA1, 4]) * 4,
                        parent_id=tool_span,
                        start_ns=plan_start + 2 * S // 10,
                        end_ns=plan_start + 7 * S // 10,
                        attributes={"gen_ai.request.model": "gpt-4o-mini"},
                    ),
                    SpanSpec(
                        "SELECT plans",
                        trace,
                        bytes([0xA1, 5]) * 4,
                        parent_id=tool_span,
                        start_ns=plan_start + 7 * S // 10,
                        end_ns=plan_start + 8 * S // 10,
                        attributes={"db.query.text": "SELECT * FROM plans WHERE day = $1"},
                    ),
                ],
                service="checkout",
                instance="pod-a",
            )
        )

        # checkout@pod-b: another planner (same name, another process): a timeout, a
        # failure, and a turn running now.
        planner_b = agent("planner", "planner-b")
        fleet.ingest(
            logs_batch(
                [
                    Event("pygents.agent_run.start", planner_b, now() - 5 * S),
                    turn_start(
                        planner_b, "t-slow", "fetch", now() - 5 * S, **{"pygents.turn.timeout": 3.0}
                    ),
                    turn_end(
                        planner_b,
                        "t-slow",
                        "timeout",
                        now() - 2 * S,
                        **{"error.type": "TurnTimeoutError"},
                    ),
                    turn_start(planner_b, "t-bad", "fetch_strict", now() - 2 * S),
                    turn_end(
                        planner_b,
                        "t-bad",
                        "error",
                        now() - 2 * S + S // 5,
                        **{"error.type": "ConnectionError"},
                    ),
                    turn_start(
                        planner_b,
                        "t-plan-b",
                        "plan",
                        now() - 1 * S,
                        **{"pygents.turn.timeout": 5.0},
                    ),
                ],
                service="checkout",
                instance="pod-b",
            )
        )
        self.app.refresh_view()


After = Callable[[Pilot[Any], FleetScene], Awaitable[None]]


def scene_app(
    after: After | None = None,
) -> tuple[Dashboard, Callable[[Pilot[Any]], Awaitable[None]]]:
    clock = SceneClock()
    fleet = FleetModel(clock=clock, wall=clock.wall, stale_after=5.0)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)  # no receiver: the scene feeds the model

    async def run_before(pilot: Pilot[Any]) -> None:
        app.refresh_timer.pause()
        await pilot.pause()
        scene = FleetScene(app, fleet, clock)
        scene.play()
        await pilot.pause()
        if after is not None:
            await after(pilot, scene)
        app.refresh_view()
        await pilot.pause()
        assert app.view_error is None

    return app, run_before


def test_listen_overview(snap_compare: Any) -> None:
    """Two ``planner``s of two processes on two rows; the stale process marked, its
    turn still listed; the running turns against their timeouts."""
    app, run_before = scene_app()
    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


def test_listen_inspector_trace(snap_compare: Any) -> None:
    """A turn's trace: pygents' spans and, inside the tool, a model call and a query."""

    async def after(pilot: Pilot[Any], scene: FleetScene) -> None:
        turn = scene.fleet.store.find_turn("t-plan")
        assert turn is not None
        pilot.app.action_inspect(turn.key)
        await pilot.pause()
        assert isinstance(pilot.app.screen, InspectorScreen)

    app, run_before = scene_app(after)
    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


def test_listen_queue_not_sent(snap_compare: Any) -> None:
    """The Queue panel says in one line why it shows the depth only."""

    async def after(pilot: Pilot[Any], scene: FleetScene) -> None:
        await pilot.press("j", "1")

    app, run_before = scene_app(after)
    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


def _contents_snapshot(scene: FleetScene) -> None:
    """planner@pod-a's snapshot with its waiting turns and context items, as a sender
    with content capture on sends them (`pygents_otel`'s live snapshot lists)."""
    fleet, now = scene.fleet, scene.clock.wall
    fleet.ingest(
        logs_batch(
            [
                Event(
                    "pygents.agent.snapshot",
                    {
                        **agent("planner", "planner-a"),
                        "pygents.agent.state": "running",
                        "pygents.agent.queue.depth": 3,
                        "pygents.agent.queue.tools": ["fetch", "summarize"],
                        "pygents.agent.queue.uuids": ["q-1", "q-2"],
                        "pygents.agent.queue.timeouts": [10.0, 30.0],
                        "pygents.agent.queue.arguments": ["('tides',)", "('report', 3)"],
                        "pygents.agent.queue.more": 1,
                        "pygents.context_queue.size": 2,
                        "pygents.context_queue.limit": 10,
                        "pygents.context_queue.item.ids": ["", ""],
                        "pygents.context_queue.item.descriptions": ["user", "assistant"],
                        "pygents.context_queue.item.contents": ["plan my day", "here is a plan"],
                        "pygents.context_pool.size": 1,
                        "pygents.context_pool.item.ids": ["doc-7"],
                        "pygents.context_pool.item.descriptions": ["tide table"],
                        "pygents.context_pool.item.contents": ["high water 06:12"],
                    },
                    now(),
                )
            ],
            service="checkout",
            instance="pod-a",
        )
    )
    fleet.store.drain()


def _show(tab: str) -> After:
    async def after(pilot: Pilot[Any], scene: FleetScene) -> None:
        _contents_snapshot(scene)
        planner_a = next(r for r in scene.fleet.store.agent_rows() if "pod-a" in r.label)
        table = pilot.app.screen.query_one(AgentsTable)
        table.move_cursor(row=table.get_row_index(planner_a.key))
        await pilot.pause()
        await pilot.press(tab)

    return after


def test_listen_queue_of_a_remote_agent(snap_compare: Any) -> None:
    """The Queue panel lists a remote agent's waiting turns, sent in its live
    snapshot: tool, arguments (content capture on), timeout, and how many more wait."""
    app, run_before = scene_app(_show("1"))
    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


def test_listen_context_of_a_remote_agent(snap_compare: Any) -> None:
    """The Context panel lists a remote agent's context items from its snapshot."""
    app, run_before = scene_app(_show("4"))
    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


REALISTIC_SERVICE = "lab-fleet-alpha-east"  # 20 characters, as services are named
REALISTIC_SIZES = [(80, 24), (120, 40), (160, 45)]


def _realistic_fleet(fleet: FleetModel, clock: SceneClock) -> None:
    """Two processes of one service (the 8-hex instance ids ``configure()`` gives),
    running agents with 20-character names; two of them share a name, one per
    process, and two differ by their last character only."""
    now = clock.wall
    for instance, names in (
        ("f223448b", ("research-assistant-1", "research-assistant-2")),
        ("0c9d2e71", ("research-assistant-1",)),
    ):
        events: list[Event] = []
        for n, name in enumerate(names):
            who = agent(name, f"{instance}-{n}")
            done, running = f"{instance}-{n}-done", f"{instance}-{n}-run"
            events += [
                Event("pygents.agent_run.start", who, now() - 8 * S),
                turn_start(who, done, "summarize_findings", now() - 7 * S),
                turn_end(who, done, "completed", now() - 6 * S),
                turn_start(
                    who,
                    running,
                    "fetch_search_results",
                    now() - (2 + n) * S,
                    **{"pygents.turn.timeout": 10.0},
                ),
            ]
        fleet.ingest(logs_batch(events, service=REALISTIC_SERVICE, instance=instance))
    fleet.store.drain()


@pytest.mark.parametrize("size", REALISTIC_SIZES, ids=[f"{w}x{h}" for w, h in REALISTIC_SIZES])
def test_listen_realistic_names(size: tuple[int, int], snap_compare: Any) -> None:
    """Every agent's own name whole in the agents table and the Running panel: on a
    narrow screen the instance, then the service, give way first (ending in ``…``)."""
    clock = SceneClock()
    fleet = FleetModel(clock=clock, wall=clock.wall, stale_after=60.0)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)  # no receiver: the scene feeds it

    async def run_before(pilot: Pilot[Any]) -> None:
        app.refresh_timer.pause()
        await pilot.pause()
        _realistic_fleet(fleet, clock)
        app.refresh_view()
        await pilot.pause()
        assert app.view_error is None

    assert snap_compare(app, run_before=run_before, terminal_size=size)


@pytest.mark.parametrize("width", [80, 160])
async def test_listen_agent_names_are_drawn_whole_and_processes_stay_apart(width: int) -> None:
    """At 160 columns every label whole; at 80, each agent's own name still whole and
    the head of its instance id (``@f22…``) telling two processes' agents apart."""
    clock = SceneClock()
    fleet = FleetModel(clock=clock, wall=clock.wall, stale_after=60.0)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)
    async with app.run_test(size=(width, 30)) as pilot:
        app.refresh_timer.pause()
        _realistic_fleet(fleet, clock)
        app.refresh_view()
        await pilot.pause()
        table = app.screen.query_one(AgentsTable)
        region = table.region
        drawn = [line[region.x : region.right] for line in screen_lines(app)[region.y + 1 :]]
        cells = [line.split()[0] for line in drawn[: table.row_count]]
        if width == 160:
            assert cells == [row.label for row in fleet.store.agent_rows()]
        else:
            assert [cell.rpartition("/")[2] for cell in cells] == [
                row.name for row in fleet.store.agent_rows()
            ]
            assert len(set(cells)) == len(cells)  # the two research-assistant-1 apart
            assert all("…" in cell for cell in cells)
