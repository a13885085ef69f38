"""Counts in words: ``1 delivery``, ``2 deliveries``, for every line the dashboard
writes with a number in it (no ``1 deliveries``, no ``worker(s)``)."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``count`` and ``word``, or its ``plural`` (default: ``word`` + ``s``) unless
    ``count`` is one."""
    return f"{count} {word if count == 1 else plural or word + 's'}"
