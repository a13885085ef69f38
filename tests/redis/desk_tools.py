"""The producer's view of the tools ``control_worker.py`` serves (same names, same
arguments): what the control tests put turns with. The ``desk_tools`` fixture
(tests/redis/conftest.py) declares them per test, not at import: a tool declared at
import would stay registered for every later test of the run (the plugin forgets only
what a test declares), and a test declaring its own ``work`` would be refused."""

from __future__ import annotations

from dataclasses import dataclass

from pygents import tool
from pygents._tool import DecoratedTool


@dataclass(frozen=True, slots=True)
class DeskTools:
    work: DecoratedTool[[int], int]
    hold: DecoratedTool[[], str]


def declare() -> DeskTools:
    @tool()
    async def work(n: int) -> int:
        """Stands for the workers' ``work``."""
        return n

    @tool()
    async def hold() -> str:
        """Stands for the workers' ``hold``."""
        return ""

    return DeskTools(work, hold)
