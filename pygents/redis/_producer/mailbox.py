"""Mailboxes: the producer's side of ``pygents.redis`` — put turns, read statistics.

Each agent name has a mailbox, a Redis stream read by a consumer group of workers.
An entry holds one JSON *envelope*, ``{"reply": <reply stream or null>, "turn":
Turn.to_dict()}``, in the field ``turn``; with a reply stream, it also carries the
producer's ``"reply_maxlen"`` and ``"reply_ttl_ms"`` for it (an envelope without them
gets the worker's own). Finished turns are deleted from the stream, so its length is
the number of turns not finished yet — the number ``maxlen`` bounds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import OutOfMemoryError

from pygents._errors import UnregisteredToolError, brief
from pygents._routing import ROUTES
from pygents._turn import Turn
from pygents.redis._cluster import connection_lost, queue_script
from pygents.redis._connecting import DEFAULT_URL, connect
from pygents.redis._durability import Replication
from pygents.redis._lua.mailbox import PUT, Keys
from pygents.redis._mailbox_types import (
    COMPACT,
    MailboxFullError,
    MailboxUnavailableError,
    NotReplicatedError,
    RedisFullError,
    bounded,
    unique_name,
)
from pygents.redis._producer.control import Control
from pygents.redis._producer.handle import TurnHandle
from pygents.redis._producer.reading import Reading
from pygents.redis._producer.replies import Backoff, Replies
from pygents.redis._producer.reply_streams import ReplyStreams

__all__ = ["Mailboxes"]


def _positive(name: str, value: object, kind: type = int, *, zero: bool = False) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
        raise TypeError(f"Mailboxes({name}=...) takes a {kind.__name__}, got {brief(value)}")
    if not (value >= 0 if zero else value > 0):
        sign = "zero or more" if zero else "positive"
        raise ValueError(f"Mailboxes({name}=...) must be {sign}, got {brief(value)}")
    return value


class Mailboxes(Control, Reading):
    """Agents' mailboxes on one Redis: put turns for agents served by workers.

    Args:
        url: the Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS; default
            ``redis://localhost:6379/0``). The only thing that changes between one
            machine and many. For a Redis Cluster, ``redis+cluster://host:port`` (or
            ``rediss+cluster://``) naming any one of its nodes: the client (redis-py's
            ``RedisCluster``) finds the others, and follows the slots when they move.
        client: instead of ``url``, a ready-made ``redis.asyncio.Redis`` (or
            ``RedisCluster``) built with ``decode_responses=True`` — e.g.
            ``Sentinel(...).master_for(name, decode_responses=True)``, which follows the
            primary across failovers. The `Mailboxes` takes it over and closes it in
            [`aclose`][pygents.redis.Mailboxes.aclose].
        prefix: the namespace of every key pygents creates.
        maxlen: how many unfinished turns a mailbox may hold; ``put`` raises
            [`MailboxFullError`][pygents.redis.MailboxFullError] beyond it (nothing is
            ever trimmed).
        reply_maxlen: the bound of this client's reply stream (approximate). Travels
            with each turn: workers apply it when they write this client's results.
        reply_ttl: seconds after the last write when the reply stream expires (travels
            with each turn too).
        reply_check_interval: seconds between two checks, while handles wait, that
            their turns still exist in Redis (a turn gone without an outcome fails its
            handle instead of leaving it waiting forever).
        client_id: names this client's reply stream (default: host, pid and a
            random suffix).
        replicas: how many replicas must have a turn before ``put`` returns, and an
            outcome before a worker moves on (``WAIT``); 0, the default, waits for
            none (Redis replicates asynchronously: a failover can lose the last
            writes). See "Durability and failover" in the guide.
        replica_timeout: seconds to wait for those replicas; fewer in time makes
            ``put`` raise [`NotReplicatedError`][pygents.redis.NotReplicatedError].
        redis_options: passed to ``redis.asyncio.Redis.from_url`` (or
            ``RedisCluster.from_url``).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | RedisCluster | None = None,
        prefix: str = "pygents",
        maxlen: int = 10_000,
        reply_maxlen: int = 10_000,
        reply_ttl: float = 3600.0,
        reply_check_interval: float = 5.0,
        client_id: str | None = None,
        replicas: int = 0,
        replica_timeout: float = 1.0,
        **redis_options: Any,
    ) -> None:
        if not isinstance(prefix, str) or not prefix:
            raise TypeError(f"Mailboxes(prefix=...) takes a non-empty string, got {brief(prefix)}")
        self.replication = Replication(
            _positive("replicas", replicas, zero=True),
            _positive("replica_timeout", replica_timeout, float),
        )
        self.prefix = prefix
        self.maxlen: int = _positive("maxlen", maxlen)
        self.reply_maxlen: int = _positive("reply_maxlen", reply_maxlen)
        self.reply_ttl: float = _positive("reply_ttl", reply_ttl, float)
        check_interval = _positive("reply_check_interval", reply_check_interval, float)
        self.client: Redis
        self.client, self.where = connect(url, client, redis_options)
        self.url = DEFAULT_URL if url is None and client is None else url
        self.client_id = client_id or unique_name()
        self.clustered = isinstance(self.client, RedisCluster)
        if self.clustered and ("{" in prefix or "}" in prefix):
            raise ValueError(
                f"Mailboxes(prefix={prefix!r}) on a Redis Cluster: a brace in the prefix "
                "would decide the hash slot of every key; choose a prefix without braces"
            )
        self._put_script = self.client.register_script(PUT)
        self._keys: dict[str, Keys] = {}
        # Agents this client put turns for, on a cluster: the agents set is another
        # slot than any mailbox, so it is written beside the first put, not in it.
        self._listed: set[str] = set()
        self._reply_limits = {
            "reply_maxlen": self.reply_maxlen,
            "reply_ttl_ms": max(1, round(self.reply_ttl * 1000)),
        }

        def replies_on(key: str) -> Replies:
            return Replies(
                self.client,
                key,
                Backoff(0.05, 5.0),
                self.keys,
                maxlen=self.reply_maxlen,
                check_interval=check_interval,
            )

        # One reply stream on a single server; one per mailbox on a cluster (see
        # `Keys.reply_key`), each with its own reader.
        def reply_key(agent: str) -> str:
            return self.keys(agent).reply_key(prefix, self.client_id)

        self.replies: Replies | ReplyStreams = (
            ReplyStreams(reply_key, replies_on)
            if self.clustered
            else replies_on(f"{prefix}:replies:{self.client_id}")
        )

    def __repr__(self) -> str:
        return f"<Mailboxes {self.where} prefix={self.prefix!r}>"

    async def __aenter__(self) -> Mailboxes:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop reading replies, drop routes to this Redis, and close the connections.

        Handles still waiting then fail with
        [`MailboxClosedError`][pygents.redis.MailboxClosedError]: their outcome can no
        longer reach this process. Returns in bounded time.
        """
        self.unroute()
        await self.replies.close()
        await self.client.aclose()

    def keys(self, agent: str) -> Keys:
        """The Redis keys of ``agent``'s mailbox."""
        found = self._keys.get(agent)
        if found is None:
            if not isinstance(agent, str) or not agent:
                raise TypeError(f"agent names are non-empty strings, got {brief(agent)}")
            found = self._keys[agent] = Keys.of(self.prefix, agent, tagged=self.clustered)
        return found

    def unavailable(self, doing: str, exc: BaseException) -> MailboxUnavailableError:
        return MailboxUnavailableError(
            f"cannot reach Redis at {self.where} to {doing} ({type(exc).__name__}: "
            f"{bounded(str(exc))}); check that Redis is running and the URL is right, "
            "then retry"
        )

    # -- putting turns ----------------------------------------------------------------

    async def put(self, agent: str, turn: Turn, *, reply: bool = True) -> TurnHandle:
        """Put ``turn`` on ``agent``'s mailbox; the handle follows its result.

        Raises [`MailboxFullError`][pygents.redis.MailboxFullError] when the mailbox
        is full, ``UnregisteredToolError`` when the agent's workers lack the turn's
        tool, and [`MailboxUnavailableError`][pygents.redis.MailboxUnavailableError]
        when Redis cannot be reached. With ``Mailboxes(replicas=n)``, returns once
        ``n`` replicas have the turn, or raises
        [`NotReplicatedError`][pygents.redis.NotReplicatedError] (the turn is queued
        all the same).
        """
        (handle,) = await self.put_many(agent, (turn,), reply=reply)
        return handle

    async def put_many(
        self, agent: str, turns: Iterable[Turn], *, reply: bool = True
    ) -> list[TurnHandle]:
        """Put several turns on one mailbox at once: all of them, or none. (With
        ``replicas``, `NotReplicatedError` means all of them are in the mailbox.)"""
        keys = self.keys(agent)
        batch = list(turns)
        for turn in batch:
            if not isinstance(turn, Turn):
                raise TypeError(f"Mailboxes.put() takes a Turn, got {type(turn).__name__}")
        if not batch:
            return []
        # With a reply stream, the limits this client wants for it: the workers apply
        # them when they write its results (see ``_serving.ReplyTo``).
        head: dict[str, Any] = (
            {"reply": self.replies.key_for(agent), **self._reply_limits}
            if reply
            else {"reply": None}
        )
        # The head is encoded once per call, each turn on its own: the same text as
        # encoding each whole envelope, for less work per turn.
        start = COMPACT(head)[:-1] + ',"turn":'
        payloads = [f"{start}{COMPACT(turn.to_dict())}}}" for turn in batch]
        tools = sorted({turn.tool.name for turn in batch})
        handles = [TurnHandle(self.replies if reply else None, agent, t.uuid) for t in batch]
        for handle in handles:
            if reply:
                self.replies.expect(handle)
        args: list[Any] = [self.maxlen, agent, len(tools), *tools, *payloads]
        try:
            if not self.clustered:
                agents = f"{self.prefix}:agents"
                result, replicated = await self.replication.run(
                    self.client, self._put_script, [keys.mailbox, keys.tools, agents], args
                )
            else:
                result, replicated = await self._put_clustered(agent, keys, args)
        except BaseException as exc:
            for handle in handles:
                self.replies.forget(handle)
            if connection_lost(exc):  # the put went with the connection (see there)
                raise self.unavailable(f"put a turn for agent {bounded(agent)!r}", exc) from exc
            if isinstance(exc, OutOfMemoryError):
                raise RedisFullError(
                    f"Redis at {self.where} is full (maxmemory reached, nothing evicted): "
                    f"{len(batch)} turns for agent {bounded(agent)!r} not put — wait and retry "
                    "while workers drain the mailboxes, or give Redis more memory"
                ) from exc
            raise
        if not isinstance(result, str):  # {"full", depth} or {"tool", name}
            for handle in handles:
                self.replies.forget(handle)
            raise self._refused(agent, len(batch), result)
        for handle, message_id in zip(handles, result.split(" "), strict=True):
            handle.message_id = message_id
        if self.replication.short_of(replicated):
            raise self._not_replicated(agent, handles, replicated)
        return handles

    def _not_replicated(
        self, agent: str, handles: list[TurnHandle], replicated: Any
    ) -> NotReplicatedError:
        confirmed, wanted = self.replication.confirmed(replicated), self.replication.replicas
        return NotReplicatedError(
            f"{len(handles)} turns for agent {bounded(agent)!r} are in the mailbox, but "
            f"only {confirmed} of {wanted} replicas confirmed them within "
            f"{self.replication.timeout:g} s (Mailboxes(replicas=..., replica_timeout=...)): "
            "they will run unless a failover loses them first; putting them again may run "
            "them twice — their handles are on this error's `handles`",
            handles,
            confirmed,
        )

    async def _put_clustered(self, agent: str, keys: Keys, args: list[Any]) -> tuple[Any, Any]:
        """``PUT`` on a cluster; the first put of an agent also adds it to the agents
        set, in the same pipeline (another shard, at the same time)."""
        if agent in self._listed:
            return await self.replication.run(
                self.client, self._put_script, [keys.mailbox, keys.tools], args
            )
        if self.replication:  # both writes wait for their nodes' replicas
            agents = f"{self.prefix}:agents"
            put = ("EVAL", PUT, 2, keys.mailbox, keys.tools, *args)
            (added, result), replicated = await self.replication.on_nodes(
                cast(RedisCluster, self.client),
                [(agents, ("SADD", agents, agent)), (keys.mailbox, put)],
            )
            if isinstance(result, Exception):
                raise result
            if not isinstance(added, Exception):  # else listed at the next put
                self._listed.add(agent)
            return result, replicated
        pipe = self.client.pipeline(transaction=False)
        pipe.sadd(f"{self.prefix}:agents", agent)
        await queue_script(pipe, self._put_script, [keys.mailbox, keys.tools], args)
        _, result = await pipe.execute()
        self._listed.add(agent)
        return result, None

    def _refused(self, agent: str, count: int, result: list[Any]) -> Exception:
        if result[0] == "full":
            return MailboxFullError(
                f"the mailbox of agent {bounded(agent)!r} holds {result[1]} unfinished turns "
                f"and takes at most {self.maxlen} (Mailboxes(maxlen=...)); {count} more do "
                "not fit — wait and retry, start more workers, or raise maxlen"
            )
        return UnregisteredToolError(
            f"the workers serving agent {bounded(agent)!r} have no tool "
            f"{bounded(result[1])!r}; register the tool in the worker process and give "
            "it to the agent (the tool set is announced when a worker starts)"
        )

    async def deliver(self, agent_name: str, turn: Turn) -> None:
        """``agent.send()`` for an agent served through this Redis (no reply)."""
        await self.put(agent_name, turn, reply=False)

    def route(self, *agents: str) -> None:
        """Make ``agent.send(name, ...)`` in this process put on these agents' mailboxes.

        With no names: every agent that is not registered in this process.
        """
        if not agents:
            ROUTES.fallback = self
        for agent in agents:
            self.keys(agent)  # checks the name
            ROUTES.add(agent, self)

    def unroute(self, *agents: str) -> None:
        """Undo [`route`][pygents.redis.Mailboxes.route] (with no names: every route
        to this object)."""
        if not agents:
            agents = tuple(name for name, r in ROUTES.by_name.items() if r is self)
            if ROUTES.fallback is self:
                ROUTES.fallback = None
        for agent in agents:
            ROUTES.discard(agent, self)

    # -- looking ----------------------------------------------------------------------
