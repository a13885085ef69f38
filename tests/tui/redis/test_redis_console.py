"""``pygents-tui listen --redis``: the mailboxes of a real ``redis-server`` as rows,
queues and the Mailbox panel, merged with the agents heard over OTLP; the refusals in
one line (read-only, an OTLP-only agent); a Redis that is down at start or goes
down mid-run costs one line and a count, never the dashboard."""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Callable
from typing import Any

from fake_clock import FakeClock
from otlp_requests import Event, logs_batch
from redis_console import MakeConsole, events, settle, toasts
from terminal import free_port

from pygents import Turn, tool
from pygents.redis import Mailboxes, RedisServer
from pygents.testing import isolated_registries
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.otlp.fleet import CAPABILITIES
from pygents_tui.feeders.redis.source import READ_ONLY, RedisSource
from pygents_tui.text._visible import visible
from pygents_tui.ui.screens.confirm import ConfirmScreen
from pygents_tui.ui.widgets import AgentsTable
from pygents_tui.ui.widgets._fit import fit_label
from pygents_tui.ui.widgets.mailbox import MailboxPanel

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
    holds an escape sequence, and a live worker's heartbeat, which says the worker is
    the process ``svc``/``i-1`` in its telemetry (``logs_batch``'s default sender)."""
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
    await client.hset(keys.control, f"identity:{WORKER}", json.dumps(["svc", "i-1"]))
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
        (row,) = shown.fleet.store.agent_rows()
        assert (row.label, row.state, row.queue_depth, row.current_tool) == (
            "redis/desk", "running", 3, "fetch_page",
        )  # fmt: skip
        assert shown.fleet.store.mailboxes()[row.key].depth == 4
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


async def test_an_agent_its_mailboxs_worker_sends_over_otlp_is_served_by_it(
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
    shown.fleet.store.drain()
    assert await shown.source.refresh()
    keys = {row.name: row.key for row in shown.fleet.store.agent_rows()}
    assert sorted(keys) == ["desk", "solo"]  # no redis/desk row: the OTLP one is served
    desk, solo = keys["desk"], keys["solo"]
    sources = shown.fleet.store.sources
    assert sources.of(desk).offers("pause")
    assert sources.of(desk).offers("dead_letters")
    assert shown.fleet.store.mailboxes()[desk].dead_letters == 1
    assert sources.of(solo).why_not("pause") == CAPABILITIES.why_not("pause")
    assert not sources.of(solo).offers("cancel")
    assert shown.fleet.store.unavailable("queue", desk) is None  # its queue's turns are known


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
        await settle(pilot, lambda: shown.source.error is None and shown.fleet.store.agent_rows())
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


async def test_format_characters_in_a_name_are_shown_in_the_table_and_the_confirmation(
    console: MakeConsole, redis_server: RedisServer, text_of: Callable[[Any], str]
) -> None:
    # A zero-width space and a right-to-left override: drawn raw, the first looks
    # exactly like "billing", the second reads as "payfinal" backwards.
    lookalike, reversed_ = "billing\u200b", "pay\u202elanif"
    async with Mailboxes(redis_server.url) as mailboxes:
        for name in ("billing", lookalike, reversed_):
            await mailboxes.put(name, Turn(fetch_page, args=["x"]), reply=False)
    shown = console(control=True)
    app = shown.app
    async with app.run_test(size=(130, 40)) as pilot:
        shown.source.start()
        await settle(pilot, lambda: len(shown.fleet.store.agent_rows()) == 3)
        await settle(pilot, lambda: "redis/billing\\u200b" in text_of(app))
        screen = text_of(app)
        assert "redis/pay\\u202elanif" in screen
        assert not any(unicodedata.category(char) == "Cf" for char in screen)
        table = app.screen.query_one(AgentsTable)
        row = next(row for row in shown.fleet.store.agent_rows() if row.name == lookalike)
        table.move_cursor(row=table.get_row_index(row.key))
        await settle(pilot, lambda: app.selected_agent == row.key)

        await pilot.press("p")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = text_of(app)
        assert "Pause mailbox billing\\u200b? Its 0 workers" in dialog
        assert not any(unicodedata.category(char) == "Cf" for char in dialog)
        await pilot.press("n")


async def test_a_name_made_longer_by_its_escapes_is_cut_to_its_column_as_drawn() -> None:
    name = "\u200b" * 12 + "tail"  # 16 characters, drawn in 76 cells
    assert len(visible(f"svc@i-1/{name}")) == 84
    cut = fit_label(f"svc@i-1/{name}", name, 30)
    assert len(cut) == 30  # what is drawn fits the column, not what was sent
    assert cut.startswith("\\u200b")
    assert cut.endswith("\\u200btail")
    assert cut.count("…") == 1


async def test_a_redis_that_cannot_be_reached_is_said_on_screen_at_once_and_is_no_stale_service(
    text_of: Callable[[Any], str],
) -> None:
    clock = FakeClock()
    fleet = FleetModel(clock, stale_after=5.0)
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    source = RedisSource(fleet, url, control=False, interval=0.1, timeout=1.0)
    fleet.store.sources.attach(source)
    app = listen_app(fleet, "127.0.0.1", 4317, None, redis=f"Redis read-only: {url}")
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            source.start()
            line = f"cannot reach Redis at {url}: ConnectionError: "
            await settle(pilot, lambda: line in text_of(app))
            assert f"listen · Redis read-only: {url} · gRPC" in text_of(app)  # the header
            clock.advance(60)  # far past stale_after, while it keeps failing
            errors = source.errors
            await settle(pilot, lambda: source.errors >= errors + 2)
            screen = text_of(app)
            assert line in screen  # still said, for as long as it lasts
            assert "stale" not in screen
            assert "stale" not in fleet.store.counters()
            assert sum(entry.startswith("unavailable:") for entry in events(app)) == 1
    finally:
        await source.close()
