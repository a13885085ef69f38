"""The failover crash test's harness: worker processes, a paced producer, counting.

`run_load` takes a *spec* — how producers and workers reach the mailboxes: a
``redis://`` URL, or ``sentinel://host:port,host:port/service`` — and a ``failure``
coroutine, so the same producer, workers and counting serve another topology (a
Redis Cluster) with another fixture (`sentinel_helpers.Replicated` is this one's).
`mailboxes_for` turns a spec into a `Mailboxes`, in the test and in the worker
processes alike; a ``redis+cluster://`` URL is a spec too. ``agents`` spreads the turns
over several mailboxes (on a cluster: over its shards), each with its reply stream
there.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff
from redis.exceptions import ClusterError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis_helpers import eventually, processes, spawn

from pygents import Turn, tool
from pygents.redis import (
    MailboxError,
    Mailboxes,
    MailboxUnavailableError,
    NotReplicatedError,
    TurnHandle,
)
from pygents.redis._cluster import CONNECTION_ERRORS, clustered, connect

AGENT = "ledger"
REDIS_AWAY = (RedisConnectionError, RedisTimeoutError, OSError)
# A tail's reads on a cluster mid-failover may also meet a shard without a primary.
_TAIL_AWAY = (*CONNECTION_ERRORS, ClusterError)


_T = TypeVar("_T")


async def within(seconds: float, what: str, waited: Awaitable[_T]) -> _T:
    """``waited``, or an AssertionError naming ``what`` after ``seconds``: every wait of
    this harness is bounded, and says which one ran out (a bare TimeoutError does not)."""
    try:
        async with asyncio.timeout(seconds):
            return await waited
    except TimeoutError:
        raise AssertionError(f"{what}: not done after {seconds:.0f} s") from None


def _fast_retry() -> Retry:
    """One quick retry, as `Mailboxes` sets for a URL: the harness's own loops back off."""
    return Retry(ExponentialBackoff(cap=0.2, base=0.02), 1)


@asynccontextmanager
async def mailboxes_for(spec: str, **options: Any) -> AsyncIterator[Mailboxes]:
    """A `Mailboxes` on ``spec`` (a ``redis://`` URL, or ``sentinel://h:p,h:p/service``),
    closed after the block with whatever it needed."""
    if not spec.startswith("sentinel://"):
        async with Mailboxes(spec, **options) as mailboxes:
            yield mailboxes
        return
    parts = urlsplit(spec)
    nodes = [(host, int(port)) for host, port in (n.split(":") for n in parts.netloc.split(","))]
    # The sentinels' own timeouts; the primary's connections must not time out while
    # a read blocks (1 s) or WAIT waits, so they get none.
    quick = {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}
    sentinel = Sentinel(nodes, sentinel_kwargs=quick)
    # Closed from a copy of the list: redis-py reorders ``sentinel.sentinels`` as it
    # discovers the primary, and concurrent discoveries (many puts reconnecting after
    # a failover) can leave one client in it twice and another not at all.
    clients = list(sentinel.sentinels)
    try:
        client = sentinel.master_for(
            parts.path.strip("/"),
            decode_responses=True,
            retry=_fast_retry(),
            socket_connect_timeout=1.0,
        )
        async with Mailboxes(client=client, **options) as mailboxes:
            yield mailboxes
    finally:
        for found in clients:
            await found.aclose()


