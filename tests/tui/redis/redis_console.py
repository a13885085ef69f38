"""Helpers for the tests of the dashboard's Redis source (``from redis_console import ...``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from textual.pilot import Pilot

from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.redis.source import RedisSource
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens.confirm import ConfirmScreen
from pygents_tui.ui.widgets.mailbox import MailboxPanel


@dataclass
class Console:
    """``pygents-tui listen --redis URL [--control]``, as `serve` builds it."""

    app: Dashboard
    fleet: FleetModel
    source: RedisSource


MakeConsole = Callable[..., Console]


async def settle(
    pilot: Pilot[object], check: Callable[[], Awaitable[object] | object], within: float = 20.0
) -> None:
    """Let the app run (refreshing its view) until ``check()`` holds; fails after
    ``within`` seconds instead of hanging. ``check`` may be a coroutine function."""
    app = pilot.app
    async with asyncio.timeout(within):
        while True:
            refresh = getattr(app, "refresh_view", None)
            if refresh is not None:
                refresh()
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                await pilot.pause()
                return
            await pilot.pause(0.02)


def toasts(app: Dashboard) -> list[str]:
    """The toasts' messages, oldest first."""
    return [toast.message for toast in app._notifications]


def events(app: Dashboard) -> list[str]:
    """The event log's lines as ``kind: text``."""
    return [f"{entry.kind}: {entry.text}" for entry in app.view.event_log()[1]]


async def select_row(pilot: Pilot[object], panel: MailboxPanel, kind: str) -> str:
    """Move the Mailbox panel's cursor down to the first row of ``kind`` (``p``: a
    running turn, ``d``: a dead letter, ``w``: a worker); its id."""
    panel.focus()
    for _ in range(panel.row_count + 1):
        found, _, target = (panel.selected or "").partition(":")
        if found == kind:
            return target
        await pilot.press("down")
    raise AssertionError(f"no {kind!r} row in the Mailbox panel")


async def confirm(pilot: Pilot[object], app: Dashboard, *keys: str) -> str:
    """Press ``keys``, check a confirmation is asked, answer yes; the question."""
    await pilot.press(*keys)
    await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    assert isinstance(app.screen, ConfirmScreen)
    question = app.screen.question
    await pilot.press("y")
    await settle(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    return question
