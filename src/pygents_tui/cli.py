"""The ``pygents-tui`` command (the dashboard lands with its own issue)."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pygents-tui``."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-V"):
        print("pygents-tui 0.1.0")
        return 0
    print("pygents-tui: the dashboard is not built yet; `pygents-tui demo` arrives with it.")
    return 0
