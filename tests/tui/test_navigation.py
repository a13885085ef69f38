"""Getting around as a new user would: ``6`` then ``enter`` opens a turn, the trace URL
is a link, and the headers that are symbols say what they mean."""

from __future__ import annotations

from typing import Any

from on_screen import screen_strips
from pilot import dashboard, numbered
from rich.style import Style
from rich.text import Text

from pygents import Agent, Turn, tool
from pygents_tui import DashboardModel
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.screens.inspector import describe
from pygents_tui.ui.widgets import AgentsTable, TimelineTable

URL = "http://jaeger.local/trace/{trace_id}"


async def test_6_then_enter_opens_the_newest_turn_at_once(until: Any) -> None:
    _agent, workload = numbered("stepper", 3)
    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: model.agent("stepper").completed == 3)
        await pilot.press("6", "enter")  # no tab needed: the timeline has the focus
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.record.uuid == model.store.recent[-1].uuid
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)
        assert app.focused is app._main.query_one(TimelineTable)  # still there


def link_spans(text: Text) -> list[tuple[str, str | None]]:
    return [
        (text.plain[span.start : span.end], span.style.link)
        for span in text.spans
        if isinstance(span.style, Style) and span.style.link
    ]


async def test_the_trace_url_is_a_link_to_itself_never_markup(until: Any) -> None:
    @tool()
    async def lookup() -> str:
        return "found"

    agent = Agent("traced", "traced", [lookup])

    async def workload() -> None:
        await agent.put(Turn(lookup))
        async for _ in agent.run():
            pass

    app = dashboard(
        workload,
        trace_id=lambda scope: "abc[bold]123",  # hostile text stays text
        trace_url=URL,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.model.agent("traced").completed == 1)
        record = app.model.store.recent[-1]
        url = "http://jaeger.local/trace/abc[bold]123"
        assert link_spans(describe(record, URL)) == [(url, url)]

        await pilot.press("6", "enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        rendered = [
            segment
            for strip in screen_strips(app)
            for segment in strip
            if segment.style is not None and segment.style.link
        ]
        assert rendered, "the link did not reach the terminal"
        assert {segment.style.link for segment in rendered if segment.style} == {url}
        assert "".join(segment.text for segment in rendered) == url


def test_no_trace_url_no_link() -> None:
    assert link_spans(Text("plain")) == []


async def test_the_symbol_headers_have_a_legend_as_the_tables_tooltip() -> None:
    app = dashboard()
    async with app.run_test(size=(100, 30)):
        table = app._main.query_one(AgentsTable)
        tooltip = table.tooltip
        assert isinstance(tooltip, Text)
        for label, meaning in AgentsTable.LEGEND:
            assert f"{label}" in tooltip.plain
            assert meaning in tooltip.plain
        headers = {label for _key, label, _width in AgentsTable.COLUMNS}
        assert {"✔/✖/◷", "Ctx q p"} <= {label for label, _ in AgentsTable.LEGEND} & headers
