"""W6 of SPEC §5: W1 with the dashboard attached (headless), and the time the screen
takes to show a new event while agents produce about 10,000 events a second."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass

from benchmarks import workloads as wl
from pygents import Agent, AgentRegistry, Turn, tool
from pygents_tui import Dashboard


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
            state = app.model.agents.get("bench-latency")
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
