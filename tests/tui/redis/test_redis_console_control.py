"""``pygents-tui listen --redis URL --control``: each action from the key press,
through its confirmation, to its effect as the producer sees it, with real worker
processes (tests/redis/control_worker.py, serving ``desk``) on a real
``redis-server``; each leaves one Events line."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from desk_tools import declare
from redis_console import Console, MakeConsole, confirm, events, select_row, settle
from redis_helpers import eventually, processes, recorded_outcomes, spawn

from pygents import StopReason, Turn
from pygents.redis import Mailboxes, RedisServer
from pygents.testing import isolated_registries
from pygents_tui.ui.widgets.mailbox import MailboxPanel

# The workers' tools as the producer names them; registered nowhere past the import,
# since tool names are unique in a process and other test modules use these.
with isolated_registries():
    _DESK = declare()
work, hold = _DESK.work, _DESK.hold


async def _ready(shown: Console, pilot: object, workers: int = 1) -> str:
    """Wait until the dashboard shows ``desk`` with ``workers`` live; its row's key."""

    def served() -> bool:
        rows = shown.fleet.store.agent_rows()
        found = shown.source.mailbox(rows[0].key) if rows else None
        return found is not None and len(found.workers) == workers

    await settle(pilot, served, within=60)  # type: ignore[arg-type]
    return shown.fleet.store.agent_rows()[0].key


async def _started(mailboxes: Mailboxes, turn_uuid: str) -> bool:
    return turn_uuid in await mailboxes.client.lrange("started", 0, -1)


