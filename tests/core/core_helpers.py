"""Helpers several core test modules share (``from core_helpers import ...``).

A helper module, not a test module: pytest does not collect it. Tools made here are
registered like any other, and forgotten after each test by the autouse
``pygents_isolated`` fixture.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from pygents import DecoratedTool, Turn, tool


def make_echo() -> DecoratedTool[[str], Coroutine[Any, Any, str]]:
    """A fresh ``echo`` tool: ``echo(x)`` returns ``"echo:<x>"``."""

    @tool()
    async def echo(x: str) -> str:
        return f"echo:{x}"

    return echo


def noop_turn() -> Turn[None]:
    """A turn of a fresh tool ``noop`` that does nothing: for tests of the turn itself."""

    @tool
    async def noop() -> None:
        return None

    return Turn(noop)


async def spin(rounds: int = 100) -> None:
    """Let every ready task run as far as it can (yields control, never waits on time)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
