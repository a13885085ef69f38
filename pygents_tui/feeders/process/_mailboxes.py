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

__all__ = ["served_stats"]

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