@dataclass
class Counts:
    """What one run of `run_load` saw."""

    turns: int  # puts attempted
    acknowledged: int = 0  # put() returned
    refused: int = 0  # put() raised: Redis unreachable (not acknowledged)
    unreplicated: int = 0  # put() raised NotReplicatedError (queued, not acknowledged)
    lost: int = 0  # acknowledged, and no outcome ever came
    outcomes_twice: int = 0  # acknowledged turns with more than one outcome in Redis at the end
    seen_twice: int = 0  # acknowledged turns whose outcome a live reader saw more than once
    ran_twice: int = 0  # turns whose tool ran more than once
    never_ran: int = 0  # acknowledged turns whose tool never ran
    acknowledged_after: int = 0  # acknowledged puts begun once the failover was over
    # A caller awaiting each result as it comes (its reply reader lives through it all):
    awaited: int = 0  # results it received
    awaited_after: int = 0  # ... for turns put once the failover was over
    awaited_lost: int = 0  # handles that raised instead (put acknowledged, no outcome)
    errors: list[str] = field(default_factory=list)  # handles that got no outcome: why
    promoted_after: float = 0.0  # seconds from the kill to the promotion
    longest_wait: float = 0.0  # the live caller's longest wait from one result to the next

    def line(self, label: str) -> str:
        return (
            f"{label}: {self.turns} puts, {self.acknowledged} acknowledged, {self.refused} "
            f"refused (Redis away), {self.unreplicated} not replicated; lost {self.lost}, "
            f"outcome recorded twice {self.outcomes_twice} (seen twice live "
            f"{self.seen_twice}), tool ran twice {self.ran_twice} "
            f"(never {self.never_ran}); {len(self.errors)} handles without an outcome; "
            f"{self.acknowledged_after} acknowledged after it; a live caller got "
            f"{self.awaited} results ({self.awaited_after} after it), lost "
            f"{self.awaited_lost}; "
            f"promoted {self.promoted_after:.1f} s after the kill; the live caller "
            f"waited at most {self.longest_wait:.1f} s for a result"
        )


class _Tail:
    """Every outcome record written to a reply stream, read as it is written.

    Following the stream live sees outcomes that the primary held and then lost in the
    failover (a caller could have read them: a reader sees an outcome as soon as the
    primary has it, before any replica does), which reading it afterwards would miss.
    The handles are awaited only once the tail has read everything: their reader trims
    what it reads, and the tail must not miss entries."""

    def __init__(self, client: Any, key: str) -> None:
        self.client = client
        self.key = key
        self.seen: Counter[str] = Counter()
        self.last = "0-0"
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        while not self.stopping.is_set():
            try:
                found = await self.client.xread({self.key: self.last}, count=500, block=100)
            except _TAIL_AWAY:
                await asyncio.sleep(0.05)  # the primary is away: Sentinel will say where
                continue
            for _, entries in found or ():
                for entry_id, fields in entries:
                    self.last = entry_id
                    for uuid, kind, _, _, _ in json.loads(fields["r"]):
                        if kind == "o":
                            self.seen[uuid] += 1

    async def caught_up(self) -> bool:
        """The tail has read the stream's last entry."""
        info = await self.client.xinfo_stream(self.key)
        return stream_id(info["last-generated-id"]) <= stream_id(self.last)


def stream_id(text: str) -> tuple[int, int]:
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


