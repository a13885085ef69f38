"""The agents table under many rows (W12 in docs/performance.md: 2,000 agents): a tick
writes the cells of the rows on screen only and asks Textual for one repaint, a row
scrolled into view is written before it is drawn, the lines the table draws are
Textual's own, and filters and new widths move rows and columns in place."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pilot import dashboard
from textual.widgets import DataTable

from pygents import Agent, AgentRegistry, Turn, tool
from pygents_tui.ui.widgets import AgentsTable

AGENTS = 12
MANY = 60


async def two_turns(agent: Agent) -> None:
    (job,) = agent.tools
    for n in range(2):
        await agent.put(Turn(job, args=[n]))
    async for _ in agent.run():
        pass


def crowd_of(count: int) -> Iterator[list[Agent]]:
    """``count`` agents of one quick tool, left in the registry only for the test."""

    @tool()
    async def crowd_job(n: int) -> int:
        return n

    agents = [Agent(f"crowd-{i:02d}", "two turns at a time", [crowd_job]) for i in range(count)]
    yield agents
    for agent in agents:
        if agent.name in AgentRegistry.names():  # a test may have let it go already
            AgentRegistry.unregister(agent.name)


@pytest.fixture
def crowd() -> Iterator[list[Agent]]:
    yield from crowd_of(AGENTS)


@pytest.fixture
def screenfuls() -> Iterator[list[Agent]]:
    """More agents than the table has lines: most rows are off screen."""
    yield from crowd_of(MANY)


async def crowd_shown(app: Any, pilot: Any, crowd: list[Agent]) -> None:
    """Two turns of each agent run and drawn, the timer stopped: the test repaints."""
    app.refresh_timer.stop()
    for agent in crowd:
        await two_turns(agent)
    for _ in range(2):  # the second after the first's resize, which refits the columns
        app.refresh_view()
        await pilot.pause()


async def test_a_tick_that_changes_many_rows_repaints_the_table_once(
    monkeypatch: pytest.MonkeyPatch, crowd: list[Agent]
) -> None:
    app = dashboard()
    async with app.run_test(size=(120, 40)) as pilot:
        await crowd_shown(app, pilot, crowd)
        table = app.screen.query_one(AgentsTable)
        assert table.row_count == AGENTS
        assert str(table.get_cell("crowd-00", "counts")) == "2/0/0"

        for agent in crowd:  # two more turns each: every row's counts change
            await two_turns(agent)
        app.view.drain()
        repaints: list[tuple[Any, ...]] = []
        plain_refresh = DataTable.refresh

        def counted(self: DataTable[Any], *regions: Any, **options: Any) -> Any:
            if self is table:
                repaints.append(regions)
            return plain_refresh(self, *regions, **options)

        monkeypatch.setattr(DataTable, "refresh", counted)
        table.refresh_from(None)
        monkeypatch.undo()

        whole = [regions for regions in repaints if not regions]  # (a row's own may follow)
        assert len(whole) == 1, "one whole-table repaint for the tick"
        counts = {str(table.get_cell(f"crowd-{i:02d}", "counts")) for i in range(AGENTS)}
        assert counts == {"4/0/0"}, "every changed cell was written"


async def test_a_filter_typed_and_erased_reorders_the_rows_without_rebuilding_the_table(
    monkeypatch: pytest.MonkeyPatch, crowd: list[Agent]
) -> None:
    """A filter keeps the columns' widths, so the table removes and adds rows and sorts
    them into place: a rebuild (every row added again, every cell measured) took
    100–300 ms with 2,000 agents for each key typed (W12)."""

    app = dashboard()
    async with app.run_test(size=(120, 40)) as pilot:
        await crowd_shown(app, pilot, crowd)
        table = app.screen.query_one(AgentsTable)
        first = table.get_cell("crowd-00", "agent")
        rebuilds: list[AgentsTable] = []
        plain_clear = DataTable.clear

        def counted(self: DataTable[Any], columns: bool = False) -> Any:
            rebuilds.append(self)  # type: ignore[arg-type]
            return plain_clear(self, columns)

        monkeypatch.setattr(DataTable, "clear", counted)

        def rows() -> list[str]:
            return [str(table.get_row_at(n)[0]) for n in range(table.row_count)]

        await pilot.press("1", "slash", *"crowd-1")  # the Queue tab: / filters the agents
        app.refresh_view()
        await pilot.pause()
        assert rows() == [f"crowd-{i}" for i in range(10, AGENTS)]

        await pilot.press("backspace", "enter")  # "crowd-": every agent again
        app.refresh_view()
        await pilot.pause()
        assert rows() == [f"crowd-{i:02d}" for i in range(AGENTS)]
        assert rebuilds == []
        assert table.get_cell("crowd-00", "agent") is not first  # added back, not kept
        assert table.selected in {f"crowd-{i:02d}" for i in range(AGENTS)}


def counting(monkeypatch: pytest.MonkeyPatch, name: str, table: AgentsTable) -> list[Any]:
    """The first argument of every call of ``DataTable.<name>`` on ``table``, from now."""
    calls: list[Any] = []
    plain = getattr(DataTable, name)

    def counted(self: DataTable[Any], *args: Any, **options: Any) -> Any:
        if self is table:
            calls.append(args[0] if args else None)
        return plain(self, *args, **options)

    monkeypatch.setattr(DataTable, name, counted)
    return calls


def on_screen(table: AgentsTable) -> list[str]:
    """The text of the table's lines as it draws them, header first."""
    return [table.render_line(y).text for y in range(table.size.height)]


