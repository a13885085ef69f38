"""Agents across processes and machines, durably, on Redis Streams.

An agent's queue normally lives in one process's memory. With ``pygents.redis`` an
agent name also has a *mailbox*: a Redis stream that any process can put turns on,
read by a consumer group of *workers* — one process or many, on one machine or
many. Nothing is lost when a worker dies: a turn is acknowledged only once its
outcome is recorded, and another worker takes it over after a visibility timeout.

* :class:`Mailboxes` — a connection to the mailboxes on one Redis: ``put`` turns,
  follow their results through a :class:`TurnHandle`, read :class:`MailboxStats`
  and dead letters, and route ``agent.send()`` to agents served elsewhere.
* :class:`Worker` — serves agents from their mailboxes.
* :class:`RedisServer` — a throwaway local ``redis-server`` for tests and examples.
* :func:`current_delivery` — inside a tool, the running delivery (its turn uuid is
  the idempotency key; ``attempt`` counts deliveries).

Needs the ``redis`` extra: ``pip install 'pygents[redis]'``. See the guide
"Scaling out" for the guarantee and the failure modes.
"""

from __future__ import annotations

try:
    import redis.asyncio  # noqa: F401  (the client this module is built on)
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "pygents.redis needs the Redis client: install it with pip install 'pygents[redis]'"
    ) from None

from pygents._mailbox import Mailboxes
from pygents._mailbox_types import (
    ConsumerStats,
    DeadLetter,
    Delivery,
    MailboxError,
    MailboxFullError,
    MailboxStats,
    MailboxUnavailableError,
    Outcome,
    RemoteTurnError,
    RepliesLostError,
    current_delivery,
)
from pygents._redis_server import RedisServer
from pygents._replies import TurnHandle
from pygents._worker import Worker, WorkerCounters

__all__ = [
    "ConsumerStats",
    "DeadLetter",
    "Delivery",
    "MailboxError",
    "MailboxFullError",
    "MailboxStats",
    "MailboxUnavailableError",
    "Mailboxes",
    "Outcome",
    "RedisServer",
    "RemoteTurnError",
    "RepliesLostError",
    "TurnHandle",
    "Worker",
    "WorkerCounters",
    "current_delivery",
]
