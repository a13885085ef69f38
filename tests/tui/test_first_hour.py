"""What a newcomer meets in the dashboard's first hour: counts that add up, hints that
say what to do, and panels that say nothing when they have nothing to say."""

from __future__ import annotations

import asyncio
from typing import Any

from pilot import dashboard
from test_app import SIZE, row

from pygents import Agent, Turn, tool


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
