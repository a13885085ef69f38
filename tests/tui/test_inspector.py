"""Finding and reading the turn inspector in-process (``demo`` and ``run``), under
Textual's Pilot: the footer offers ``enter`` where a turn row is selected; a turn
of a process with no OpenTelemetry SDK shows its own hook events as its timeline,
and no ``x`` (there is nothing to write); with spans, ``x`` is offered, and writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fake_clock import FakeClock
from on_screen import screen_lines
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NoOpTracerProvider
from pilot import Notes, dashboard

from pygents import Agent, Turn, subscribe, tool
from pygents_tui import DashboardModel
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.widgets import TimelineTable

SIZE = (110, 40)
EXPORT = "x: write the trace to a file (OTLP JSON)"


def footer(app: Any) -> str:
    return screen_lines(app)[-1]


async def test_the_footer_offers_enter_where_a_turn_row_is_selected(until: Any) -> None:
    @tool()
    async def job() -> int:
        return 1

    agent = Agent("worker", "one turn", [job])

    async def workload() -> None:
        await agent.put(Turn(job))
        async for _ in agent.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.workload_done.is_set())
        assert "Inspect" not in footer(app)  # the agents table: its rows are agents
        await pilot.press("6")
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: app.focused is timeline and timeline.row_count == 1)
        await until(pilot, lambda: "⏎ Inspect" in footer(app))
        assert footer(app).split()[:2] == ["q", "Quit"]  # the way out stays first
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))


async def test_without_spans_the_inspector_shows_the_turns_hook_events_and_no_export(
    until: Any,
) -> None:
    clock = FakeClock()
    first, go = asyncio.Event(), asyncio.Event()

    @tool()
    async def note(line: str) -> str:
        return line

    @tool()
    async def fetch(topic: str) -> AsyncIterator[str]:
        clock.advance(0.1)
        yield f"{topic} · page [b]1[/b]"  # markup-like: shown as written
        first.set()
        await go.wait()
        clock.advance(0.2)
        await writer.put(Turn(note, args=["read"]))
        yield f"{topic} · page 2"

    fetcher = Agent("fetcher", "streams pages", [fetch])
    writer = Agent("writer", "takes notes", [note])

    async def workload() -> None:
        await fetcher.put(Turn(fetch, args=["tides"], timeout=3))
        async for _ in fetcher.run():
            pass

    model = DashboardModel(clock=clock)
    app = dashboard(workload, model=model, tracer_provider=NoOpTracerProvider())
    notes = Notes()
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        app.refresh_timer.pause()  # the test reads the stream at the points it chooses
        async with asyncio.timeout(10):
            await first.wait()
        app.refresh_view()  # reads the first value, 0.1 s into the turn
        go.set()
        await until(pilot, lambda: app.workload_done.is_set())
        (record,) = model.store.recent
        app.action_inspect(record.uuid)
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        lines = [line.strip(" ▇▁█▎") for line in screen_lines(app)]
        assert (
            "trace spans  no OpenTelemetry SDK is configured in this process, so no"
            in "\n".join(lines)
        )
        start = lines.index("+0.000s ▶ fetch")
        assert lines[start - 2].startswith("hook events  in seconds from its start")
        assert lines[start - 1] == "(a stream's values: at the refresh that read them)"
        assert lines[start : start + 5] == [
            "+0.000s ▶ fetch",
            "+0.100s value 1: tides · page [b]1[/b]",
            "+0.300s writer  ← note queued",
            "+0.300s value 2: tides · page 2",
            "+0.300s ✔ completed",
        ]
        assert lines[start + 5] == "esc to go back"  # and no x: nothing to write
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        assert screen.check_action("export_trace", ()) is False
        await pilot.press("x")
        await pilot.pause()
        assert "nothing to export" not in notes
        assert isinstance(app.screen, InspectorScreen)


async def test_x_is_offered_once_the_turn_has_spans_and_writes_them(
    provider: TracerProvider, tmp_path: Path, until: Any
) -> None:
    release = asyncio.Event()

    @tool()
    async def wait() -> str:
        await release.wait()
        return "done"

    agent = Agent("waiter", "waits", [wait])

    async def workload() -> None:
        await agent.put(Turn(wait, timeout=30))
        async for _ in agent.run():
            pass

    app = dashboard(workload, tracer_provider=provider)
    app.export_dir = tmp_path
    notes = Notes()
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        assert app.model is not None
        store = app.model.store
        await until(pilot, lambda: len(store.running) == 1)
        (running,) = store.running.values()
        app.action_inspect(running.uuid)
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        # Running: none of its spans has ended, so none is here to write.
        assert screen.check_action("export_trace", ()) is False
        assert EXPORT not in "\n".join(screen_lines(app))

        release.set()
        await until(pilot, lambda: EXPORT in "\n".join(screen_lines(app)))
        assert screen.check_action("export_trace", ()) is True
        await pilot.press("x")
        trace_id = screen.record.trace_id
        path = tmp_path / f"trace-{trace_id}.json"
        await until(pilot, lambda: str(path) in " ".join(notes.messages))
        assert path.read_text().startswith("{")


async def test_a_long_stream_keeps_its_first_reads_and_says_how_many_more() -> None:
    """A turn keeps a bounded timeline: its start, its first few reads of values, a
    line counting the rest, and its end."""
    clock = FakeClock()
    model = DashboardModel(clock=clock)

    @tool()
    async def count() -> AsyncIterator[int]:
        for n in range(20):
            clock.advance(0.01)
            yield n

    agent = Agent("counter", "counts", [count])
    with subscribe(model):
        await agent.put(Turn(count))
        async for _ in agent.run():
            model.store.drain()  # a refresh between every two values
    model.store.drain()
    (record,) = model.store.recent
    events = record.hook_events()
    assert [event.kind for event in events] == ["turn", *["value"] * 4, "more", "turn"]
    assert [event.text for event in events[1:3]] == ["value 1: 0", "value 2: 1"]
    assert events[-2].text == "… 16 more not kept"
    assert events[-1].text == "✔ completed"
    assert record.values == 20
