"""SVG snapshots of the dashboard's screens, on a fixed and deterministic scene.

Every snapshot starts from the same scene: six agents driven to known states inside the app's own
event loop. The model's clock is fake and only the scene's tools move it, so durations, bars and
timestamps are exact; its wall clock is fake too, so the inspector's dates are. The refresh timer
is paused, and the scene calls ``refresh_view()`` itself at fixed points, as the timer would. Turn
ids are pinned for the inspector through the public ``Turn.from_dict``. Nothing private is patched.

Regenerate with ``uv run pytest tests/tui/test_snapshots.py --snapshot-update``, then
look at the SVGs before committing (``docs/dashboard.md`` links them).
"""

from __future__ import annotations

import asyncio
import random
import types
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NamedTuple
from uuid import UUID

import pytest
from fake_clock import FakeClock
from textual.pilot import Pilot
from textual.widgets import Input

from pygents import Agent, ContextItem, ContextPool, ContextQueue, Turn, tool
from pygents_tui import Dashboard, DashboardModel
from pygents_tui.ui.screens import HelpScreen, InspectorScreen

EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z, the wall-clock time of fake second 0

After = Callable[[Pilot[Any], "Scene"], Awaitable[None]]


class TurnIds:
    """Turn ids from a seeded generator, in the order the scene makes its turns."""

    def __init__(self, seed: int = 2026) -> None:
        self._random = random.Random(seed)

    def pin(self, turn: Turn[Any]) -> Turn[Any]:
        """``turn`` with the next id: a copy made through its public round trip."""
        uuid = str(UUID(int=self._random.getrandbits(128), version=4))
        return Turn.from_dict({**turn.to_dict(), "uuid": uuid})


