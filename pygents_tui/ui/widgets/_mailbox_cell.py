"""The agents table's Mailbox column: a mailbox's depth and its workers, for agents
served from Redis (the in-process feeder reads the statistics; this shows them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

__all__ = ["MAILBOX_COLUMN", "mailbox_cell"]

MAILBOX_COLUMN: Final = ("mailbox", "Mailbox", 10)


def _count(n: int) -> str:
    return str(n) if n < 10_000 else f"{n // 1000}k"


def mailbox_cell(stats: MailboxStats | None) -> str:
    """``depth · workers``: the turns not finished in the agent's mailbox (waiting or
    running, in any process) and the live workers serving it; empty for an agent
    that no worker here serves."""
    if stats is None:
        return ""
    return f"{_count(stats.depth)} · {stats.workers}w"
