"""W11k: control from the dashboard, with 4 worker processes.

``pygents-tui listen --redis URL --control``'s app runs under Textual's Pilot in this
process, its Redis source surveying every second as it does by default; 4 worker
processes (those of W11, ``python -m benchmarks.redis_workloads control``) serve one
mailbox. Each sample is timed from the key press — the action's key, then ``y`` in
the confirmation — to the effect as the producer sees it: ``x`` on a running turn
until the producer's handle has its ``CANCELLED`` outcome; ``p`` until every worker
says it applies the pause (the survey shows it); ``p`` again until a turn put while
paused has its result. Target: p95 ≤ 1 s each.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any, Final

from benchmarks import redis_workloads as rw
from pygents import StopReason, Turn
from pygents.redis import Mailboxes, RedisServer
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.redis.source import RedisSource
from pygents_tui.ui.screens.confirm import ConfirmScreen
from pygents_tui.ui.widgets.mailbox import MailboxPanel

WORKERS: Final = 4
TARGET: Final = 1.0  # seconds, p95


async def console_rows(quick: bool) -> list[dict[str, Any]]:
    """W11k's rows: p95 from the key press to the effect, per action."""
    if not RedisServer.available():
        return [rw._row("W11k", "dashboard control (no redis-server)", "skipped", "", None, None)]
    samples = 10 if quick else 30
    with RedisServer() as server, rw._processes(server.url, "control", WORKERS):
        async with Mailboxes(server.url) as mailboxes:
            await rw._until(lambda: rw._live(mailboxes, rw.CONTROLLED, WORKERS))
            found = await _measure(server.url, mailboxes, samples)
    out = []
    for rid, what, taken in (
        ("W11kc", "x on a running turn → its CANCELLED outcome", found["cancel"]),
        ("W11kp", "p → every worker applies the pause", found["pause"]),
        ("W11kr", "p again → result of a turn put while paused", found["resume"]),
    ):
        p95 = rw._p95(taken)
        out.append(
            rw._row(rid, f"dashboard: {what}, {WORKERS} workers, confirm included "
                    f"(p95 of {samples})", f"p95 {p95 * 1e3:.0f} ms",
                    f"p50 {statistics.median(taken) * 1e3:.0f} ms", p95 / TARGET, 1.0)
        )  # fmt: skip
    return out


async def _measure(url: str, mailboxes: Mailboxes, samples: int) -> dict[str, list[float]]:
    fleet = FleetModel(stale_after=3600.0)
    source = RedisSource(fleet, url, control=True)  # the default 1 s survey
    fleet.store.sources.attach(source)
    app = listen_app(fleet, "127.0.0.1", None, None)
    taken: dict[str, list[float]] = {"cancel": [], "pause": [], "resume": []}
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            source.start()
            while not fleet.store.agent_rows():
                await pilot.pause(0.01)
            await pilot.press("8")
            panel = app.screen.query_one(MailboxPanel)
            for _ in range(samples):
                taken["cancel"].append(await _cancel(pilot, app, source, panel, mailboxes))
                pause, resume = await _pause(pilot, app, source, mailboxes)
                taken["pause"].append(pause)
                taken["resume"].append(resume)
    finally:
        await source.close()
    return taken


async def _confirmed(pilot: Any, app: Any, key: str) -> None:
    """Press ``key``, then ``y`` once the confirmation is up."""
    await pilot.press(key)
    while not isinstance(app.screen, ConfirmScreen):
        await pilot.pause(0.001)
    await pilot.press("y")


async def _cancel(
    pilot: Any, app: Any, source: RedisSource, panel: MailboxPanel, mailboxes: Mailboxes
) -> float:
    handle = await mailboxes.put(rw.CONTROLLED, Turn(rw.bench_w11_hold))
    async with asyncio.timeout(30):
        while True:  # running, and listed by the dashboard (before the clock starts)
            _, started = await mailboxes.client.blpop([f"{rw.CONTROLLED}:started"])
            if started == handle.turn_uuid:
                break
        while f"p:{handle.message_id}" not in {key for key, _ in panel._shown}:
            app.refresh_view()
            await pilot.pause(0.01)
    panel.focus()
    keys = [key for key, _ in panel._shown]
    panel.move_cursor(row=keys.index(f"p:{handle.message_id}"), animate=False)
    await pilot.pause()
    start = time.perf_counter()
    await _confirmed(pilot, app, "x")
    async with asyncio.timeout(30):
        outcome = await handle.outcome()
    took = time.perf_counter() - start
    assert outcome.stop_reason is StopReason.CANCELLED
    return took


async def _shown_paused(pilot: Any, source: RedisSource, paused: bool) -> None:
    """Wait (untimed) until the dashboard's survey shows the mailbox ``paused``."""
    async with asyncio.timeout(30):
        while source.survey is None or source.survey[rw.CONTROLLED].paused is not paused:
            await pilot.pause(0.005)


async def _pause(
    pilot: Any, app: Any, source: RedisSource, mailboxes: Mailboxes
) -> tuple[float, float]:
    await _shown_paused(pilot, source, False)
    start = time.perf_counter()
    await _confirmed(pilot, app, "p")

    async def applied() -> bool:
        found = (await mailboxes.survey([rw.CONTROLLED]))[rw.CONTROLLED]
        return len(found.workers) == WORKERS and all(w.paused for w in found.workers)

    await rw._until(applied, 30)
    paused = time.perf_counter() - start
    handle = await mailboxes.put(rw.CONTROLLED, Turn(rw.bench_w9, args=[1]))
    await _shown_paused(pilot, source, True)  # else p would ask to pause again
    start = time.perf_counter()
    await _confirmed(pilot, app, "p")
    async with asyncio.timeout(30):
        await handle.result()
    return paused, time.perf_counter() - start
