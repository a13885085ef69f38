"""The agents table's tick under many changing rows: every changed cell is written,
and the table asks Textual for one repaint, not one per cell (with 2,000 agents a
tick writes a thousand cells and more; see W12 in docs/performance.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pilot import dashboard
from textual.widgets import DataTable

from pygents import Agent, AgentRegistry, Turn, tool
from pygents_tui.widgets import AgentsTable

AGENTS = 12


async def two_turns(agent: Agent) -> None:
    (job,) = agent.tools
    for n in range(2):
        await agent.put(Turn(job, args=[n]))
    async for _ in agent.run():
        pass


@pytest.fixture
def crowd() -> Iterator[list[Agent]]:
    """Agents of one quick tool, left in the registry only for the test."""

    @tool()
    async def crowd_job(n: int) -> int:
        return n

    agents = [Agent(f"crowd-{i:02d}", "two turns at a time", [crowd_job]) for i in range(AGENTS)]
    yield agents
    for agent in agents:
        AgentRegistry.unregister(agent.name)


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
