"""``pygents-tui listen --redis``: the mailboxes of a real ``redis-server`` as rows,
queues and the Mailbox panel, merged with the agents heard over OTLP; the refusals in
one line (read-only, an OTLP-only agent); a Redis that is down at start or goes
down mid-run costs one line and a count, never the dashboard."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from otlp_requests import Event, logs_batch
from redis_console import MakeConsole, events, settle, toasts

from pygents import Turn, tool
from pygents.redis import Mailboxes, RedisServer
from pygents.testing import isolated_registries
from pygents_tui.listen.fleet import CAPABILITIES
from pygents_tui.listen.redis_source import READ_ONLY
from pygents_tui.screens.confirm import ConfirmScreen
from pygents_tui.widgets.mailbox import MailboxPanel

WORKER = "box-4242-abc123"
WALL = 1_700_000_000 * 10**9


# The producer only names the tool: declared outside the registry, as test modules
# must not leave declarations behind (tests/conftest.py).
with isolated_registries():

    @tool()
    async def fetch_page(url: str) -> str:
        """Stands for a worker's tool."""
        return url


async def populate(mailboxes: Mailboxes) -> list[Turn]:
    """``desk``: four turns (one delivered to a consumer), a dead letter whose error
    holds an escape sequence, and a live worker's heartbeat."""
    client, keys = mailboxes.client, mailboxes.keys("desk")
    turns = [Turn(fetch_page, args=[f"page-{n}"], timeout=7) for n in range(4)]
    await mailboxes.put_many("desk", turns, reply=False)
    await client.xgroup_create(keys.mailbox, "pygents", id="0")
    await client.xreadgroup("pygents", WORKER, {keys.mailbox: ">"}, count=1)
    turn = dict(Turn(fetch_page, args=["x"]).to_dict(), uuid="dead-0", tool_name="fetch_page")
    await client.xadd(
        keys.dead,
        {"message_id": "1-0", "reason": "max_deliveries", "error": "boom \x1b]0;owned\x07",
         "deliveries": "6", "worker": WORKER, "payload": json.dumps({"turn": turn})},
    )  # fmt: skip
    await client.zadd(keys.workers, {WORKER: int(time.time() * 1000) + 60_000})
    return turns


