"""The dashboard keeps bounded previews of what it saw, never the objects: once a
turn has ended and the program let go of it, its output, values, arguments, error
and context items can be freed while the dashboard keeps showing them."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
import weakref
from collections.abc import AsyncIterator
from typing import Any

from pygents import Agent, AgentRegistry, ContextItem, ContextPool, Turn, tool
from pygents_tui import Dashboard, DashboardModel
from pygents_tui.ui.screens import InspectorScreen

MB = 1 << 20
TURNS = 40


class Big:
    """A megabyte that can be watched with a weak reference."""

    def __init__(self, tag: int) -> None:
        self.tag = tag
        self.blob = bytearray(MB)

    def __repr__(self) -> str:
        return f"Big({self.tag})"


class BigError(Exception):
    def __init__(self, payload: Big) -> None:
        super().__init__("too big")
        self.payload = payload


async def test_finished_turns_big_objects_are_freed_while_the_dashboard_runs(
    until: Any,
) -> None:
    alive: list[weakref.ref[Any]] = []

    def watched(obj: Any) -> Any:
        alive.append(weakref.ref(obj))
        return obj

    @tool()
    async def produce(n: int, bag: Big) -> Big:
        return watched(Big(n))

    @tool()
    async def stream(n: int) -> AsyncIterator[Big]:
        yield watched(Big(n))
        yield watched(Big(n + 1000))

    @tool()
    async def fail(n: int) -> None:
        raise BigError(watched(Big(n)))

    @tool()
    async def remember(n: int, pool: ContextPool[Big]) -> None:
        await pool.add(ContextItem(watched(Big(n)), description="big", id=f"big-{n % 2}"))

    agent = Agent(  # every add evicts: evicted items are context the dashboard saw
        "hoarder", "makes megabytes", [produce, stream, fail, remember], context_pool=ContextPool(1)
    )
    done = asyncio.Event()

    async def workload() -> None:
        for n in range(TURNS):
            kind = n % 4
            if kind == 0:
                turn = Turn(produce, kwargs={"n": n, "bag": watched(Big(-n))})
            elif kind == 1:
                turn = Turn(stream, kwargs={"n": n}, metadata={"m": watched(Big(-n))})
            elif kind == 2:
                turn = Turn(fail, args=[n])
            else:
                turn = Turn(remember, args=[n])
            await agent.put(turn)
            del turn
            try:
                async for _ in agent.run():
                    pass
            except BigError:
                pass
        await agent.context_pool.clear()
        done.set()

    model = DashboardModel()
    app = Dashboard(workload, model=model)
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: done.is_set() and app.workload_done.is_set())
        for key in "123456":  # every panel has shown them
            await pilot.press(key)
            app.refresh_view()
        last = model.store.recent[-1]
        app.action_inspect(model.store.recent[0].uuid)  # an inspector stays open
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        app.refresh_view()
        await pilot.pause()

        gc.collect()
        kept = [ref() for ref in alive if ref() is not None]
        assert len(alive) >= TURNS
        assert kept == []  # nothing the dashboard saw is kept alive by it
        # ... while it still shows what the turns did.
        assert model.store.agents["hoarder"].completed == TURNS * 3 // 4
        assert model.store.agents["hoarder"].failed == TURNS // 4
        assert model.store.agents["hoarder"].values_tail[-1].text == "None"
        assert "Big(" in "".join(v.text for v in model.store.agents["hoarder"].values_tail)
        assert last.kept is not None
        assert last.kept.args == ("39",)
        await pilot.press("escape")
        await pilot.press("q")


async def test_memory_held_by_the_model_stays_bounded(until: Any) -> None:
    """tracemalloc: N turns with 1 MB outputs grow the model by far less than N MB."""

    @tool()
    async def megabyte(n: int) -> bytes:
        return bytes(MB)

    agent = Agent("megabytes", "returns a megabyte", [megabyte])
    model = DashboardModel()
    app = Dashboard(model=model)
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for n in range(TURNS):
                await agent.put(Turn(megabyte, args=[n]))
                async for _ in agent.run():
                    pass
                app.refresh_view()
            await until(pilot, lambda: model.store.agents["megabytes"].completed == TURNS)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert grown < 4 * MB, f"the dashboard kept {grown / MB:.1f} MB for {TURNS} MB of outputs"


async def test_an_agent_the_program_dropped_is_not_kept_by_the_context_panel(
    until: Any,
) -> None:
    @tool()
    async def note(pool: ContextPool[Big]) -> None:
        await pool.add(ContextItem(Big(1), description="big", id="big"))

    def start() -> weakref.ref[Agent]:
        agent = Agent("forgotten", "is dropped", [note])
        return weakref.ref(agent)

    ref = start()
    app = Dashboard()
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")  # the context panel shows the selected agent
        await until(pilot, lambda: app.selected_agent == "forgotten")
        app.refresh_view()
        await pilot.press("1")
        AgentRegistry.unregister("forgotten")
        gc.collect()
        assert ref() is None
        await pilot.press("q")
