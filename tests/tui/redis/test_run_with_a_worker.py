"""``pygents-tui run`` on a program that serves agents with a ``pygents.redis``
Worker: a worker runs each delivered turn in an agent run of its own, never the
agent's ``run()`` loop, and the agents table must still say what it is doing. With a
real ``redis-server`` and the real Worker in the app's loop."""

from __future__ import annotations

import asyncio

from redis_console import settle

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker
from pygents_tui.app import Dashboard
from pygents_tui.cli import pending_words


async def test_an_agent_served_by_a_worker_says_running_with_its_turn_count(
    redis_server: RedisServer,
) -> None:
    holding: list[int] = []
    release = asyncio.Event()

    @tool()
    async def hold(n: int) -> int:
        """Runs until the test releases it."""
        holding.append(n)
        await release.wait()
        return n

    agent = Agent("desk", "served from its mailbox", [hold])
    async with Mailboxes(redis_server.url) as mailboxes:
        worker = Worker(mailboxes, agent, concurrency=2, prefetch=0, stop_grace=0)
        app = Dashboard(worker.run)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: worker.ready)
            for n in (1, 2):
                await mailboxes.put("desk", Turn(hold, args=[n]), reply=False)
            await settle(pilot, lambda: len(holding) == 2)
            await settle(pilot, lambda: len(app.view.running_turns("desk")) == 2)
            row = app.view.agent_row("desk")
            assert row is not None
            assert row.state == "running"  # not idle: two of its turns run
            assert row.current_tool == "hold +1"  # the oldest, and how many more

            release.set()
            await settle(pilot, lambda: not app.view.running_turns("desk"))
            row = app.view.agent_row("desk")
            assert row is not None
            assert (row.current_tool, row.completed) == (None, 2)
            assert row.state != "running"  # what its last run left (as after run())
            worker.stop()


async def test_quitting_mid_turn_says_which_turns_stay_pending_in_their_mailbox(
    redis_server: RedisServer,
) -> None:
    holding: list[int] = []

    @tool()
    async def hold(n: int) -> int:
        """Runs until cancelled: the dashboard quits under it."""
        holding.append(n)
        await asyncio.Event().wait()
        return n

    agent = Agent("desk", "served from its mailbox", [hold])
    async with Mailboxes(redis_server.url) as mailboxes:
        worker = Worker(mailboxes, agent, concurrency=2, prefetch=0, stop_grace=0)
        app = Dashboard(worker.run)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: worker.ready)
            for n in (1, 2):
                await mailboxes.put("desk", Turn(hold, args=[n]), reply=False)
            await settle(pilot, lambda: len(app.view.running_turns("desk")) == 2)
            await pilot.press("q")
        assert app.return_code == 0
        stats = await mailboxes.stats("desk")
        assert (stats.pending, stats.workers) == (2, 0)  # held by no live worker
    assert getattr(app, "left_pending", None) == {"desk": 2}
    assert pending_words(app) == [
        "pygents-tui: 2 turns of desk were running when you quit: they stay pending in "
        "its Redis mailbox until a worker takes them over (after the visibility timeout)"
    ]