async def test_pause_stops_the_workers_taking_turns_until_resume(
    console: MakeConsole, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    shown = console()
    app = shown.app
    with processes([spawn("control_worker.py", tmp_path, url, "w-pause")]):
        async with Mailboxes(url) as mailboxes, app.run_test(size=(130, 40)) as pilot:
            shown.source.start()
            await _ready(shown, pilot)
            question = await confirm(pilot, app, "p")
            assert question == (
                "Pause mailbox desk? Its 1 worker takes no more of its turns (running ones finish)."
            )

            async def applied() -> bool:
                desk = (await mailboxes.survey(["desk"]))["desk"]
                return desk.paused and all(w.paused for w in desk.workers)

            await eventually(applied)
            handle = await mailboxes.put("desk", Turn(work, args=[7]))

            async def waiting() -> bool:
                desk = (await mailboxes.survey(["desk"]))["desk"]
                back = [p.turn_uuid for p in desk.pending if p.idle > 1e6]
                return [q.turn_uuid for q in desk.queued] + back == [handle.turn_uuid]

            await eventually(waiting)
            assert await mailboxes.client.llen("sidefx") == 0
            assert not handle.done
            await settle(pilot, lambda: shown.fleet.store.agent_rows()[0].state == "paused")

            assert (await confirm(pilot, app, "p")).startswith("Resume mailbox desk?")
            async with asyncio.timeout(10):
                assert await handle.result() == 7
    lines = events(app)
    assert "control: paused mailbox desk (1 worker)" in lines
    assert "control: resumed mailbox desk (1 worker)" in lines


async def test_cancel_ends_the_producers_handle_cancelled_once(
    console: MakeConsole, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    shown = console()
    app = shown.app
    with processes([spawn("control_worker.py", tmp_path, url, "w-cancel")]):
        async with Mailboxes(url) as mailboxes, app.run_test(size=(130, 40)) as pilot:
            shown.source.start()
            key = await _ready(shown, pilot)
            handle = await mailboxes.put("desk", Turn(hold))
            await eventually(lambda: _started(mailboxes, handle.turn_uuid))
            await settle(pilot, lambda: len(shown.source.mailbox(key).pending) == 1)  # type: ignore[union-attr]
            await pilot.press("8")
            panel = app.screen.query_one(MailboxPanel)
            await settle(pilot, lambda: panel.row_count == 4)  # with the keys row
            assert await select_row(pilot, panel, "p") == handle.message_id
            question = await confirm(pilot, app, "x")
            assert handle.turn_uuid in question

            async with asyncio.timeout(10):
                outcome = await handle.outcome()
            assert outcome.stop_reason is StopReason.CANCELLED
            mine = [
                o for o in await recorded_outcomes(mailboxes) if o.turn_uuid == handle.turn_uuid
            ]
            assert len(mine) == 1
            await settle(pilot, lambda: any("cancel requested" in e for e in events(app)))
    assert f"control: cancel requested for the turn {handle.turn_uuid} (hold)" in events(app)


async def _dead_letter(
    mailboxes: Mailboxes, tmp_path: Path, name: str, started: list[subprocess.Popen[bytes]]
) -> str:
    """A turn looking delivered 10 times to a dead consumer; a worker started then
    dead-letters it. Its uuid (as tests/redis/test_control.py makes one)."""
    client, keys = mailboxes.client, mailboxes.keys("desk")
    handle = await mailboxes.put("desk", Turn(work, args=[5]))
    await client.xgroup_create(keys.mailbox, "pygents", id="0")
    await client.xreadgroup("pygents", "ghost", {keys.mailbox: ">"}, count=1)
    await client.xclaim(
        keys.mailbox, "pygents", "ghost", 0, [handle.message_id],
        idle=10**9, retrycount=10, justid=True,
    )  # fmt: skip
    started.append(spawn("control_worker.py", tmp_path, mailboxes.url, name))
    async with asyncio.timeout(60):
        assert (await handle.outcome()).dead_letter
    return handle.turn_uuid


async def _dead_letter_row(shown: Console, pilot: object, key: str) -> None:
    await settle(pilot, lambda: shown.source.mailbox(key).dead_letters)  # type: ignore[arg-type, union-attr]


async def test_a_retried_dead_letter_runs_again(
    console: MakeConsole, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    shown = console()
    app = shown.app
    with processes([]) as started:
        async with Mailboxes(url) as mailboxes, app.run_test(size=(130, 40)) as pilot:
            shown.source.start()
            retried = await _dead_letter(mailboxes, tmp_path, "w-retry", started)
            key = await _ready(shown, pilot)
            await _dead_letter_row(shown, pilot, key)
            await pilot.press("8")
            dead_id = await select_row(pilot, app.screen.query_one(MailboxPanel), "d")
            assert (await confirm(pilot, app, "r")).startswith(f"Retry dead letter {dead_id}")

            async def ran() -> bool:
                effects = await mailboxes.client.lrange("sidefx", 0, -1)
                return [line.split()[0] for line in effects] == [retried]

            await eventually(ran)
            assert (await mailboxes.survey(["desk"]))["desk"].stats.dead_letters == 0
    assert f"control: retried dead letter {dead_id} (work) of mailbox desk" in events(app)


async def test_a_dropped_dead_letter_is_gone_and_never_runs(
    console: MakeConsole, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    shown = console()
    app = shown.app
    with processes([]) as started:
        async with Mailboxes(url) as mailboxes, app.run_test(size=(130, 40)) as pilot:
            shown.source.start()
            await _dead_letter(mailboxes, tmp_path, "w-drop", started)
            key = await _ready(shown, pilot)
            await _dead_letter_row(shown, pilot, key)
            await pilot.press("8")
            dead_id = await select_row(pilot, app.screen.query_one(MailboxPanel), "d")
            assert (await confirm(pilot, app, "d")).startswith(f"Drop dead letter {dead_id}")

            async def gone() -> bool:
                desk = (await mailboxes.survey(["desk"]))["desk"]
                return desk.stats.dead_letters == 0

            await eventually(gone)
            assert await mailboxes.client.llen("sidefx") == 0  # it never ran
            await settle(pilot, lambda: not shown.source.mailbox(key).dead_letters)  # type: ignore[union-attr]
    assert f"control: dropped dead letter {dead_id} (work) of mailbox desk" in events(app)


async def test_a_drained_worker_process_exits(
    console: MakeConsole, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    shown = console()
    app = shown.app
    worker = spawn("control_worker.py", tmp_path, url, "w-drained")
    with processes([worker]):
        async with app.run_test(size=(130, 40)) as pilot:
            shown.source.start()
            await _ready(shown, pilot)
            await pilot.press("8")
            panel = app.screen.query_one(MailboxPanel)
            await settle(pilot, lambda: panel.row_count == 3)  # with the keys row
            assert await select_row(pilot, panel, "w") == "w-drained"
            assert (await confirm(pilot, app, "D")).startswith("Drain worker w-drained?")
            assert await asyncio.to_thread(worker.wait, 30) == 0
            await _ready(shown, pilot, workers=0)
    assert "control: drain requested for worker w-drained" in events(app)
