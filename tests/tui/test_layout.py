"""The main screen as operators use it: columns that fit the screen with the agents'
names whole, tables that take the height they can use, title lines that name the
agent shown, and the filter (``/``) and sort (``s``, ``S``) of each panel. Real agents
in the app's loop, under Pilot."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from on_screen import screen_lines, screen_text
from pilot import dashboard
from rich.table import Table
from textual.widgets import Input

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard
from pygents_tui.ui.widgets import AgentsTable, EventsPanel, RunningPanel, TimelineTable, ValuesLog

LONG_TOOL = "summarize_the_whole_long_document"  # 33 characters: more than Current takes
BUSY = 12


class Fleet:
    """``assistant.t1`` … ``assistant.t12``, each blocked in a turn of `LONG_TOOL`, and
    ``tidy-bot``, which streams two values, completes two turns and fails one."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        gate = self.gate

        @tool()
        async def summarize_the_whole_long_document(n: int) -> int:
            await gate.wait()
            return n

        long_tool = summarize_the_whole_long_document
        assert long_tool.name == LONG_TOOL

        @tool()
        async def tidy(n: int) -> Any:
            yield f"swept room {n}"

        @tool()
        async def explode() -> None:
            raise RuntimeError("boom")

        self.busy = [Agent(f"assistant.t{i}", "waits", [long_tool]) for i in range(1, BUSY + 1)]
        self.tidy = Agent("tidy-bot", "tidies", [tidy, explode])
        self.long_tool, self.tidy_tool, self.explode = long_tool, tidy, explode

    async def workload(self) -> None:
        for agent in self.busy:
            await agent.put(Turn(self.long_tool, args=[1], timeout=60))
        for n in (1, 2):
            await self.tidy.put(Turn(self.tidy_tool, args=[n]))
        await self.tidy.put(Turn(self.explode))

        async def run(agent: Agent) -> None:
            try:
                async for _ in agent.run():
                    pass
            except Exception:
                pass  # the failed turn is part of the scene

        await asyncio.gather(*(run(agent) for agent in [self.tidy, *self.busy]))

    def ready(self) -> bool:
        return all(a.current_turn is not None for a in self.busy) and not self.tidy.is_running


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    fleet = Fleet()
    yield fleet
    fleet.gate.set()


def agents_table(app: Dashboard) -> AgentsTable:
    return app._main.query_one(AgentsTable)


def column(table: Any, key: str) -> list[str]:
    index = list(table.columns).index(key)
    return [str(table.get_row_at(i)[index]) for i in range(table.row_count)]


def drawn(app: Dashboard, widget: Any) -> str:
    """What the screen shows of ``widget``: the lines of its region."""
    region = widget.region
    lines = screen_lines(app)[region.y : region.bottom]
    return "\n".join(line[region.x : region.right] for line in lines)


def names_drawn(app: Dashboard, names: list[str]) -> list[str]:
    """The ``names`` the agents table draws whole (a name followed by a space: not cut)."""
    table = drawn(app, agents_table(app))
    return [name for name in names if f"{name} " in table]


def running_rows(app: Dashboard) -> list[str]:
    """The agent labels the Running panel draws."""
    table = app._main.query_one(RunningPanel).render()
    assert isinstance(table, Table)
    cells = table.columns[0].cells
    return [str(cell) for cell in cells if str(cell)]


async def test_at_140_columns_names_show_whole_and_the_agents_table_grows(
    fleet: Fleet, until: Any
) -> None:
    app = dashboard(fleet.workload)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, fleet.ready)
        table = agents_table(app)
        names = [a.name for a in fleet.busy] + ["tidy-bot"]
        assert names_drawn(app, names) == names
        current = [cell for cell in column(table, "current") if cell]
        assert current
        assert all(cell.endswith("…") and len(cell) <= 24 for cell in current)
        assert table.size.height >= BUSY + 2  # every row and the header: nothing hidden
        assert sorted(running_rows(app)) == sorted(a.name for a in fleet.busy)
        assert "Running · every agent · selected: assistant.t1" in screen_text(app)
        await pilot.press("3")
        await until(pilot, lambda: "Values of assistant.t1" in screen_text(app))


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_on_a_narrow_screen_the_name_is_kept_and_the_rest_gives_way(
    size: tuple[int, int], fleet: Fleet, until: Any
) -> None:
    app = dashboard(fleet.workload)
    async with app.run_test(size=size) as pilot:
        await until(pilot, fleet.ready)
        shown = (size[1] - 10) // 2  # the rows the agents table has room for
        names = sorted([a.name for a in fleet.busy] + ["tidy-bot"])[:shown]
        assert names_drawn(app, names) == names
        assert sorted(running_rows(app)) == sorted(a.name for a in fleet.busy)


