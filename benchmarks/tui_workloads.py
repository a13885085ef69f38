"""W6 of SPEC §5: W1 with the dashboard attached (headless), and the time the screen
takes to show a new event while agents produce about 10,000 events a second. W6k: how
fast the dashboard answers keys while many agents return big values."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.widgets import TabbedContent

from benchmarks import workloads as wl
from pygents import Agent, AgentRegistry, Turn, tool
from pygents_tui import Dashboard

KEY_CHARACTERS = {"question_mark": "?", "escape": None, "q": "q", "2": "2", "3": "3", "6": "6"}
TAB_OF_KEY = {"2": "tab-running", "3": "tab-values", "6": "tab-timeline"}


def active_tab(app: Dashboard) -> str:
    return app.screen.query_one(TabbedContent).active if app.screen.is_mounted else ""


async def w6(n: int) -> float:
    """W1 run inside the dashboard's event loop, the dashboard attached and refreshing."""
    app = Dashboard()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        elapsed = await wl.w1(n)
        app.refresh_view()  # the dashboard keeps up afterwards
    return elapsed


@dataclass(frozen=True)
class Latency:
    median_ms: float
    p95_ms: float
    worst_ms: float
    events_per_second: float


@tool()
async def bench_tick(i: int) -> int:
    """A turn that yields to the event loop, as real tools do."""
    await asyncio.sleep(0)
    return i


async def screen_latency(batches: int = 20, rate: float = 10_000.0) -> Latency:
    """Run turns under the dashboard at about ``rate`` hook events a second; after each
    batch, measure how long until a screen refresh shows the batch's last turn."""
    app = Dashboard()
    lags: list[float] = []
    events = 0
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        agent = Agent("bench-latency", "latency probe", [bench_tick])
        shown = {"count": 0, "at": 0.0, "expected": 0}
        reached = asyncio.Event()
        refresh = app.refresh_view

        def refresh_and_watch() -> None:
            refresh()
            state = app.model.store.agents.get("bench-latency")
            if state is not None and state.completed > shown["count"]:
                shown["count"], shown["at"] = state.completed, time.perf_counter()
                if shown["count"] >= shown["expected"]:
                    reached.set()

        app.refresh_timer.stop()
        app.refresh_timer = app.set_interval(1 / app.refresh_hz, refresh_and_watch)
        per_batch = max(1, int(rate / 10 / 20))  # ~10 events a turn, 20 batches a second
        start = time.perf_counter()
        try:
            for batch in range(batches):
                for i in range(per_batch):
                    await agent.put(Turn(bench_tick, kwargs={"i": i}))
                async for _ in agent.run():
                    events += 10
                ended = time.perf_counter()
                shown["expected"] = (batch + 1) * per_batch
                reached.clear()
                if shown["count"] < shown["expected"]:
                    async with asyncio.timeout(5):
                        await reached.wait()
                lags.append(shown["at"] - ended)
                await asyncio.sleep(max(0.0, (batch + 1) / 20 - (time.perf_counter() - start)))
        finally:
            AgentRegistry.unregister("bench-latency")
    ms = sorted(lag * 1000 for lag in lags)
    return Latency(
        median_ms=statistics.median(ms),
        p95_ms=ms[max(0, int(len(ms) * 0.95) - 1)],
        worst_ms=ms[-1],
        events_per_second=events / (time.perf_counter() - start),
    )


# -- W6k: keys under agents that return big values -------------------------------------


@dataclass(frozen=True)
class KeyAnswer:
    """How fast the dashboard answers keys while agents return big values."""

    median_ms: float
    worst_ms: float
    quit_ms: float
    turns_per_second: float
    alone_turns_per_second: float


@tool()
async def bench_big(result: list[int]) -> list[int]:
    """Return the (shared, prebuilt) big list: the cost measured is the dashboard's."""
    await asyncio.sleep(0)
    return result


async def _churn(
    agent: Agent,
    result: list[int],
    done: list[int],
    turns: int | None,
    loaded: asyncio.Event | None = None,
) -> None:
    """Run ``bench_big`` turns on ``agent`` in batches of ten: ``turns`` of them, or
    until cancelled. ``loaded`` is set once the first batch has run."""
    while turns is None or done[0] < turns:
        for _ in range(10):
            await agent.put(Turn(bench_big, args=[result]))
        async for _ in agent.run():
            done[0] += 1
        if loaded is not None:
            loaded.set()


def _big_agents(count: int) -> list[Agent]:
    return [Agent(f"bench-big-{i:03d}", "returns a big list", [bench_big]) for i in range(count)]


async def _answer(app: Dashboard, key: str, answered: Callable[[], bool]) -> float:
    """Send ``key`` as the terminal would and time until ``answered()`` holds."""
    start = time.perf_counter()
    app.post_message(events.Key(key, KEY_CHARACTERS.get(key)))
    while not answered():  # noqa: ASYNC110 - what the screen shows is the measurement
        await asyncio.sleep(0.002)
    return time.perf_counter() - start


async def key_answer(agents: int = 50, items: int = 200_000, presses: int = 5) -> KeyAnswer:
    """``agents`` agents each returning a ``items``-item list as fast as they can; the
    time the dashboard takes to answer ``?``, ``esc`` and panel keys, then ``q``. The
    same agents alone, without the dashboard, give the throughput to compare with."""
    result = list(range(items))
    crowd = _big_agents(agents)
    try:
        counts = [[0] for _ in crowd]
        start = time.perf_counter()
        await asyncio.gather(
            *(_churn(a, result, c, 20) for a, c in zip(crowd, counts, strict=True))
        )
        alone = sum(c[0] for c in counts) / (time.perf_counter() - start)

        counts = [[0] for _ in crowd]
        loaded = asyncio.Event()

        async def workload() -> None:
            await asyncio.gather(
                *(_churn(a, result, c, None, loaded) for a, c in zip(crowd, counts, strict=True))
            )

        app = Dashboard(workload)
        lags: list[float] = []
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await loaded.wait()  # the load is on
            began, before = time.perf_counter(), sum(c[0] for c in counts)
            main = app.screen
            for _ in range(presses):
                lags.append(await _answer(app, "question_mark", lambda: app.screen is not main))
                lags.append(await _answer(app, "escape", lambda: app.screen is main))
                for tab in ("3", "6", "2"):
                    wanted = TAB_OF_KEY[tab]
                    lags.append(await _answer(app, tab, lambda w=wanted: active_tab(app) == w))
            rate = (sum(c[0] for c in counts) - before) / (time.perf_counter() - began)
            quit_at = time.perf_counter()
            app.post_message(events.Key("q", "q"))
            # Leave run_test only once the key is handled: tearing the screens down
            # first would race the key's dispatch.
            while app.return_code is None:  # noqa: ASYNC110 - the quit is the measurement
                await asyncio.sleep(0.002)
        quit_seconds = time.perf_counter() - quit_at
    finally:
        for agent in crowd:
            AgentRegistry.unregister(agent.name)
    ms = sorted(lag * 1000 for lag in lags)
    return KeyAnswer(
        median_ms=statistics.median(ms),
        worst_ms=ms[-1],
        quit_ms=quit_seconds * 1000,
        turns_per_second=rate,
        alone_turns_per_second=alone,
    )
