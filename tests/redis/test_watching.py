"""What a process that serves mailboxes shows: ``served_stats()``, the in-process
dashboard's Mailbox column, and the telemetry's mailbox gauges."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import Gauge, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from redis_helpers import Serving, eventually
from rich.text import Text
from textual.pilot import Pilot

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, Worker, served_stats
from pygents_otel import PygentsInstrumentor
from pygents_tui import Dashboard
from pygents_tui.ui.widgets import AgentsTable

FAST = 0.02  # seconds between two readings of the statistics, in these tests


def _gated(release: asyncio.Event) -> Agent:
    @tool()
    async def file(n: int) -> int:
        """Files a form once the test allows it."""
        await release.wait()
        return n

    return Agent("clerk", "Files forms", [file])


def _mailbox_cells(app: Dashboard) -> dict[str, str]:
    """The Mailbox column by agent name ({} while the column is absent)."""
    table = app.screen.query_one(AgentsTable)
    keys = [column.key.value for column in table.columns.values()]
    if "mailbox" not in keys:
        return {}
    at = keys.index("mailbox")
    return {str(row.key.value): str(table.get_row(row.key)[at]) for row in table.rows.values()}


async def _until(pilot: Pilot[Any], check: Callable[[], bool], what: str) -> None:
    """Let the dashboard and the workers (same loop) run until ``check()`` holds."""
    app = pilot.app
    assert isinstance(app, Dashboard)
    for _ in range(500):
        app.refresh_view()
        if check():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"never: {what}; the Mailbox column shows {_mailbox_cells(app)}")


async def test_the_dashboard_shows_a_served_agents_mailbox_depth_and_workers(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    release = asyncio.Event()
    clerk = _gated(release)

    @tool()
    async def idle() -> None:
        """Does nothing: its agent is not served from a mailbox."""

    Agent("local", "Runs here", [idle])
    app = Dashboard()
    app.animation_level = "none"
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        assert _mailbox_cells(app) == {}  # no mailboxes yet: the table keeps its columns
        for _ in range(2):
            worker = Worker(mailboxes, clerk, concurrency=1, prefetch=0, stats_interval=FAST)
            await serving.start(worker)
        handles = await mailboxes.put_many("clerk", [Turn("file", args=[n]) for n in range(5)])
        await _until(
            pilot,
            lambda: _mailbox_cells(app) == {"clerk": "5 · 2w", "local": ""},
            "five turns in the clerk's mailbox, two workers",
        )
        release.set()
        assert [await h.result() for h in handles] == list(range(5))
        await _until(pilot, lambda: _mailbox_cells(app)["clerk"] == "0 · 2w", "an empty mailbox")
        await serving.close()
        await _until(pilot, lambda: _mailbox_cells(app)["clerk"] == "", "no worker left here")
        assert isinstance(app.screen.query_one(AgentsTable).get_row("clerk")[-1], Text)
    assert "clerk" not in served_stats()


async def test_served_stats_follow_the_mailbox_and_leave_with_the_last_worker(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    release = asyncio.Event()
    clerk = _gated(release)
    assert served_stats() == {}
    one = await serving.start(Worker(mailboxes, clerk, concurrency=1, stats_interval=FAST))
    two = await serving.start(Worker(mailboxes, clerk, concurrency=1, stats_interval=FAST))
    handles = await mailboxes.put_many("clerk", [Turn("file", args=[n]) for n in range(3)])
    await eventually(lambda: "clerk" in served_stats() and served_stats()["clerk"].depth == 3)
    stats = served_stats()["clerk"]
    assert (stats.agent, stats.workers, stats.dead_letters) == ("clerk", 2, 0)
    release.set()
    await asyncio.gather(*(h.result() for h in handles))
    await serving.stop(one)
    assert "clerk" in served_stats()  # the other worker still serves it
    await serving.stop(two)
    assert served_stats() == {}


async def test_the_telemetry_reports_the_mailboxes_as_gauges(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    release = asyncio.Event()
    clerk = _gated(release)
    reader = InMemoryMetricReader()
    meters, tracers = MeterProvider(metric_readers=[reader]), TracerProvider()
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=tracers, meter_provider=meters)
    try:
        worker = Worker(mailboxes, clerk, concurrency=1, prefetch=0, stats_interval=FAST)
        await serving.start(worker)
        handles = await mailboxes.put_many("clerk", [Turn("file", args=[n]) for n in range(4)])
        await eventually(lambda: _depth_and_pending(4, 1))  # the worker holds the one it runs
        gauges = _gauges(reader)
        release.set()
        await asyncio.gather(*(h.result() for h in handles))
    finally:
        instrumentor.uninstrument()
        meters.shutdown()
        tracers.shutdown()
    assert gauges["pygents.mailbox.depth"] == {"clerk": 4}
    assert gauges["pygents.mailbox.workers"] == {"clerk": 1}
    assert gauges["pygents.mailbox.dead_letters"] == {"clerk": 0}
    assert gauges["pygents.mailbox.pending"] == {"clerk": 1}


def _depth_and_pending(depth: int, pending: int) -> bool:
    stats = served_stats().get("clerk")
    return stats is not None and (stats.depth, stats.pending) == (depth, pending)


def _gauges(reader: InMemoryMetricReader) -> dict[str, dict[str, int]]:
    """The mailbox gauges' points, by metric name, then agent name."""
    found: dict[str, dict[str, int]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name.startswith("pygents.mailbox.") and isinstance(metric.data, Gauge):
                    found[metric.name] = {
                        str((p.attributes or {})["gen_ai.agent.name"]): int(p.value)
                        for p in metric.data.data_points
                    }
    return found
