"""The Mailbox panel and the rows of agents heard of only in Redis, as an operator
reads them: numbers with their labels, every cut marked with ``…``, counts in words,
every key said, a dead letter's whole error a key away, unknown counts shown as
unknown, and a queued turn's arguments as they were given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redis_console import MakeConsole, settle

from pygents import Turn, tool
from pygents.redis import (
    DeadLetterRow,
    Mailboxes,
    MailboxStats,
    MailboxSurvey,
    PendingTurn,
    RedisServer,
    Survey,
    WorkerRow,
)
from pygents.testing import isolated_registries
from pygents_tui.ui.screens import DetailScreen
from pygents_tui.ui.widgets import AgentsTable
from pygents_tui.ui.widgets.mailbox import COLUMNS, MailboxPanel

SIZE = (130, 40)
LONG_WORKER = "a-very-long-worker-name-on-a-very-long-host-name-4242-abc123"
LONG_ERROR = "RuntimeError: " + "the upstream said no " * 9 + "(the end)"
UUID = "8c1d2e3f-0000-4000-8000-000000000001"

SURVEY = Survey(
    1_767_225_600.0,
    (
        MailboxSurvey(
            MailboxStats("planner", 12, 8, 2, 1),
            False,
            (WorkerRow(LONG_WORKER, None, None, 9.5, False, False),),
            (PendingTurn("1767225590000-0", LONG_WORKER, UUID, "fetch", 3.2, 1),),
            (),
            (
                DeadLetterRow("1767225000000-0", UUID, "fetch", LONG_ERROR, "raised", 60.0, 1),
                DeadLetterRow("1767220000000-0", UUID, "plan", "ValueError: no", "raised", 6.0, 3),
            ),
            0,
        ),
    ),
)

with isolated_registries():

    @tool()
    async def scale(n: int, by: int = 1) -> int:
        """Stands for a worker's tool."""
        return n * by


def panel_rows(panel: MailboxPanel) -> list[list[str]]:
    return [[str(cell) for cell in panel.get_row_at(i)] for i in range(panel.row_count)]


async def test_the_mailbox_panel_labels_its_numbers_marks_every_cut_and_says_every_key(
    console: MakeConsole,
) -> None:
    shown = console(control=True)
    app = shown.app
    async with app.run_test(size=SIZE) as pilot:
        shown.source.show(SURVEY)
        await pilot.press("8")
        panel = app.screen.query_one(MailboxPanel)
        await settle(pilot, lambda: panel.row_count > 0)
        found = panel_rows(panel)
        for row in found:
            for cell, (_key, _label, width) in zip(row, COLUMNS, strict=True):
                assert len(cell) <= width
        mailbox, keys, worker, held, dead, other = found
        assert mailbox[2] == "4 waiting + 8 delivered = 12 unfinished"  # adds up, labelled
        assert mailbox[4] == "serving · 2 dead"
        assert keys[2] == "x cancel turn · r retry · d drop · D drain"
        assert "…" in worker[1]  # a long name is cut, and says so
        assert worker[1].startswith("a-very")
        assert worker[1].endswith("abc123")
        assert held[0] == "delivered"  # no telemetry says it started: Redis cannot tell
        assert held[2].startswith("on a-very")
        assert held[2].endswith("0000001")
        assert "…" in held[2]
        assert dead[2].startswith("RuntimeError: the upstream")
        assert dead[2].endswith("…")
        assert (held[4], dead[4], other[4]) == ("1 delivery", "1 delivery", "3 deliveries")

        panel.focus()
        while (panel.selected or "") != "d:1767225000000-0":
            await pilot.press("down")
        await pilot.press("enter")  # the dead letter whole
        await settle(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert isinstance(app.screen, DetailScreen)
        assert LONG_ERROR in app.screen.body().plain
        await pilot.press("escape")
        await settle(pilot, lambda: not isinstance(app.screen, DetailScreen))
        await shown.source.close()


async def test_an_agent_heard_of_only_in_redis_shows_its_counts_unknown_not_zero(
    console: MakeConsole, text_of: Callable[[Any], str]
) -> None:
    shown = console(control=False)
    app = shown.app
    async with app.run_test(size=SIZE) as pilot:
        shown.source.show(SURVEY)
        table = app.screen.query_one(AgentsTable)
        await settle(pilot, lambda: table.row_count == 1)
        keys = [key for key, _label, _width in AgentsTable.COLUMNS]
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[keys.index("counts")] == "?/?/?"  # not 0/0/0: no turn of it is reported
        assert row[keys.index("values")] == "?"
        assert "0 turn(s) running (+8 delivered from Redis mailboxes)" in text_of(app)
        await shown.source.close()


async def test_a_queued_turns_arguments_read_as_they_were_given(
    console: MakeConsole, redis_server: RedisServer
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        await mailboxes.put("maths", Turn(scale, args=[8]), reply=False)
        await mailboxes.put("maths", Turn(scale, args=[8], kwargs={"by": 2}), reply=False)
        await mailboxes.put("maths", Turn(scale, kwargs={"n": "é"}), reply=False)
    shown = console(control=False)
    assert await shown.source.refresh()
    (row,) = shown.fleet.store.agent_rows()
    arguments = [found[2] for found in shown.fleet.store.queued_turns(row.key)]
    # (one keyword each: Redis's Lua does not keep the order of an object's keys)
    assert arguments == ["8", "8, by=2", 'n="é"']  # not [[8]], [[8],{"by":2}]
    await shown.source.close()
