"""Whether there is a terminal to draw on, asked before the dashboard takes it over.

Textual draws on standard error and the dashboard gives its program's output back on
standard output, so both must be a terminal. Redirected to a file or a pipe, the app
would draw its screen into the file and wait for a ``q`` nobody can see to press.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["refuse_without_terminal", "terminal_problem"]

_STREAMS = (("standard output", "> file or | command"), ("standard error", "2> file"))


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # no isatty(), or a closed stream
        return False


def terminal_problem() -> str | None:
    """What stops the dashboard from drawing, with its fix; ``None`` if nothing does.

    A driver chosen in ``TEXTUAL_DRIVER`` (``textual serve`` picks its web driver so)
    draws elsewhere than on the terminal, so it is left to draw."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return None
    for (name, redirect), stream in zip(_STREAMS, (sys.stdout, sys.stderr), strict=True):
        if not _is_terminal(stream):
            return (
                f"{name} is not a terminal, and the dashboard draws on one; "
                f"run pygents-tui in a terminal without redirecting it ({redirect})"
            )
    return None


def refuse_without_terminal() -> bool:
    """Say in one line, on standard error, what stops the dashboard from drawing; True
    if something does (the caller exits with status 2, having run nothing)."""
    problem = terminal_problem()
    if problem is not None:
        print(f"pygents-tui: error: {problem}", file=sys.stderr)
    return problem is not None