async def test_the_source_fills_the_rows_the_queue_and_the_mailbox_panel_from_redis(
    console: MakeConsole, redis_server: RedisServer, text_of: Callable[[Any], str]
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        turns = await populate(mailboxes)
    shown = console(control=False)
    app = shown.app
    async with app.run_test(size=(130, 40)) as pilot:
        shown.source.start()
        await settle(pilot, lambda: app.selected_agent is not None)
        (row,) = shown.fleet.agent_rows()
        assert (row.label, row.state, row.queue_depth, row.current_tool) == (
            "redis/desk", "running", 3, "fetch_page",
        )  # fmt: skip
        assert shown.fleet.mailboxes()[row.key].depth == 4
        await settle(pilot, lambda: "4 · 1w" in text_of(app))  # the Mailbox column

        await pilot.press("1")
        await settle(pilot, lambda: "page-3" in text_of(app))
        position, tool_name, arguments, timeout = app.view.queued_turns(row.key)[0]
        assert (position, tool_name, "page-1" in arguments, timeout) == (
            "1",
            "fetch_page",
            True,
            "7s",
        )

        await pilot.press("8")
        panel = app.screen.query_one(MailboxPanel)
        await settle(pilot, lambda: panel.row_count == 5)  # with the keys row
        screen = text_of(app)
        assert "read-only" in screen
        assert f"on {WORKER} · turn {turns[0].uuid[:8]}" in screen
        assert "boom ␛]0;owned␇" in screen  # control characters made visible
        assert "\x1b" not in screen
        assert "box pid 4242" in screen  # read from the worker's default name


async def test_an_agent_heard_over_otlp_with_a_mailboxs_name_is_served_by_it(
    console: MakeConsole, redis_server: RedisServer
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        await populate(mailboxes)
    shown = console(control=True)
    shown.fleet.ingest(
        logs_batch(
            [
                Event("pygents.agent.snapshot", {"gen_ai.agent.name": name,
                      "gen_ai.agent.id": f"id-{name}", "pygents.agent.state": "idle"}, WALL)
                for name in ("desk", "solo")
            ]
        )
    )  # fmt: skip
    shown.fleet.drain()
    assert await shown.source.refresh()
    keys = {row.name: row.key for row in shown.fleet.agent_rows()}
    assert sorted(keys) == ["desk", "solo"]  # no redis/desk row: the OTLP one is served
    desk, solo = keys["desk"], keys["solo"]
    sources = shown.fleet.sources
    assert sources.of(desk).offers("pause")
    assert sources.of(desk).offers("dead_letters")
    assert shown.fleet.mailboxes()[desk].dead_letters == 1
    assert sources.of(solo).why_not("pause") == CAPABILITIES.why_not("pause")
    assert not sources.of(solo).offers("cancel")
    assert shown.fleet.unavailable("queue", desk) is None  # its queue's turns are known


async def test_without_control_every_action_answers_the_read_only_line(
    console: MakeConsole, redis_server: RedisServer
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        await populate(mailboxes)
    shown = console(control=False)
    app = shown.app
    async with app.run_test(size=(130, 40)) as pilot:
        shown.source.start()
        await settle(pilot, lambda: app.selected_agent is not None)
        await pilot.press("p")
        await pilot.press("8")
        panel = app.screen.query_one(MailboxPanel)
        await settle(pilot, lambda: panel.row_count == 5)  # with the keys row
        for key in ("x", "r", "d", "D"):
            await pilot.press(key)
        await settle(pilot, lambda: len(toasts(app)) == 5)
        assert toasts(app) == [READ_ONLY] * 5
        assert not isinstance(app.screen, ConfirmScreen)
        async with Mailboxes(redis_server.url) as mailboxes:
            desk = (await mailboxes.survey(["desk"]))["desk"]
        assert not desk.paused
        assert desk.stats.dead_letters == 1


async def test_an_otlp_only_agent_is_refused_in_the_otlp_sources_line(
    console: MakeConsole,
) -> None:
    shown = console(control=True)
    shown.fleet.ingest(
        logs_batch([Event("pygents.agent.snapshot", {"gen_ai.agent.name": "solo",
                          "gen_ai.agent.id": "id-solo"}, WALL)])
    )  # fmt: skip
    app = shown.app
    async with app.run_test(size=(130, 40)) as pilot:
        shown.source.start()
        await settle(pilot, lambda: app.selected_agent is not None and shown.source.surveys > 0)
        await pilot.press("p")
        await settle(pilot, lambda: len(toasts(app)) == 1)
        assert toasts(app) == [CAPABILITIES.why_not("pause")]
        assert not isinstance(app.screen, ConfirmScreen)


async def test_a_redis_down_at_start_and_mid_run_is_one_line_and_a_count_never_a_crash(
    console: MakeConsole, redis_server: RedisServer, text_of: Callable[[Any], str]
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        await populate(mailboxes)
    redis_server.stop()
    shown = console(control=True)
    app = shown.app
    async with app.run_test(size=(130, 40)) as pilot:
        shown.source.start()
        await settle(pilot, lambda: shown.source.errors >= 3)
        assert sum("unavailable:" in line for line in events(app)) == 1
        await settle(pilot, lambda: "Redis survey(s) failed" in text_of(app))

        redis_server.start()  # empty again
        async with Mailboxes(redis_server.url) as mailboxes:
            await populate(mailboxes)
        await settle(pilot, lambda: shown.source.error is None and shown.fleet.agent_rows())
        assert sum("available:" in line for line in events(app)) == 2  # one down, one back

        errors = shown.source.errors
        redis_server.stop()  # mid-run
        await settle(pilot, lambda: shown.source.errors >= errors + 3)
        assert sum(line.startswith("unavailable:") for line in events(app)) == 2
        await pilot.press("p")  # acting while it is down: one line, no crash
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(
            pilot, lambda: any(t.startswith("could not pause mailbox desk: ") for t in toasts(app))
        )
        assert any(line.startswith("control: could not pause mailbox desk") for line in events(app))
        assert app.is_running
        assert app.view_error is None
