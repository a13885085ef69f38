"""Agents across processes and machines, durably, on Redis Streams.

An agent's queue normally lives in one process's memory. With ``pygents.redis`` an
agent name also has a *mailbox*: a Redis stream that any process can put turns on,
read by a consumer group of *workers* — one process or many, on one machine or
many. Nothing is lost when a worker dies: a turn is acknowledged only once its
outcome is recorded, and another worker takes it over after a visibility timeout.

* [`Mailboxes`][pygents.redis.Mailboxes] — a connection to the mailboxes on one
  Redis, or on a Redis Cluster (a ``redis+cluster://`` URL): ``put`` turns, follow
  their results through a [`TurnHandle`][pygents.redis.TurnHandle], read
  [`MailboxStats`][pygents.redis.MailboxStats] and dead letters, and route
  ``agent.send()`` to agents served elsewhere. ``survey()`` reads every mailbox in
  one round trip (a [`Survey`][pygents.redis.Survey]); ``pause``, ``resume``,
  ``cancel``, ``retry_dead_letter``, ``drop_dead_letter`` and ``drain_worker`` act on
  the agents served, through Redis.
* [`Worker`][pygents.redis.Worker] — serves agents from their mailboxes.
* [`RedisServer`][pygents.redis.RedisServer] — a throwaway local ``redis-server``
  for tests and examples.
* [`current_delivery`][pygents.redis.current_delivery] — inside a tool, the running
  delivery (its turn uuid is the idempotency key; ``attempt`` counts deliveries).
* [`served_stats`][pygents.redis.served_stats] — the latest statistics of the
  mailboxes this process's workers serve, without I/O (what dashboards read).

Needs the ``redis`` extra (``pip install 'pygents[redis]'``). See the guide
"Scaling out" for the guarantee and the failure modes.
"""

from __future__ import annotations

from pygents._extras import missing_extra
from pygents._public import publish as _publish

try:
    from pygents.redis._mailbox_types import (
        ConsumerStats,
        DeadLetter,
        Delivery,
        MailboxClosedError,
        MailboxError,
        MailboxFullError,
        MailboxNotFoundError,
        MailboxStats,
        MailboxUnavailableError,
        NotReplicatedError,
        Outcome,
        RedisFullError,
        RemoteTurnError,
        RepliesLostError,
        TurnLostError,
        TurnRerunError,
        current_delivery,
    )
    from pygents.redis._producer.handle import TurnHandle
    from pygents.redis._producer.mailbox import Mailboxes
    from pygents.redis._producer.survey import (
        DeadLetterRow,
        MailboxSurvey,
        PendingTurn,
        QueuedTurn,
        Survey,
        WorkerRow,
    )
    from pygents.redis._server.redis_server import RedisServer
    from pygents.redis._worker.stats import WorkerCounters, served_stats
    from pygents.redis._worker.worker import Worker
except ModuleNotFoundError as error:
    # Without the 'redis' extra: one line naming it, not "No module named 'redis'".
    replacement = missing_extra(error, "pygents.redis", "redis", ("redis",))
    if replacement is None:
        raise
    raise replacement from None

__all__ = [
    "ConsumerStats",
    "DeadLetter",
    "DeadLetterRow",
    "Delivery",
    "MailboxClosedError",
    "MailboxError",
    "MailboxFullError",
    "MailboxNotFoundError",
    "MailboxStats",
    "MailboxSurvey",
    "MailboxUnavailableError",
    "Mailboxes",
    "NotReplicatedError",
    "Outcome",
    "PendingTurn",
    "QueuedTurn",
    "RedisFullError",
    "RedisServer",
    "RemoteTurnError",
    "RepliesLostError",
    "Survey",
    "TurnHandle",
    "TurnLostError",
    "TurnRerunError",
    "Worker",
    "WorkerCounters",
    "WorkerRow",
    "current_delivery",
    "served_stats",
]

# Tracebacks and reprs name ``pygents.redis.Worker``, not the private module it lives in.
_publish(__name__, __all__, globals())
