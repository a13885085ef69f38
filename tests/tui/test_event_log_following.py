"""The event log keeps following its newest line through a change of filter: a
filter rebuilds the log, and the rebuilt log must not be left scrolled to where the
filtered one was (the newcomer report: "the event log stops following after a filter
is cleared")."""

from __future__ import annotations

import asyncio
from typing import Any

from pilot import dashboard
from textual.widgets import Input

from pygents import Agent, Turn, tool
from pygents_tui import DashboardModel
from pygents_tui.ui.widgets import EventsPanel

SIZE = (100, 30)


def _agent_and_gate() -> tuple[Agent, asyncio.Event, Any]:
    @tool()
    async def job(n: int) -> int:
        return n

    agent = Agent("chatty", "many events", [job])
    more = asyncio.Event()

    async def workload() -> None:
        for n in range(40):
            await agent.put(Turn(job, args=[n]))
        async for _ in agent.run():
            pass
        await more.wait()
        for n in range(40, 45):
            await agent.put(Turn(job, args=[n]))
        async for _ in agent.run():
            pass

    return agent, more, workload


async def test_the_event_log_follows_new_events_after_its_filter_is_cleared(until: Any) -> None:
    _agent, more, workload = _agent_and_gate()
    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        panel = app._main.query_one(EventsPanel)
        log = panel.log_widget
        await until(pilot, lambda: model.agent("chatty").completed == 40 and log.line_count > 100)
        await until(pilot, lambda: log.is_vertical_scroll_end and log.max_scroll_y > 0)

        await pilot.press("slash", *"run ended")  # one line: the log shrinks
        field = app._main.query_one("#filter", Input)
        await until(pilot, lambda: field.value == "run ended" and log.line_count == 1)
        for _ in field.value:
            await pilot.press("backspace")  # the filter cleared: everything comes back
        await pilot.press("escape")
        await until(pilot, lambda: log.line_count > 100)
        await pilot.pause()

        more.set()
        await until(pilot, lambda: model.agent("chatty").completed == 45)
        await until(pilot, lambda: sum("run ended" in line for line in log.lines) == 2)
        await pilot.pause()
        assert log.is_vertical_scroll_end, (log.scroll_y, log.max_scroll_y)


async def test_a_log_scrolled_back_says_it_is_not_following_until_end_is_pressed(
    until: Any, text_of: Any
) -> None:
    _agent, _more, workload = _agent_and_gate()
    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        log = app._main.query_one(EventsPanel).log_widget
        await until(pilot, lambda: log.line_count > 100 and log.is_vertical_scroll_end)
        assert "not following" not in text_of(app)

        await pilot.press("home")  # the log has focus: scrolled back to its top
        await until(pilot, lambda: log.scroll_y == 0)
        assert "not following new lines" in text_of(app)

        await pilot.press("end")
        await until(pilot, lambda: log.is_vertical_scroll_end)
        assert "not following" not in text_of(app)
