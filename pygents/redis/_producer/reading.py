"""Reading mailboxes: the agents listed, a mailbox's statistics, its dead letters, and
the survey of many (`pygents.redis._producer.survey` has its values and its parsing).

A mixin of `Mailboxes` (it uses the client and key naming of the `Mailboxes`), kept
apart from putting turns: what a dashboard or an operator reads, not the hot path.
``stats`` and ``survey`` give the same `MailboxStats` of a mailbox: a test holds them
to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from redis.exceptions import ResponseError

from pygents.redis._cluster import queue_time, time_ms
from pygents.redis._lua.mailbox import GROUP, Keys
from pygents.redis._mailbox_types import (
    ConsumerStats,
    DeadLetter,
    MailboxStats,
    MailboxUnavailableError,
    bounded,
)
from pygents.redis._producer.replies import CONNECTION_ERRORS
from pygents.redis._producer.survey import MAX_AGENTS, Survey, agent_names, read_one, surveyed

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["Reading", "dead_letter", "tool_names"]


class Reading:
    """``Mailboxes.agents``, ``stats``, ``dead_letters`` and ``survey``."""

    client: Redis
    prefix: str

    def keys(self, agent: str) -> Keys:
        raise NotImplementedError

    def unavailable(self, doing: str, exc: BaseException) -> MailboxUnavailableError:
        raise NotImplementedError

    async def agents(self) -> list[str]:
        """Every agent a turn was put for, or a worker served, on this Redis."""
        try:
            names = cast(set[str], await self.client.smembers(f"{self.prefix}:agents"))
        except CONNECTION_ERRORS as exc:
            raise self.unavailable("list the mailboxes", exc) from exc
        return sorted(names)

    async def stats(self, agent: str) -> MailboxStats:
        """Depth, pending turns, dead letters, live workers and consumers of a mailbox."""
        keys = self.keys(agent)
        pipe = self.client.pipeline(transaction=False)
        queue_time(pipe, keys.mailbox)
        pipe.xlen(keys.mailbox)
        pipe.xlen(keys.dead)
        pipe.zrange(keys.workers, 0, -1, withscores=True)
        pipe.xinfo_consumers(keys.mailbox, GROUP)
        try:
            now, depth, dead, workers, consumers = await pipe.execute(raise_on_error=False)
        except CONNECTION_ERRORS as exc:
            raise self.unavailable(f"read the statistics of agent {bounded(agent)!r}", exc) from exc
        for value in (now, depth, dead, workers):
            if isinstance(value, Exception):
                raise value
        if isinstance(consumers, ResponseError):
            consumers = []  # no worker has created the group yet
        elif isinstance(consumers, Exception):
            raise consumers
        now_ms = time_ms(now)
        live = {name for name, expiry in workers if expiry > now_ms}
        listed = tuple(
            ConsumerStats(c["name"], int(c["pending"]), int(c["idle"]) / 1000, c["name"] in live)
            for c in consumers
        )
        return MailboxStats(
            agent=agent,
            depth=depth,
            pending=sum(c.pending for c in listed),
            dead_letters=dead,
            workers=len(live),
            consumers=listed,
        )

    async def dead_letters(self, agent: str, count: int = 100) -> list[DeadLetter]:
        """The oldest ``count`` entries of ``agent``'s dead-letter stream."""
        try:
            entries = cast(
                list[tuple[str, dict[str, str]]],
                await self.client.xrange(self.keys(agent).dead, count=count),
            )
        except CONNECTION_ERRORS as exc:
            raise self.unavailable(f"read the dead letters of {bounded(agent)!r}", exc) from exc
        return [dead_letter(agent, entry_id, fields) for entry_id, fields in entries]

    async def survey(self, agents: Iterable[str] | None = None, *, rows: int = 50) -> Survey:
        """Read every mailbox of ``agents`` (default: all, up to 1,000) in one round
        trip: counts, pause, workers, pending, queued turns and dead letters.

        Each list holds ``rows`` entries at most. Never fails on what the keys hold:
        unreadable entries and keys are counted in ``malformed``. Without ``agents``,
        the names are read first (one more command).
        """
        if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= 10_000:
            raise ValueError(f"Mailboxes.survey(rows=...) takes 1..10000, got {rows!r}")
        truncated = False
        if agents is None:
            try:
                names = await agent_names(self.client, self.prefix)
            except CONNECTION_ERRORS as exc:
                raise self.unavailable("list the mailboxes", exc) from exc
            truncated = len(names) > MAX_AGENTS
            names = names[:MAX_AGENTS]
        else:
            names = list(dict.fromkeys(agents))
        keys = [self.keys(name) for name in names]  # checks the names
        try:
            replies = await surveyed(self.client, keys, rows)
        except CONNECTION_ERRORS as exc:
            raise self.unavailable("survey the mailboxes", exc) from exc
        read = [read_one(n, r, rows) for n, r in zip(names, replies, strict=True)]
        now = max((r[0] for r in read), default=0.0)
        return Survey(now, tuple(r[1] for r in read), truncated)


def dead_letter(agent: str, entry_id: str, fields: dict[str, str]) -> DeadLetter:
    return DeadLetter(
        id=entry_id,
        agent=agent,
        message_id=fields.get("message_id", ""),
        reason=fields.get("reason", ""),
        error=fields.get("error", ""),
        deliveries=int(fields.get("deliveries", "0") or 0),
        worker=fields.get("worker", ""),
        payload=fields.get("payload", ""),
    )


def tool_names(agents: Sequence[Any]) -> dict[str, frozenset[str]]:
    """Every tool name (subtools included) of each agent, by agent name."""
    return {a.name: frozenset(t.name for root in a.tools for t in root.walk()) for a in agents}