class Scene:
    """Six agents, each left in a different state.

    * ``planner`` finished three planning turns.
    * ``fetcher-1`` streamed two topics, then a fetch failed, which left two turns queued.
    * ``fetcher-2`` streamed one topic, then a turn timed out.
    * ``summarizer`` filled its pool past the limit (one eviction) and its context queue.
    * ``archiver`` is paused, with work queued.
    * ``crawler`` is 6.5 s into a turn that has a 10 s timeout.
    """

    def __init__(self, app: Dashboard, clock: FakeClock) -> None:
        self.app = app
        self.clock = clock
        self.ids = TurnIds()
        self.crawling = asyncio.Event()
        self.release = asyncio.Event()

        @tool()
        async def plan(round_no: int) -> str:
            """Plan a round."""
            clock.advance(0.35 + 0.05 * round_no)
            return f"round {round_no}: fetch solar, tides"

        @tool()
        async def fetch(topic: str, pages: int = 3) -> AsyncIterator[str]:
            """Stream the pages of a topic."""
            for page in range(1, pages + 1):
                clock.advance(0.15)
                yield f"{topic} · page {page}/{pages}"

        @tool()
        async def fetch_strict(url: str) -> str:
            """A fetch that fails."""
            clock.advance(0.2)
            raise ConnectionError(f"{url} answered 503 Service Unavailable")

        @tool()
        async def stall(topic: str) -> str:
            """Never answers, so the turn times out."""
            clock.advance(0.01)
            await asyncio.Event().wait()
            return topic

        @tool()
        async def summarize(topic: str, pages: int) -> ContextItem[str]:
            """Summarize a topic into the pool."""
            clock.advance(0.4)
            return ContextItem(
                id=f"{topic}-summary",
                description=f"summary of {topic} ({pages} pages)",
                content=f"{topic} in short: {pages} pages read",
            )

        @tool()
        async def note(line: str) -> ContextItem[str]:
            """Note a line in the context queue."""
            clock.advance(0.1)
            return ContextItem(content=line)

        @tool()
        async def archive(batch: int) -> str:
            """Archive a batch."""
            clock.advance(0.5)
            return f"batch {batch} archived"

        @tool()
        async def crawl(site: str) -> str:
            """Crawl a site until released."""
            self.crawling.set()
            await self.release.wait()
            return site

        self.tools = types.SimpleNamespace(
            plan=plan,
            fetch=fetch,
            fetch_strict=fetch_strict,
            stall=stall,
            summarize=summarize,
            note=note,
            archive=archive,
            crawl=crawl,
        )
        self.planner = Agent("planner", "Plans rounds of research", [plan])
        self.fetcher1 = Agent("fetcher-1", "Streams pages", [fetch, fetch_strict])
        self.fetcher2 = Agent("fetcher-2", "Streams pages", [fetch, stall])
        self.summarizer = Agent(
            "summarizer",
            "Keeps summaries",
            [summarize, note],
            context_queue=ContextQueue(limit=4),
            context_pool=ContextPool(limit=3),
        )
        self.archiver = Agent("archiver", "Archives batches", [archive])
        self.crawler = Agent("crawler", "Crawls sites", [crawl])

    def tick(self) -> None:
        """What the refresh timer would do, at a point the scene chooses."""
        self.app.refresh_view()

    async def drain(self, agent: Agent) -> None:
        """Run ``agent`` until its queue is empty or a turn fails."""
        try:
            async for _turn, _value in agent.run():
                self.clock.advance(0.05)
                self.tick()
        except Exception:
            pass  # failures are part of the scene
        self.clock.advance(0.25)
        self.tick()

    def turn(self, *args: Any, **kwargs: Any) -> Turn[Any]:
        """A turn with the scene's next pinned id."""
        return self.ids.pin(Turn(*args, **kwargs))

    async def play(self) -> None:
        t = self.tools
        for n in (1, 2, 3):
            await self.planner.put(self.turn(t.plan, kwargs={"round_no": n}, timeout=5))
        await self.drain(self.planner)

        fetcher1 = self.fetcher1
        await fetcher1.put(self.turn(t.fetch, kwargs={"topic": "solar"}, timeout=3))
        await fetcher1.put(self.turn(t.fetch, kwargs={"topic": "tides", "pages": 4}, timeout=3))
        await fetcher1.put(
            self.turn(
                t.fetch_strict,
                args=["https://example.org/glaciers"],
                timeout=3,
                tags=["io"],
                metadata={"attempt": 2, "source": "planner"},
            )
        )
        await fetcher1.put(self.turn(t.fetch, kwargs={"topic": "coral"}, timeout=3))
        await fetcher1.put(self.turn(t.fetch, kwargs={"topic": "aurora", "pages": 6}, timeout=4))
        await self.drain(fetcher1)

        await self.fetcher2.put(
            self.turn(t.fetch, kwargs={"topic": "dunes", "pages": 2}, timeout=3)
        )
        # A real (if tiny) timeout: the outcome is the same every time.
        await self.fetcher2.put(self.turn(t.stall, kwargs={"topic": "caves"}, timeout=0.01))
        await self.drain(self.fetcher2)

        for topic, pages in (("solar", 3), ("tides", 4), ("dunes", 2), ("comets", 5)):
            await self.summarizer.put(
                self.turn(t.summarize, kwargs={"topic": topic, "pages": pages}, timeout=4)
            )
            await self.summarizer.put(
                self.turn(t.note, kwargs={"line": f"read {pages} pages on {topic}"}, timeout=4)
            )
        await self.drain(self.summarizer)

        self.archiver.pause()
        for batch in (1, 2):
            await self.archiver.put(self.turn(t.archive, kwargs={"batch": batch}, timeout=10))

        await self.crawler.put(self.turn(t.crawl, kwargs={"site": "example.org"}, timeout=10))

        async def crawling() -> None:
            async for _ in self.crawler.run():
                pass

        # A worker, so that the app cancels it when it exits.
        self.app.run_worker(crawling(), name="crawler", exit_on_error=False)
        async with asyncio.timeout(5):
            await self.crawling.wait()
        self.clock.advance(6.5)  # the crawl is 6.5 s into its 10
        self.tick()

    async def encore(self) -> None:
        """Two more planning rounds."""
        for n in (4, 5):
            await self.planner.put(self.turn(self.tools.plan, kwargs={"round_no": n}, timeout=5))
        await self.drain(self.planner)


def scene_app(
    clock: FakeClock, after: After | None = None
) -> tuple[Dashboard, Callable[[Pilot[Any]], Awaitable[None]]]:
    """A dashboard with no workload, and the ``run_before`` that plays the scene in
    it, then runs ``after`` (keys, mostly) and repaints once more."""
    app = Dashboard(model=DashboardModel(clock=clock, wall_clock=lambda: EPOCH + clock.now))

    async def run_before(pilot: Pilot[Any]) -> None:
        app.refresh_timer.pause()
        await pilot.pause()  # let mount-time messages (and their refreshes) settle
        scene = Scene(app, clock)
        await scene.play()
        await pilot.pause()
        if after is not None:
            await after(pilot, scene)
        app.refresh_view()
        await pilot.pause()
        assert getattr(app, "view_error", None) is None

    return app, run_before


