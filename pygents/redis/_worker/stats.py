"""What the workers of a process report: their counters, and the latest statistics of
the mailboxes they serve.

A dashboard's refresh tick, or a metrics reader's collection, is synchronous and runs
many times a second: it must not wait on Redis. So each worker reads its mailboxes'
statistics on a timer of its own (``Worker(stats_interval=...)``) and leaves the
latest here, where [`served_stats`][pygents.redis.served_stats] hands them over
without any I/O or copying. The in-process dashboard and ``pygents_otel``'s mailbox
gauges read them only if the program imported ``pygents.redis``; nothing here runs
otherwise. Standard library only.

(Named for what it publishes, statistics, so that it is not mistaken for `_driver`,
which runs the turns.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from pygents._errors import brief
from pygents.redis._mailbox_types import MailboxStats

__all__ = ["SERVED", "ServedStats", "WorkerCounters", "served_stats", "setting"]


@dataclass
class WorkerCounters:
    """What a worker did so far (for tests, logs and dashboards)."""

    turns: int = 0  # outcomes handed to the writer
    claimed: int = 0  # turns taken over from dead workers
    dead_lettered: int = 0
    unreplicated: int = 0  # outcome batches fewer replicas confirmed than asked for
    connection_failures: int = 0
    last_backoff: float = 0.0  # seconds slept after the last connection failure


def setting(name: str, value: object, minimum: float, kind: type = float) -> Any:
    """A ``Worker(name=value)`` setting, refused unless it is a ``kind`` ≥ ``minimum``."""
    allowed = (int, float) if kind is float else (int,)
    if isinstance(value, bool) or not isinstance(value, allowed):
        raise TypeError(f"Worker({name}=...) takes a {kind.__name__}, got {brief(value)}")
    if value < minimum:
        raise ValueError(f"Worker({name}=...) must be at least {minimum}, got {brief(value)}")
    return value


class ServedStats:
    """The latest `MailboxStats` of each agent served in this process.

    Several workers of one process may serve the same agent (each reads the same
    stream): the most recent report wins, and an agent leaves only with the last of
    its workers.
    """

    def __init__(self) -> None:
        self._by_worker: dict[str, dict[str, MailboxStats]] = {}  # agent → worker → stats
        self._latest: dict[str, MailboxStats] = {}
        self.view: Mapping[str, MailboxStats] = MappingProxyType(self._latest)

    def publish(self, worker: str, stats: MailboxStats) -> None:
        reports = self._by_worker.setdefault(stats.agent, {})
        reports.pop(worker, None)  # the newest report last
        reports[worker] = stats
        self._latest[stats.agent] = stats

    def withdraw(self, worker: str) -> None:
        """``worker`` stopped: forget its reports, keeping other workers' latest."""
        for agent in list(self._by_worker):
            reports = self._by_worker[agent]
            if reports.pop(worker, None) is None:
                continue
            if reports:
                self._latest[agent] = next(reversed(reports.values()))
            else:
                del self._by_worker[agent]
                del self._latest[agent]


SERVED: Final = ServedStats()


def served_stats() -> Mapping[str, MailboxStats]:
    """The latest statistics of every mailbox that a running
    [`Worker`][pygents.redis.Worker] of this process serves, by agent name.

    Each worker refreshes them every ``stats_interval`` seconds (one second by
    default); they count the whole mailbox, across every process and machine
    (``workers`` is the number of live workers anywhere). Reading them costs no
    I/O: the mapping is a read-only live view, for a dashboard's refresh tick or a
    metrics callback. An agent leaves it when the last worker serving it stops.
    """
    return SERVED.view