async def test_a_tick_writes_the_rows_on_screen_and_not_the_others(
    monkeypatch: pytest.MonkeyPatch, screenfuls: list[Agent]
) -> None:
    """With 2,000 agents, a tick that formatted and wrote every row cost most of a
    refresh (W12); the rows off screen are written when they come into view."""
    app = dashboard()
    async with app.run_test(size=(120, 30)) as pilot:
        await crowd_shown(app, pilot, screenfuls)
        table = app.screen.query_one(AgentsTable)
        assert table.row_count == MANY
        for agent in screenfuls:  # two more turns each: every row's counts change
            await two_turns(agent)
        app.view.drain()
        written = counting(monkeypatch, "update_cell", table)
        table.refresh_from(None)
        monkeypatch.undo()

        rows = table.size.height - 1  # the header's line
        assert 0 < len(set(written)) <= rows + 2, "the rows on screen (and one each side)"
        assert any("crowd-00" in line and "4/0/0" in line for line in on_screen(table))

        table.move_cursor(row=MANY - 1, animate=False)  # the last row, scrolled into view
        await pilot.pause()
        last = [line for line in on_screen(table) if f"crowd-{MANY - 1}" in line]
        assert last, "the last row is on screen"
        assert "4/0/0" in last[0], "drawn as it is now, not as it was when added"
        counts = {str(table.get_cell(f"crowd-{i:02d}", "counts")) for i in range(MANY)}
        assert counts == {"4/0/0"}, "a row read is written first"


async def test_the_table_draws_the_lines_textual_s_data_table_would(
    crowd: list[Agent],
) -> None:
    """The table draws its own lines (a cell is rendered again only when it changes):
    header, zebra stripes, the cursor's row and a dimmed finished agent are the very
    segments, styles and mouse metadata ``DataTable`` renders from the same cells."""
    app = dashboard()
    async with app.run_test(size=(120, 40)) as pilot:
        await crowd_shown(app, pilot, crowd)
        AgentRegistry.unregister(crowd[3].name)  # finished: its row is dimmed
        app.refresh_view()
        table = app.screen.query_one(AgentsTable)
        table.move_cursor(row=2, animate=False)
        await pilot.pause()
        assert "done" in on_screen(table)[4]
        for y in range(table.size.height):
            assert list(table.render_line(y)) == list(DataTable.render_line(table, y)), y


async def test_a_filter_typed_and_erased_moves_many_rows_in_one_pass(
    monkeypatch: pytest.MonkeyPatch, screenfuls: list[Agent]
) -> None:
    """Textual's ``remove_row`` re-indexes every row, ``add_row`` runs the cursor's
    watchers: with 2,000 agents, a filter typed or erased one row at a time stalled the
    screen for 100 ms and more. The rows are set in one pass, in the order chosen."""
    app = dashboard()
    async with app.run_test(size=(120, 30)) as pilot:
        await crowd_shown(app, pilot, screenfuls)
        table = app.screen.query_one(AgentsTable)
        added = counting(monkeypatch, "add_row", table)
        removed = counting(monkeypatch, "remove_row", table)
        cleared = counting(monkeypatch, "clear", table)

        def rows() -> list[str]:
            return [str(table.get_row_at(n)[0]) for n in range(table.row_count)]

        await pilot.press("1", "slash", *"crowd-1")  # 50 of the 60 rows go
        app.refresh_view()
        await pilot.pause()
        assert rows() == [f"crowd-{i}" for i in range(10, 20)]
        await pilot.press(*["backspace"] * 7, "enter")  # and come back
        app.refresh_view()
        await pilot.pause()
        assert rows() == [f"crowd-{i:02d}" for i in range(MANY)]
        assert (added, removed, cleared) == ([], [], [])
        assert table.selected in {f"crowd-{i:02d}" for i in range(MANY)}


async def test_a_new_width_refits_the_columns_without_rebuilding_the_table(
    monkeypatch: pytest.MonkeyPatch, crowd: list[Agent]
) -> None:
    """A rebuild adds every row again; new widths are set on the columns themselves."""
    app = dashboard()
    async with app.run_test(size=(120, 40)) as pilot:
        await crowd_shown(app, pilot, crowd)
        table = app.screen.query_one(AgentsTable)
        cleared = counting(monkeypatch, "clear", table)
        wide = sum(column.get_render_width(table) for column in table.ordered_columns)

        await pilot.resize_terminal(70, 40)
        await pilot.pause()
        app.refresh_view()
        await pilot.pause()
        narrow = sum(column.get_render_width(table) for column in table.ordered_columns)
        assert narrow < wide
        assert table.virtual_size.width == narrow
        assert cleared == []
        assert any(line.startswith(" crowd-00") for line in on_screen(table))


async def test_rows_scrolled_into_view_after_a_resize_are_drawn_before_the_next_tick(
    screenfuls: list[Agent],
) -> None:
    """A resize is fitted by the next tick (none while the view is frozen); until then
    the rows that come into view are written and cut to the widths drawn."""
    app = dashboard()
    async with app.run_test(size=(120, 30)) as pilot:
        await crowd_shown(app, pilot, screenfuls)
        app.refresh_timer.stop()
        table = app.screen.query_one(AgentsTable)
        await pilot.resize_terminal(90, 30)
        await pilot.pause()
        table.move_cursor(row=MANY - 1, animate=False)
        await pilot.pause()
        assert app.view_error is None
        last = [line for line in on_screen(table) if f"crowd-{MANY - 1}" in line]
        assert last, "the last row is on screen"
        assert "2/0/0" in last[0]
