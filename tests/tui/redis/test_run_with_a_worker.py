"""``pygents-tui run`` on a program that serves agents with a ``pygents.redis``
Worker: a worker runs each delivered turn in an agent run of its own, never the
agent's ``run()`` loop, and the agents table must still say what it is doing. With a
real ``redis-server`` and the real Worker in the app's loop."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from redis_console import settle
from terminal import SCRIPT, terminal

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker
from pygents.testing import isolated_registries
from pygents_tui.cli._commands import pending_words
from pygents_tui.ui.app import Dashboard


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
            assert row.state == "idle"  # its worker serves on, waiting for the next turn
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
        "pygents-tui: 2 turns of desk running when you quit: a turn its worker did not "
        "finish stays pending in the Redis mailbox until a worker takes it over (after the "
        "visibility timeout)"
    ]


SERVED = """
import asyncio
import os

from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker


@tool()
async def hold(n: int) -> int:
    await asyncio.Event().wait()  # runs until the dashboard quits under it
    return n


agent = Agent("desk", "served from its mailbox", [hold])


async def main() -> None:
    async with Mailboxes(os.environ["SERVED_REDIS_URL"]) as mailboxes:
        await Worker(mailboxes, agent, concurrency=2, prefetch=0).run()
"""


async def _put_two(url: str) -> None:
    async with Mailboxes(url) as mailboxes:
        for n in (1, 2):
            await mailboxes.put("desk", Turn(HOLD, args=[n]), reply=False)


async def _stats(url: str) -> tuple[int, int]:
    async with Mailboxes(url) as mailboxes:
        stats = await mailboxes.stats("desk")
    return stats.pending, stats.workers


with isolated_registries():

    @tool()
    async def hold(n: int) -> int:
        """The producer's side of the served program's tool: only its name travels."""
        return n

    HOLD = hold


def test_q_mid_turn_under_pygents_tui_run_exits_0_and_says_what_stays_pending(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "served.py").write_text(SERVED)
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && SERVED_REDIS_URL={redis_server.url} "
        f"{shlex.quote(str(SCRIPT))} run served.py; "
        f"echo EXIT:$? > {shlex.quote(str(exit_file))}; sleep 60"
    )
    with terminal("run-worker") as term:
        term.start(command, width=120, height=30)
        term.wait_for("the served agent's row", lambda s: "desk" in s)
        asyncio.run(_put_two(redis_server.url))
        term.wait_for("both turns running", lambda s: "hold +1" in s)
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"
        line = "2 turns of desk running when you quit: a turn its worker did not finish"
        screen = term.wait_for("the line on exit", lambda s: line in " ".join(s.split()))
        assert "stays pending in the Redis mailbox" in " ".join(screen.split())
    pending, _workers = asyncio.run(_stats(redis_server.url))
    assert pending == 2  # (the gone worker's heartbeat lapses by itself)
