"""Helpers for the tests of the dashboard's Redis source (``from redis_console import ...``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from textual.pilot import Pilot

from pygents_tui.app import Dashboard


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