async def run_load(
    spec: str,
    logs: Path,
    failure: Callable[[], Awaitable[float]],
    *,
    replicas: int,
    turns: int = 2000,
    rate: float = 250.0,
    workers: int = 2,
    agents: Sequence[str] = (AGENT,),
) -> Counts:
    """Put ``turns`` at ``rate`` a second for worker processes on ``spec``, turn ``n``
    for ``agents[n % len(agents)]``; run ``failure`` (which returns seconds of outage)
    a third of the way; count."""
    counts = Counts(turns)

    @tool()
    async def post(amount: int) -> int:
        """The producer's view of the workers' tool (same name, same arguments)."""
        return amount * 2

    options = {"replicas": replicas, "replica_timeout": 0.5, "reply_check_interval": 1.0}
    with processes(
        [
            spawn("failover_worker.py", logs, spec, f"w{i}", str(logs), str(replicas), *agents)
            for i in range(workers)
        ]
    ) as started:
        async with (
            mailboxes_for(spec, **options) as mailboxes,
            mailboxes_for(spec, **options) as live,
            AsyncExitStack() as stack,
        ):
            await _wait_for_workers(mailboxes, agents, started, logs)
            # One tail per reply stream: one on a single server, one per agent on a cluster.
            keys = sorted({mailboxes.replies.key_for(agent) for agent in agents})
            tails = [
                _Tail(await stack.enter_async_context(_tail_client(spec, mailboxes)), key)
                for key in keys
            ]
            tailing = [asyncio.create_task(tail.run()) for tail in tails]
            # On a failure too, before the clients close: no task left running.
            background: list[asyncio.Task[Any]] = [*tailing]
            stack.push_async_callback(_settled, tails, background)
            handles: list[TurnHandle] = []
            acknowledged: set[str] = set()
            failing: asyncio.Task[float] | None = None

            async def put(n: int) -> None:
                after = failing is not None and failing.done()
                try:
                    handle = await mailboxes.put(agents[n % len(agents)], Turn(post, args=[n]))
                except NotReplicatedError:
                    counts.unreplicated += 1
                except MailboxUnavailableError:
                    counts.refused += 1
                else:
                    handles.append(handle)
                    acknowledged.add(handle.turn_uuid)
                    counts.acknowledged_after += after

            done = asyncio.Event()

            async def caller() -> None:
                """Put one turn at a time on ``live`` and wait for its result."""
                n = 0
                last = time.monotonic()
                while not done.is_set():
                    after = failing is not None and failing.done()
                    n += 1
                    try:
                        handle = await live.put(agents[n % len(agents)], Turn(post, args=[n]))
                    except MailboxError:  # not acknowledged: nothing to wait for
                        await asyncio.sleep(0.02)
                        continue
                    try:
                        try:
                            result = await within(
                                30,
                                f"the live caller's {handle!r} (put {handle.message_id})",
                                handle.result(),
                            )
                        except AssertionError as exc:  # say why: a worker died, maybe
                            raise AssertionError(f"{exc}{_exited(started, logs)}") from None
                        assert result == 2 * n
                    except MailboxError:
                        counts.awaited_lost += 1
                    else:
                        counts.awaited += 1
                        counts.awaited_after += after
                        now = time.monotonic()
                        counts.longest_wait = max(counts.longest_wait, now - last)
                        last = now

            calling = asyncio.create_task(caller())
            background.append(calling)
            puts: list[asyncio.Task[None]] = []
            fail_at = turns // 3
            start = time.monotonic()
            for n in range(turns):
                if n == fail_at:
                    failing = asyncio.create_task(failure())
                    background.append(failing)
                puts.append(asyncio.create_task(put(n)))
                background.append(puts[-1])
                # Pacing: a steady rate, whatever the puts cost.
                await asyncio.sleep(max(0.0, start + (n + 1) / rate - time.monotonic()))
            await within(60, "the puts", asyncio.gather(*puts))
            done.set()
            await within(40, "the live caller", calling)  # its waits are bounded (30 s)
            assert failing is not None
            counts.promoted_after = await within(60, "the failover", failing)
            counts.acknowledged = len(acknowledged)

            # Every outcome is written: nothing more comes (`_drained` says what is left).
            await within(90, "draining the mailboxes", _drained(mailboxes, agents))
            for tail in tails:
                await within(60, f"the tail of {tail.key}", eventually(tail.caught_up, within=60))
                tail.stopping.set()
            await within(10, "stopping the tails", asyncio.gather(*tailing))
            kept = await within(30, "reading outcomes", _outcomes(mailboxes, keys))

            async def settle(handle: TurnHandle) -> None:
                try:
                    await handle.outcome()
                except MailboxError as exc:
                    counts.errors.append(type(exc).__name__)

            # A handle's outcome is written (drained) and read within a check interval.
            await within(60, "the handles' outcomes", asyncio.gather(*(settle(h) for h in handles)))
    seen = sum((tail.seen for tail in tails), Counter[str]())
    counts.lost = sum(1 for uuid in acknowledged if seen[uuid] == 0)
    counts.seen_twice = sum(1 for uuid in acknowledged if seen[uuid] > 1)
    counts.outcomes_twice = sum(1 for uuid in acknowledged if kept[uuid] > 1)
    ran = _runs(logs)
    counts.ran_twice = sum(1 for times in ran.values() if times > 1)
    counts.never_ran = sum(1 for uuid in acknowledged if ran[uuid] == 0)
    return counts


