"""The agents table's Mailbox column costs nothing to a program without mailboxes.

The column and its numbers come from ``pygents.redis`` workers running in the same
process (tests/redis/test_watching.py shows them with a real Redis); here, with no
``pygents.redis`` imported, the table keeps its 80-column layout and the dashboard
never imports the Redis client.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pygents import Agent, tool
from pygents_tui import Dashboard
from pygents_tui.feeders.process._mailboxes import served_stats
from pygents_tui.ui.widgets import AgentsTable


async def test_without_pygents_redis_the_agents_table_has_no_mailbox_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "pygents.redis", raising=False)

    @tool()
    async def idle() -> None:
        """Does nothing."""

    Agent("local", "Runs here", [idle])
    app = Dashboard()
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        app.refresh_view()
        await pilot.pause()
        table = app.screen.query_one(AgentsTable)
        keys = [column.key.value for column in table.columns.values()]
        assert keys == [key for key, _label, _width in AgentsTable.COLUMNS]
        assert table.row_count == 1
    assert served_stats() == {}


def test_the_dashboard_does_not_import_pygents_redis_or_the_redis_client() -> None:
    code = (
        "import sys, pygents_tui.ui.app, pygents_tui.ui.widgets\n"
        "from pygents_tui.feeders.process._mailboxes import served_stats\n"
        "assert served_stats() == {}\n"
        "print(sorted(m for m in sys.modules if m == 'redis' or m.startswith(('redis.', "
        "'pygents.redis'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
