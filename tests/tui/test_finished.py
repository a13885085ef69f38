"""Agents that leave the registry (the per-request ``async with Agent(...)`` pattern)
stay listed, finished and dimmed, with their totals, until the user clears them —
bounded, and without keeping the agents alive."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
from on_screen import screen_lines

from pygents import Agent, AgentRegistry, Turn, subscribe, tool
from pygents_tui import Dashboard, DashboardModel
from pygents_tui.ui.widgets import AgentsTable, ContextPanel


class Service:
    """Its tools are registered per test (the registries are, too)."""

    def __init__(self) -> None:
        @tool()
        async def answer(question: str) -> str:
            return f"answer to {question}"

        @tool()
        async def refuse(question: str) -> str:
            raise ValueError(f"no answer to {question}")

        self.answer, self.refuse = answer, refuse

    async def serve(self, name: str, ok: bool = True) -> None:
        """One request, as a service handles it: an agent of its own, gone afterwards."""
        answer, refuse = self.answer, self.refuse
        async with Agent(name, "per request", [answer, refuse]) as agent:
            await agent.put(Turn(answer if ok else refuse, kwargs={"question": name}))
        try:
            async for _ in agent.run():
                pass
        except ValueError:
            pass


# -- the model -------------------------------------------------------------------------------


async def test_agents_that_unregister_are_kept_as_finished_with_their_totals(
    model: DashboardModel,
) -> None:
    watched: list[weakref.ref[Agent]] = []
    service = Service()
    answer, refuse = service.answer, service.refuse

    async def request(n: int) -> None:
        async with Agent(f"req-{n}", "per request", [answer, refuse]) as agent:
            watched.append(weakref.ref(agent))
            await agent.put(Turn(answer, kwargs={"question": str(n)}))
            await agent.put(Turn(refuse, kwargs={"question": str(n)}))
            try:
                async for _ in agent.run():
                    pass
            except ValueError:
                pass

    for n in range(9):
        await request(n)
    model.store.drain()
    assert len(AgentRegistry) == 0
    finished = model.finished_agents()
    assert [s.name for s in finished] == [f"req-{n}" for n in range(9)]
    assert all(s.completed == 1 and s.failed == 1 and s.values == 1 for s in finished)
    assert all(s.phase == "failed" for s in finished)
    assert model.completed == 9
    gc.collect()
    assert [ref() for ref in watched] == [None] * 9  # totals kept, not the agents


async def test_finished_agents_are_bounded_oldest_first_and_counted(clock: Any) -> None:
    model = DashboardModel(clock=clock, max_finished=3)
    service = Service()
    with subscribe(model):
        for n in range(5):
            await service.serve(f"req-{n}")
            model.store.drain()  # one refresh per request: each is seen leave
    assert [s.name for s in model.finished_agents()] == ["req-2", "req-3", "req-4"]
    assert model.finished.dropped == 2
    assert sorted(model.store.agents) == ["req-2", "req-3", "req-4"]  # forgotten entirely
    assert model.completed == 5  # the count of done turns stays


async def test_clearing_forgets_the_finished_agents_and_a_reused_name_is_live_again(
    model: DashboardModel,
) -> None:
    service = Service()
    await service.serve("worker")
    await service.serve("other")
    model.store.drain()
    assert {s.name for s in model.finished_agents()} == {"worker", "other"}
    version = model.store.version

    again = Agent("worker", "the same name, a new request", [service.answer])
    model.store.drain()
    assert [s.name for s in model.finished_agents()] == ["other"]
    assert model.store.agents["worker"].completed == 1  # its totals carry on
    assert model.store.agents["worker"].unregistered_at is None

    assert model.store.clear_finished() == 1
    assert model.store.version > version
    assert model.finished_agents() == []
    assert "other" not in model.store.agents
    assert "worker" in model.store.agents
    assert model.store.clear_finished() == 0
    AgentRegistry.discard("worker", again)


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_finished must be 0 or more"):
        DashboardModel(max_finished=-1)


# -- the screen ------------------------------------------------------------------------------


def status(app: Dashboard) -> str:
    return screen_lines(app)[1]


def footer(app: Dashboard) -> str:
    return screen_lines(app)[-1]


async def test_finished_agents_stay_listed_dimmed_until_c_clears_them(until: Any) -> None:
    service = Service()

    async def workload() -> None:
        for n in range(9):
            await service.serve(f"req-{n}", ok=n != 4)

    app = Dashboard(workload)
    app.animation_level = "none"
    async with app.run_test(size=(100, 30)) as pilot:
        table = app._main.query_one(AgentsTable)
        await until(pilot, lambda: app.workload_done.is_set() and table.row_count == 9)
        line = status(app)
        assert line.strip().startswith("0 agent(s) · 9 finished · 0 turn(s) running · 8 done")
        first = list(table.get_row("req-0"))
        assert [str(c) for c in first[:6]] == ["req-0", "done", "—", "", "1/0/0", "1"]
        assert all("dim" in str(cell.style) for cell in first)  # the whole row dimmed
        assert str(table.get_row("req-4")[1]) == "failed"
        assert str(table.get_row("req-4")[4]) == "0/1/0"
        assert "c Clear finished" in footer(app)

        await pilot.press("j")  # a finished agent's panels say what is left of it
        assert app.selected_agent == "req-1"
        await pilot.press("4")
        app.refresh_view()
        await pilot.pause()
        context = app._main.query_one(ContextPanel)
        assert "req-1 has finished" in str(context.render().renderables[0])

        await pilot.press("1", "c")
        await until(pilot, lambda: table.row_count == 0)
        assert status(app).strip().startswith("0 agent(s) · 0 turn(s) running · 8 done")
        assert "Clear finished" not in footer(app)
