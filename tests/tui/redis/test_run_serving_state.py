"""The state of an agent that a ``pygents.redis`` Worker serves under ``pygents-tui
run``: each of its turns runs in an agent run of its own, whose end left the row
reading ``done`` (or ``failed``) while the worker was still serving. It reads
``running`` while a turn runs and ``idle`` between turns, for as long as the worker
serves; what its last run left once the workload returns. With a real
``redis-server``, the real Worker, and the real console script."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from redis_console import settle
from terminal import SCRIPT, terminal

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker
from pygents.testing import isolated_registries
from pygents_tui.ui.app import Dashboard


async def test_a_served_agent_reads_idle_between_turns_until_its_worker_stops(
    redis_server: RedisServer,
) -> None:
    @tool()
    async def answer(n: int) -> int:
        """Returns at once."""
        return n

    @tool()
    async def refuse(n: int) -> int:
        """Fails at once."""
        raise LookupError(f"no {n}")

    agent = Agent("desk", "served from its mailbox", [answer, refuse])
    async with Mailboxes(redis_server.url) as mailboxes:
        worker = Worker(mailboxes, agent, concurrency=2, prefetch=0, stop_grace=0)
        app = Dashboard(worker.run)

        def state() -> str | None:
            row = app.view.agent_row("desk")
            return row.state if row is not None else None

        def counts() -> tuple[int, int] | None:
            row = app.view.agent_row("desk")
            return (row.completed, row.failed) if row is not None else None

        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, lambda: worker.ready)
            await mailboxes.put("desk", Turn(refuse, args=[1]), reply=False)
            await settle(pilot, lambda: counts() == (0, 1))
            assert state() == "idle"  # a failed turn does not make the served agent failed
            await mailboxes.put("desk", Turn(answer, args=[2]), reply=False)
            await settle(pilot, lambda: counts() == (1, 1))
            assert state() == "idle"  # served on, waiting for its next turn: not done
            assert not app.workload_done.is_set()

            worker.stop()
            await settle(pilot, app.workload_done.is_set)
            await settle(pilot, lambda: state() == "finished")  # served no more: "done"
            await pilot.press("q")


SERVED = """
import os

from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker


@tool()
async def answer(n: int) -> int:
    return n


agent = Agent("desk", "served from its mailbox", [answer])


async def main() -> None:
    async with Mailboxes(os.environ["SERVED_REDIS_URL"]) as mailboxes:
        await Worker(mailboxes, agent, concurrency=2, prefetch=0).run()
"""


async def _put(url: str, count: int) -> None:
    async with Mailboxes(url) as mailboxes:
        for n in range(count):
            await mailboxes.put("desk", Turn(ANSWER, args=[n]), reply=False)


with isolated_registries():

    @tool()
    async def answer(n: int) -> int:
        """The producer's side of the served program's tool: only its name travels."""
        return n

    ANSWER = answer


def test_a_worker_serving_under_pygents_tui_run_reads_idle_after_its_turns_not_done(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "served.py").write_text(SERVED)
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && SERVED_REDIS_URL={redis_server.url} "
        f"{shlex.quote(str(SCRIPT))} run served.py; "
        f"echo EXIT:$? > {shlex.quote(str(exit_file))}; sleep 60"
    )

    def desk(screen: str) -> list[str]:
        rows = [cells for cells in map(str.split, screen.splitlines()) if cells[:1] == ["desk"]]
        return rows[0] if rows else []

    with terminal("run-serving") as term:
        term.start(command, width=120, height=30)
        term.wait_for("the served agent's row", lambda s: bool(desk(s)))
        asyncio.run(_put(redis_server.url, 3))
        screen = term.wait_for("its three turns done", lambda s: "3/0/0" in desk(s))
        assert desk(screen)[1] == "idle", screen  # the worker serves on
        assert "workload finished" not in screen
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"
