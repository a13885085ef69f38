"""An SVG snapshot of the Mailbox panel (``pygents-tui listen --redis URL --control``,
key ``8``), on a fixed survey: the mailbox, two workers (one draining), a running
turn and two dead letters, one whose error holds control characters.

Regenerate with ``uv run pytest tests/tui/redis/test_redis_console_snapshot.py
--snapshot-update``, then look at the SVG before committing.
"""

from __future__ import annotations

from typing import Any

from fake_clock import FakeClock
from textual.pilot import Pilot

from pygents.redis import (
    DeadLetterRow,
    MailboxStats,
    MailboxSurvey,
    PendingTurn,
    QueuedTurn,
    Survey,
    WorkerRow,
)
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.redis.source import RedisSource

SIZE = (110, 30)
UUID = "8c1d2e3f-0000-4000-8000-00000000000{}"

SURVEY = Survey(
    1_767_225_600.0,
    (
        MailboxSurvey(
            MailboxStats("planner", 5, 1, 2, 2),
            False,
            (
                WorkerRow("box-4242-abc123", "box", 4242, 9.5, False, False),
                WorkerRow("worker-b", None, None, 8.0, True, False),
            ),
            (PendingTurn("1767225590000-0", "box-4242-abc123", UUID.format(1), "fetch", 3.2, 1),),
            tuple(
                QueuedTurn(n, f"176722559{n}000-0", UUID.format(n + 1), "plan", 30.0, f'["q{n}"]')
                for n in (1, 2, 3, 4)
            ),
            (
                DeadLetterRow(
                    "1767225000000-0",
                    UUID.format(7),
                    "fetch",
                    "TimeoutError: no answer \x1b[2J\x07",
                    "max_deliveries",
                    600.0,
                    6,
                ),
                DeadLetterRow(
                    "1767220000000-0",
                    UUID.format(8),
                    "plan",
                    "ValueError: bad plan",
                    "raised",
                    5600.0,
                    1,
                ),
            ),
            0,
        ),
    ),
)


def test_the_mailbox_panel(snap_compare: Any) -> None:
    """Workers, a running turn and dead letters of the selected agent's mailbox."""
    fleet = FleetModel(clock=FakeClock(), stale_after=3600.0)
    source = RedisSource(fleet, "redis://127.0.0.1:1/0", control=True)  # never started
    fleet.store.sources.attach(source)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)

    async def run_before(pilot: Pilot[Any]) -> None:
        app.refresh_timer.pause()
        source.show(SURVEY)
        app.refresh_view()
        await pilot.pause()
        await pilot.press("8")
        app.refresh_view()
        await pilot.pause()
        assert app.view_error is None

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)
