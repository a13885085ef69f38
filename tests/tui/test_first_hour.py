"""What a newcomer meets in the dashboard's first hour: counts that add up, hints that
say what to do, and panels that say nothing when they have nothing to say."""

from __future__ import annotations

import asyncio
from typing import Any

from pilot import dashboard, numbered
from test_app import SIZE, focus_timeline, row

from pygents import Agent, Turn, tool
from pygents_tui import DashboardModel
from pygents_tui.ui.screens import ErrorScreen, InspectorScreen
from pygents_tui.ui.widgets import EventsPanel, TimelineTable


async def test_a_turn_cancelled_under_a_task_group_is_counted_in_its_agents_row(
    until: Any,
) -> None:
    started = asyncio.Event()

    @tool()
    async def waits() -> None:
        started.set()
        await asyncio.Event().wait()

    @tool()
    async def breaks() -> None:
        await started.wait()
        raise LookupError("nothing here")

    waiter = Agent("waiter", "cancelled by its sibling", [waits])
    breaker = Agent("breaker", "fails, cancelling the group", [breaks])

    async def drain(agent: Agent) -> None:
        async for _ in agent.run():
            pass

    async def workload() -> None:
        await waiter.put(Turn(waits))
        await breaker.put(Turn(breaks))
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(drain(waiter))
                group.create_task(drain(breaker))
        except* LookupError:
            pass

    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: row(app, "breaker")["counts"].startswith("0/1/0"))
        await until(pilot, lambda: "⊘" in row(app, "waiter")["counts"])
        assert row(app, "waiter")["counts"] == "0/0/0 ⊘1"
        assert "⊘" not in row(app, "breaker")["counts"]


async def test_the_inspector_leaves_out_a_heading_with_nothing_under_it(
    until: Any, text_of: Any
) -> None:
    _agent, workload = numbered("plain", 1)
    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: row(app, "plain")["counts"] == "1/0/0")
        await pilot.press("6")
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: timeline.row_count == 1)
        await focus_timeline(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        assert "0: 0" in screen  # its one argument, under its heading
        assert "arguments" in screen
        assert "metadata" not in screen  # it has none


async def test_the_workloads_traceback_starts_at_the_programs_own_frames(
    until: Any, text_of: Any
) -> None:
    async def step_of_the_program() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("the program broke")

    async def workload() -> None:
        await step_of_the_program()

    app = dashboard(workload)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.workload_done.is_set)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ErrorScreen))
        lines = app.screen.traceback.lines()
        first = next(line for line in lines if line.startswith("  File "))
        assert first.endswith("in workload"), first  # not Textual's worker, nor asyncio's
        assert not any("site-packages/textual" in line for line in lines)
        assert any("in step_of_the_program" in line for line in lines)
        assert lines[-1] == "RuntimeError: the program broke"


async def test_the_timeline_keeps_the_bars_of_a_program_that_ended_long_ago(
    until: Any, clock: Any
) -> None:
    gate = asyncio.Event()

    @tool()
    async def step(n: int) -> int:
        clock.advance(2.0)  # each turn takes two seconds of the model's clock
        return n

    worker = Agent("stepper", "three two-second turns", [step])

    async def workload() -> None:
        for n in range(3):
            await worker.put(Turn(step, args=[n]))
        async for _ in worker.run():
            pass
        gate.set()

    app = dashboard(workload, model=DashboardModel(clock=clock))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: gate.is_set() and row(app, "stepper")["counts"] == "3/0/0")
        clock.advance(60.0)  # long after the program's last turn
        await pilot.press("6")
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: timeline.row_count == 3)
        bars = [str(timeline.get_row_at(i)[3]) for i in range(3)]
        assert all("█" in bar for bar in bars), bars
        assert bars[-1].endswith("█"), "the window ends at the last turn's end"
        starts = [len(bar) - len(bar.lstrip()) for bar in bars]
        assert starts == sorted(starts)
        assert starts[0] < starts[1] < starts[2]


async def test_a_failed_turn_is_called_failed_in_the_table_the_log_and_the_inspector(
    until: Any, text_of: Any
) -> None:
    @tool()
    async def breaks() -> None:
        raise LookupError("nothing here")

    broken = Agent("broken", "fails once", [breaks])

    async def workload() -> None:
        await broken.put(Turn(breaks))
        async for _ in broken.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: row(app, "broken")["counts"] == "0/1/0")
        assert row(app, "broken")["state"] == "failed"
        await pilot.press("5")
        log = app._main.query_one(EventsPanel).log_widget
        await until(pilot, lambda: any("✖ breaks" in line for line in log.lines))
        (line,) = [line for line in log.lines if "✖ breaks" in line]
        assert " failed " in line
        assert " error " not in line
        await pilot.press("slash")
        for key in "error":  # the old word still finds it
            await pilot.press(key)
        await until(pilot, lambda: not any("▶" in line for line in log.lines))
        assert any("✖ breaks" in line for line in log.lines)
        await pilot.press("escape", "6")  # leave the filter field, then the timeline
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: timeline.row_count == 1)
        await focus_timeline(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert "state     failed after" in text_of(app)
