"""The in-process dashboard counts the turns a dead worker holds in a Redis mailbox as
waiting for takeover (a real ``redis-server``, a real worker in this process)."""

from __future__ import annotations

import asyncio

from redis_helpers import Serving, eventually

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, Worker, served_stats
from pygents.redis._lua.mailbox import GROUP
from pygents_tui import Dashboard

FAST = 0.02  # seconds between two readings of the statistics


async def test_turns_held_by_a_consumer_that_never_heartbeats_show_as_waiting_for_takeover(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    release = asyncio.Event()

    @tool()
    async def file(n: int) -> int:
        """Files a form once the test allows it."""
        await release.wait()
        return n

    clerk = Agent("clerk", "Files forms", [file])
    app = Dashboard()
    async with app.run_test(size=(130, 24)) as pilot:
        # One live worker (claims only after 30 s idle, far past this test) takes one turn.
        worker = Worker(mailboxes, clerk, concurrency=1, prefetch=0, stats_interval=FAST)
        await serving.start(worker)
        await mailboxes.put_many("clerk", [Turn("file", args=[n]) for n in range(3)])
        status = app.screen.query_one("#status")
        await eventually(lambda: "clerk" in served_stats() and served_stats()["clerk"].pending == 1)
        # A consumer that read two entries and died: it never heartbeated.
        ghost = await mailboxes.client.xreadgroup(
            GROUP, "ghost", {mailboxes.keys("clerk").mailbox: ">"}, count=2
        )
        assert sum(len(entries) for _, entries in ghost) == 2
        for _ in range(500):  # bounded: the worker's statistics come every 20 ms
            app.refresh_view()
            if "2 waiting for takeover" in str(status.render()):
                break
            await pilot.pause(0.01)
        assert "2 waiting for takeover (their worker is gone)" in str(status.render())
        release.set()  # the live worker's turn ends; the serving fixture stops it