def _exited(started: Sequence[subprocess.Popen[bytes]], logs: Path) -> str:
    """The workers that exited, each with the last line of its log ("" if none did):
    a turn nobody serves is waited for in vain, and the wait should say why."""
    said = []
    for n, process in enumerate(started):
        if process.poll() is not None:
            lines = (logs / f"w{n}.log").read_text(errors="replace").strip().splitlines()
            said.append(f"worker w{n} exited ({process.returncode}): {lines[-1] if lines else ''}")
    return "; " + "; ".join(said) if said else ""


async def _settled(tails: list[_Tail], tasks: list[asyncio.Task[Any]]) -> None:
    """Stop the tails and cancel whatever of the load still runs, and wait for it."""
    for tail in tails:
        tail.stopping.set()
    for task in tasks:
        task.cancel()
    await within(30, "cancelling the load", asyncio.gather(*tasks, return_exceptions=True))


@asynccontextmanager
async def _tail_client(spec: str, mailboxes: Mailboxes) -> AsyncIterator[Any]:
    """The client a tail reads with: on a cluster, one of its own. redis-py's cluster
    client, when a node fails under one command, closes connections that concurrent
    commands are using (they then fail with ``AttributeError``), so the tails, which
    are test instruments, do not share one with the producer or with each other."""
    if not clustered(spec):
        yield mailboxes.client
        return
    client = connect(spec, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


async def _outcomes(mailboxes: Mailboxes, keys: list[str]) -> Counter[str]:
    """How many outcomes the reply streams hold, by turn uuid: what Redis kept."""
    found: Counter[str] = Counter()
    for key in keys:
        for _, fields in await mailboxes.client.xrange(key):
            found.update(uuid for uuid, kind, _, _, _ in json.loads(fields["r"]) if kind == "o")
    return found


def _runs(logs: Path) -> Counter[str]:
    """How many times the tool ran, by turn uuid (the workers' logs)."""
    found: Counter[str] = Counter()
    for path in logs.glob("ran-*.txt"):
        found.update(line.split()[0] for line in path.read_text().splitlines())
    return found


async def _wait_for_workers(
    mailboxes: Mailboxes,
    agents: Sequence[str],
    started: Sequence[subprocess.Popen[bytes]],
    logs: Path,
) -> None:
    """Until every worker serves every agent; a worker that exited first fails the test
    at once, with its log (not after the wait's minute)."""

    async def live() -> bool:
        for n, process in enumerate(started):
            if process.poll() is not None:
                log = (logs / f"w{n}.log").read_text(errors="replace")
                raise AssertionError(f"worker w{n} exited ({process.returncode}):\n{log}")
        stats = [await mailboxes.stats(agent) for agent in agents]
        return all(found.workers >= len(started) for found in stats)

    await eventually(live, within=60)


async def _drained(mailboxes: Mailboxes, agents: Sequence[str], seconds: float = 60.0) -> None:
    """Until the mailboxes hold nothing: every turn recorded (or dead-lettered). Fails
    after ``seconds`` saying what was left, agent by agent."""
    left = "Redis never answered"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            found = [await mailboxes.stats(agent) for agent in agents]
            if all(stats.depth == 0 and stats.pending == 0 for stats in found):
                return
            left = ", ".join(
                f"{agent}: depth {stats.depth}, pending {stats.pending}"
                for agent, stats in zip(agents, found, strict=True)
            )
        except MailboxUnavailableError:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"the mailboxes did not drain in {seconds:.0f} s: {left}")
