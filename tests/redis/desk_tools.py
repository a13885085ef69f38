"""The producer's view of the tools ``control_worker.py`` serves (same names, same
arguments): what the control tests put turns with. Declared once, as tool names are
unique in a process."""

from __future__ import annotations

from pygents import tool


@tool()
async def work(n: int) -> int:
    """Stands for the workers' ``work``."""
    return n


@tool()
async def hold() -> str:
    """Stands for the workers' ``hold``."""
    return ""
