"""The first hour with ``pygents-tui listen``: what it counts matches what ``run``
counts for the same program, and what it shows before anything arrived says what to do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider
from test_listen_live import exporting, settle

from pygents import Agent, Turn, subscribe, tool
from pygents_tui.app import Dashboard
from pygents_tui.listen import FleetModel
from pygents_tui.model import DashboardModel
from pygents_tui.widgets import AgentsTable

__all__ = ["exporting"]  # a fixture, shared with the live-mode tests


async def test_returned_values_are_counted_under_listen_as_under_run(
    fleet: FleetModel, exporting: tuple[TracerProvider, LoggerProvider], until: Any
) -> None:
    @tool()
    async def shout(word: str) -> str:
        return word.upper()

    @tool()
    async def spell(word: str) -> AsyncIterator[str]:
        for letter in word:
            yield letter

    model = DashboardModel()
    with subscribe(model):
        agent = Agent("returns", "three returned values, then two streamed", [shout, spell])
        for word in ("a", "b", "c"):
            await agent.put(Turn(shout, args=[word]))
        await agent.put(Turn(spell, args=["de"]))
        assert [value async for _, value in agent.run()] == ["A", "B", "C", "d", "e"]
    model.drain()
    await settle(fleet, exporting)

    (remote,) = fleet.agent_rows()
    assert model.agents["returns"].values == remote.values == 5

    app = Dashboard(view=fleet)
    async with app.run_test(size=(120, 40)) as pilot:
        table = app._main.query_one(AgentsTable)
        await until(pilot, lambda: table.row_count == 1)
        keys = [key for key, _label, _width in AgentsTable.COLUMNS]
        assert str(table.get_row_at(0)[keys.index("values")]) == "5"