async def test_slash_filters_the_running_panel_and_the_filter_stays_in_its_title(
    fleet: Fleet, until: Any
) -> None:
    app = dashboard(fleet.workload)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, fleet.ready)
        await pilot.press("2", "slash")
        field = app._main.query_one("#filter", Input)
        assert app.focused is field
        assert field.display
        await pilot.press(*"agent:t1$")
        await until(pilot, lambda: running_rows(app) == ["assistant.t1"])
        await pilot.press("escape")
        assert app.focused is agents_table(app)
        assert not field.display
        await until(pilot, lambda: "filter: agent:t1$" in screen_text(app))
        assert running_rows(app) == ["assistant.t1"]  # the filter is kept

        await pilot.press("slash")
        assert field.value == "agent:t1$"  # the filter in force, to edit
        await pilot.press("backspace", "(")  # agent:t1, then agent:t1(
        await until(pilot, lambda: "filter error: bad regular expression" in screen_text(app))
        assert field.value == "agent:t1("
        ones = ["assistant.t1", "assistant.t10", "assistant.t11", "assistant.t12"]
        assert sorted(running_rows(app)) == ones  # the last good filter holds
        assert app.view_error is None
        assert app.return_code is None

        await pilot.press(*["backspace"] * 9, *"!tool:summ")
        await until(pilot, lambda: running_rows(app) == [])
        assert "no turn matches the filter" in screen_text(app)


async def test_each_panel_remembers_its_own_filter_and_sort(fleet: Fleet, until: Any) -> None:
    app = dashboard(fleet.workload)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, fleet.ready)
        table = agents_table(app)
        # The timeline (of the agent selected): the failed turn, by the older word for it.
        table.move_cursor(row=table.get_row_index("tidy-bot"))
        await pilot.press("6", "slash", *"state:error", "enter")
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: column(timeline, "tool") == ["explode"])
        await pilot.press("slash", *["backspace"] * 11, *"!state:error", "enter", "s", "s")
        await until(pilot, lambda: column(timeline, "tool") == ["tidy", "tidy"])
        assert timeline.choice.sort_column == "tool"

        # The events': a kind or its older name, and only that agent's.
        await pilot.press("5", "slash", *"agent:tidy state:error", "enter")
        log = app._main.query_one(EventsPanel).log_widget
        await until(pilot, lambda: log.line_count == 1)
        assert "explode" in log.lines[0]
        assert "tidy-bot" in log.lines[0]

        # Queue shows one agent's items: ``/`` and ``s`` act on the agents table.
        await pilot.press("1", "slash", *"state:running !agent:t1$", "enter")
        await until(pilot, lambda: table.row_count == BUSY - 1)
        assert "assistant.t1" not in column(table, "agent")
        await pilot.press("s", "S")  # by agent, then reversed
        await until(pilot, lambda: "sort: agent ▼" in screen_text(app))
        labels = column(table, "agent")
        assert labels == sorted(labels, reverse=True)

        # Each kept its own: the agents' filter and sort still hold and show.
        await pilot.press("1")
        await until(pilot, lambda: "sort: agent ▼" in screen_text(app))
        assert table.row_count == BUSY - 1
        assert timeline.choice.query.text == "!state:error"
        assert timeline.choice.sort_column == "tool"


async def test_the_values_panel_filters_by_tool_and_text(until: Any) -> None:
    @tool()
    async def talk(n: int) -> Any:
        for word in ("alpha", "beta", "gamma"):
            yield f"{word} {n}"

    agent = Agent("talker", "talks", [talk])

    async def workload() -> None:
        await agent.put(Turn(talk, args=[1]))
        async for _ in agent.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=(100, 30)) as pilot:
        model = app.model
        assert model is not None
        await until(pilot, lambda: model.agent("talker").completed == 1)
        await pilot.press("3")
        log = app._main.query_one(ValuesLog)
        await until(pilot, lambda: log.line_count == 3)
        await pilot.press("slash", *"!beta", "enter")
        await until(pilot, lambda: log.line_count == 2)
        assert not any("beta" in line for line in log.lines)
        assert "Values of talker · filter: !beta" in screen_text(app)