async def select(pilot: Pilot[Any], agent: str) -> None:
    """Move the agents table's cursor down to ``agent`` (rows are sorted by name)."""
    app = pilot.app
    assert isinstance(app, Dashboard)
    for _ in range(10):
        if app.selected_agent == agent:
            return
        await pilot.press("j")
    raise AssertionError(f"no agent {agent!r} in the table")


class Shot(NamedTuple):
    """One snapshot of the scene: an agent selected, keys pressed, what must be shown."""

    name: str  # the SVG is __snapshots__/test_snapshots/test_<name>.svg
    agent: str | None = None
    keys: tuple[str, ...] = ()
    size: tuple[int, int] = (80, 24)
    filtering: bool = False  # the keys type into the filter, whose cursor must stand still
    opens: type[Any] | None = None  # the screen the keys must have opened
    inspects: str | None = None  # the tool of the turn the inspector must show


SHOTS = (
    # The agents overview and the Running panel: the crawl against its timeout, the
    # turn that timed out.
    Shot("overview", agent="crawler"),
    Shot("overview_120x36", agent="fetcher-1", size=(120, 36)),
    Shot("queue", agent="fetcher-1", keys=("1",)),  # the two turns behind the failed fetch
    Shot("values", agent="fetcher-1", keys=("3",)),
    # The summarizer's context queue window, and its pool after one eviction.
    Shot("context", agent="summarizer", keys=("4",)),
    Shot("events_filtered", keys=("5", "slash", *"fetcher-2"), filtering=True),
    # fetcher-2's turns: a stream that completed, then the turn that timed out.
    Shot("timeline", agent="fetcher-2", keys=("6",)),
    # Timeline, then ``enter`` on the failed fetch (the newest of fetcher-1's turns):
    # the timeline takes the focus as it is shown. Its traceback names lines of this
    # file: code moving ``Scene.drain`` up or down changes this SVG.
    Shot(
        "inspector_failed_turn",
        agent="fetcher-1",
        keys=("6", "enter"),
        opens=InspectorScreen,
        inspects="fetch_strict",
    ),
    Shot("help", keys=("question_mark",), opens=HelpScreen),
)


@pytest.fixture
def snapshot(snapshot: Any, request: pytest.FixtureRequest) -> Any:
    """syrupy names a snapshot after its test (``test_screen[queue]``); each shot keeps
    the file it had as a test of its own (``test_queue.svg``), so that the SVGs and the
    docs that link them stay as they are."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and isinstance(callspec.params.get("shot"), Shot):
        snapshot.test_location.testname = f"test_{callspec.params['shot'].name}"
    return snapshot


@pytest.mark.parametrize("shot", SHOTS, ids=[shot.name for shot in SHOTS])
def test_screen(shot: Shot, snap_compare: Any, clock: FakeClock) -> None:
    async def after(pilot: Pilot[Any], scene: Scene) -> None:
        if shot.agent is not None:
            await select(pilot, shot.agent)
        if shot.filtering:  # a blinking cursor would make the snapshot depend on timing
            pilot.app.screen.query_one("#filter", Input).cursor_blink = False
        if shot.keys:
            await pilot.press(*shot.keys)
        if shot.opens is not None:
            assert isinstance(pilot.app.screen, shot.opens)
        if shot.inspects is not None:
            screen = pilot.app.screen
            assert isinstance(screen, InspectorScreen)
            assert screen.record.tool == shot.inspects

    app, run_before = scene_app(clock, after)
    assert snap_compare(app, run_before=run_before, terminal_size=shot.size)


def test_frozen(snap_compare: Any, clock: FakeClock) -> None:
    """``space`` freezes the view; two more planning turns arrive and are only counted."""

    async def after(pilot: Pilot[Any], scene: Scene) -> None:
        await select(pilot, "planner")
        await pilot.press("space")
        await scene.encore()

    app, run_before = scene_app(clock, after)
    assert snap_compare(app, run_before=run_before)
