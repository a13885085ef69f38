"""SVG snapshots of the main screen with names of realistic length, at three sizes.

Three agents named as a real program names them (20 characters each, two that differ
only by their last character), tools of up to 20 characters: one finished two turns,
one failed a fetch and is 4 s into another, one is 6.5 s into a check. The model's
clock is fake and only the scene moves it; the refresh timer is paused and the scene
repaints at fixed points, so every width, bar and time is exact.

Regenerate with ``uv run pytest tests/tui/test_layout_snapshots.py --snapshot-update``,
then look at the SVGs before committing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from fake_clock import FakeClock
from textual.pilot import Pilot

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard, DashboardModel

SIZES = [(80, 24), (120, 40), (160, 45)]
NAMES = ("research-assistant-1", "research-assistant-2", "citation-checker-bot")


class Scene:
    def __init__(self, app: Dashboard, clock: FakeClock) -> None:
        self.app, self.clock = app, clock
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        release, started = self.release, self.started

        @tool()
        async def summarize_findings(topic: str) -> str:
            clock.advance(0.4)
            return f"{topic}: three findings"

        @tool()
        async def fetch_search_results(query: str) -> str:
            clock.advance(0.3)
            raise ConnectionError(f"search for {query!r} answered 503")

        @tool()
        async def verify_citations(paper: str) -> str:
            started.set()
            await release.wait()
            return paper

        self.summarize, self.fetch, self.verify = (
            summarize_findings,
            fetch_search_results,
            verify_citations,
        )
        self.agents = [
            Agent(name, "researches", [self.summarize, self.fetch, self.verify]) for name in NAMES
        ]

    async def drain(self, agent: Agent) -> None:
        try:
            async for _ in agent.run():
                self.clock.advance(0.05)
                self.app.refresh_view()
        except Exception:
            pass  # the failed fetch is part of the scene

    async def play(self) -> None:
        first, second, checker = self.agents
        for topic in ("tides", "glaciers"):
            await first.put(Turn(self.summarize, args=[topic], timeout=5))
        await self.drain(first)
        await second.put(Turn(self.fetch, args=["coral bleaching"], timeout=5))
        await self.drain(second)
        await second.put(Turn(self.verify, args=["doi:10.1000/182"], timeout=10))
        await checker.put(Turn(self.verify, args=["doi:10.1000/183"], timeout=10))

        async def run(agent: Agent) -> None:
            async for _ in agent.run():
                pass

        for agent in (second, checker):
            self.started.clear()
            self.app.run_worker(run(agent), name=agent.name, exit_on_error=False)
            async with asyncio.timeout(5):
                await self.started.wait()
            self.clock.advance(2.5 if agent is second else 4.0)
        self.app.refresh_view()


def scene_app(
    clock: FakeClock, keys: tuple[str, ...] = ()
) -> tuple[Dashboard, Callable[[Pilot[Any]], Awaitable[None]]]:
    app = Dashboard(model=DashboardModel(clock=clock, wall_clock=lambda: 1_767_225_600 + clock.now))

    async def run_before(pilot: Pilot[Any]) -> None:
        app.refresh_timer.pause()
        await pilot.pause()
        await Scene(app, clock).play()
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
        app.refresh_view()
        await pilot.pause()
        assert app.view_error is None

    return app, run_before


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_realistic_names(size: tuple[int, int], snap_compare: Any, clock: FakeClock) -> None:
    """Every agent's name whole in the agents table and the Running panel; the title
    line names the agent selected; the agents table as tall as its rows."""
    app, run_before = scene_app(clock)
    assert snap_compare(app, run_before=run_before, terminal_size=size)


def test_realistic_names_filtered_and_sorted(snap_compare: Any, clock: FakeClock) -> None:
    """The Running panel filtered by tool and sorted by agent, last first: the filter
    and the sort in its title line."""
    keys = ("slash", *"tool:verify", "enter", "s", "S")
    app, run_before = scene_app(clock, keys)
    assert snap_compare(app, run_before=run_before, terminal_size=(120, 40))
