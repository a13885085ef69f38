"""Mailbox statistics for the agents table, when the program serves agents from Redis.

Agents served by ``pygents.redis`` workers keep their queue in a Redis stream, not in
the agent. Their workers leave the latest statistics of each mailbox in
``pygents.redis.served_stats()``, which the agents table reads on its refresh tick.
The dashboard never imports ``pygents.redis`` itself (nor the Redis client): a
program with workers has imported it already, and for any other program this costs
one dictionary lookup per refresh.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

__all__ = ["MAILBOX_COLUMN", "mailbox_cell", "served_stats"]

MAILBOX_COLUMN: Final = ("mailbox", "Mailbox", 10)
_NONE: Final[Mapping[str, MailboxStats]] = {}


def served_stats() -> Mapping[str, MailboxStats]:
    """The statistics of the mailboxes served in this process, by agent name (none
    when the program never imported ``pygents.redis``)."""
    module = sys.modules.get("pygents.redis")
    read = getattr(module, "served_stats", None) if module is not None else None
    if read is None:  # not imported, or still importing
        return _NONE
    stats: Mapping[str, MailboxStats] = read()
    return stats


def _count(n: int) -> str:
    return str(n) if n < 10_000 else f"{n // 1000}k"


def mailbox_cell(stats: MailboxStats | None) -> str:
    """``depth · workers``: the turns not finished in the agent's mailbox (waiting or
    running, in any process) and the live workers serving it; empty for an agent
    that no worker here serves."""
    if stats is None:
        return ""
    return f"{_count(stats.depth)} · {stats.workers}w"
