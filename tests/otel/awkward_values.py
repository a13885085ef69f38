"""Values that are awkward to record as content, shared by the telemetry tests.

Import it from a test module in this directory as ``from awkward_values import ...``.
"""

from __future__ import annotations

from typing import Any


class ReprRaises:
    """Neither ``repr()`` nor ``str()`` works on it."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    def __str__(self) -> str:
        raise RuntimeError("no str either")


def cycle() -> list[Any]:
    """A list that contains itself."""
    loop: list[Any] = [1]
    loop.append(loop)
    return loop
