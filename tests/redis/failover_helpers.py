"""A replicated Redis watched by Sentinel, and the failover crash test's harness.

``Replicated`` runs a primary, one replica (``--replicaof``) and three sentinels, on
free 127.0.0.1 ports in a directory of their own, without persistence (as
`RedisServer` does): the test is about what replication keeps when the primary
dies, and an append-only file would only blur it. The killed primary is started
again, empty, as a replica of the new primary once the replica has been promoted — as
a supervisor would restart it. Only *after* the promotion: an empty primary coming
back before it would wipe its replica.

The harness (`run_load`) takes a *spec* — how producers and workers reach the
mailboxes: a ``redis://`` URL, or ``sentinel://host:port,host:port/service`` — and a
``failure`` coroutine, so the same producer, workers and counting serve another
topology (a Redis Cluster) with another fixture. `mailboxes_for` turns a spec into a
`Mailboxes` (in the test and in the worker processes alike).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis_helpers import NO_SERVER, eventually, processes, spawn

from pygents import Turn, tool
from pygents.redis import (
    MailboxError,
    Mailboxes,
    MailboxUnavailableError,
    NotReplicatedError,
    RedisServer,
    TurnHandle,
)
from pygents.redis._redis_server import answers_ping, free_port

SERVICE = "m"
AGENT = "ledger"
REDIS_AWAY = (RedisConnectionError, RedisTimeoutError, OSError)


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


class Replicated:
    """A primary, one replica and (by default) three sentinels on 127.0.0.1 (see the
    module)."""

    def __init__(self, directory: Path, *, sentinels: int = 3) -> None:
        self.directory = directory
        # A replica syncs at once (the default waits 5 s for more replicas to join).
        now = ["--repl-diskless-sync-delay", "0"]
        self.primary = RedisServer(self._dir("primary"), extra_args=now)
        self.replica = RedisServer(
            self._dir("replica"),
            extra_args=[*now, "--replicaof", "127.0.0.1", str(self.primary.port)],
        )
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        self.sentinels: list[subprocess.Popen[bytes]] = []

    def _dir(self, name: str) -> Path:
        found = self.directory / name
        found.mkdir(parents=True, exist_ok=True)
        return found

    @property
    def spec(self) -> str:
        nodes = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"sentinel://{nodes}/{SERVICE}"

    def start(self) -> None:
        self.primary.start()
        self.replica.start()
        for index, port in enumerate(self.sentinel_ports):
            where = self._dir(f"sentinel-{index}")
            config = where / "sentinel.conf"
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {where}\nlogfile {where / 'sentinel.log'}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary.port} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} 400\n"
                f"sentinel failover-timeout {SERVICE} 3000\n"
            )
            self.sentinels.append(
                subprocess.Popen(
                    ["redis-sentinel", str(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 10
        while not all(answers_ping(port) for port in self.sentinel_ports):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the sentinels did not start; see {self.directory}")
            time.sleep(0.01)

    def close(self) -> None:
        for process in self.sentinels:
            if process.poll() is None:
                process.terminate()
        for process in self.sentinels:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.replica.close()
        self.primary.close()

    async def primary_port(self) -> int:
        """The primary's port as the sentinels say (the first one that answers)."""
        for port in self.sentinel_ports:
            client = Redis(host="127.0.0.1", port=port, decode_responses=True)
            try:
                found = await client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
                return int(found[1])
            except REDIS_AWAY:
                continue
            finally:
                await client.aclose()
        raise RuntimeError("no sentinel answers")

    async def _moved_from(self, port: int) -> bool:
        return await self.primary_port() != port

    async def wait_synced(self, within: float = 10.0) -> None:
        """Until the replica has finished its first sync and Sentinel knows it."""
        primary = Redis(port=self.primary.port, decode_responses=True)
        try:
            async with asyncio.timeout(within):
                while True:
                    info = await primary.info("replication")
                    online = info.get("slave0", {}).get("state") == "online"
                    if online and (not self.sentinel_ports or await self._sentinels_see_replica()):
                        return
                    await asyncio.sleep(0.05)
        finally:
            await primary.aclose()

    async def _sentinels_see_replica(self) -> bool:
        for port in self.sentinel_ports:
            client = Redis(host="127.0.0.1", port=port, decode_responses=True)
            try:
                replicas = await client.execute_command("SENTINEL", "REPLICAS", SERVICE)
                if not replicas:
                    return False
            finally:
                await client.aclose()
        return True

    async def kill_primary_and_fail_over(self, within: float = 20.0) -> float:
        """``kill -9`` the primary; wait until Sentinel promoted the replica, then start
        the old primary again (empty) for Sentinel to make it a replica. Seconds from
        the kill to the promotion."""
        old = self.primary.port
        process = self.primary.process
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
        self.primary.process = None
        killed = time.monotonic()
        await eventually(lambda: self._moved_from(old), within=within)
        promoted = time.monotonic() - killed
        # Now that it cannot come back as the primary, restart it as a replica of the
        # new one, as a supervisor would (Sentinel would make it one itself, but only
        # after some 8 s of seeing it claim to be a primary).
        new = await self.primary_port()
        self.primary.extra_args = (*self.primary.extra_args, "--replicaof", "127.0.0.1", str(new))
        self.primary.start()
        return promoted


@contextmanager
def replicated(tmp_path: Path, *, sentinels: int = 3) -> Iterator[Replicated]:
    """A running `Replicated` (``sentinels=0``: the primary and its replica alone),
    every process stopped after the block."""
    if not RedisServer.available():
        pytest.skip(NO_SERVER)
    found = Replicated(tmp_path / "redis", sentinels=sentinels)
    try:
        found.start()
        yield found
    finally:
        found.close()


# -- the load -------------------------------------------------------------------------


@dataclass
class Counts:
    """What one run of `run_load` saw."""

    turns: int  # puts attempted
    acknowledged: int = 0  # put() returned
    refused: int = 0  # put() raised: Redis unreachable (not acknowledged)
    unreplicated: int = 0  # put() raised NotReplicatedError (queued, not acknowledged)
    lost: int = 0  # acknowledged, and no outcome ever came
    outcomes_twice: int = 0  # acknowledged turns whose outcome was recorded more than once
    ran_twice: int = 0  # turns whose tool ran more than once
    never_ran: int = 0  # acknowledged turns whose tool never ran
    acknowledged_after: int = 0  # acknowledged puts begun once the failover was over
    errors: list[str] = field(default_factory=list)  # how handles of lost turns failed
    promoted_after: float = 0.0  # seconds from the kill to the promotion

    def line(self, label: str) -> str:
        return (
            f"{label}: {self.turns} puts, {self.acknowledged} acknowledged, {self.refused} "
            f"refused (Redis away), {self.unreplicated} not replicated; lost {self.lost}, "
            f"outcome recorded twice {self.outcomes_twice}, tool ran twice {self.ran_twice} "
            f"(never {self.never_ran}); {self.acknowledged_after} acknowledged after it; "
            f"promoted {self.promoted_after:.1f} s after the kill"
        )


class _Tail:
    """Every outcome record written to a reply stream, read as it is written.

    Following the stream live sees outcomes that the primary held and then lost in the
    failover (a caller could have read them), which reading it afterwards would miss.
    The handles are awaited only once the tail has read everything: their reader trims
    what it reads, and the tail must not miss entries."""

    def __init__(self, mailboxes: Mailboxes) -> None:
        self.client = mailboxes.client
        self.key = mailboxes.replies.key
        self.seen: Counter[str] = Counter()
        self.last = "0-0"
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        while not self.stopping.is_set():
            try:
                found = await self.client.xread({self.key: self.last}, count=500, block=100)
            except REDIS_AWAY:
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
) -> Counts:
    """Put ``turns`` at ``rate`` a second for worker processes on ``spec``; run
    ``failure`` (which returns seconds of outage) a third of the way; count."""
    counts = Counts(turns)

    @tool()
    async def post(amount: int) -> int:
        """The producer's view of the workers' tool (same name, same arguments)."""
        return amount * 2

    options = {"replicas": replicas, "replica_timeout": 0.5, "reply_check_interval": 1.0}
    with processes(
        [
            spawn("failover_worker.py", logs, spec, f"w{i}", str(logs), str(replicas))
            for i in range(workers)
        ]
    ):
        async with mailboxes_for(spec, **options) as mailboxes:
            await _wait_for_workers(mailboxes, workers)
            tail = _Tail(mailboxes)
            tailing = asyncio.create_task(tail.run())
            handles: list[TurnHandle] = []
            acknowledged: set[str] = set()
            failing: asyncio.Task[float] | None = None

            async def put(n: int) -> None:
                after = failing is not None and failing.done()
                try:
                    handle = await mailboxes.put(AGENT, Turn(post, args=[n]))
                except NotReplicatedError:
                    counts.unreplicated += 1
                except MailboxUnavailableError:
                    counts.refused += 1
                else:
                    handles.append(handle)
                    acknowledged.add(handle.turn_uuid)
                    counts.acknowledged_after += after

            puts: list[asyncio.Task[None]] = []
            fail_at = turns // 3
            start = time.monotonic()
            for n in range(turns):
                if n == fail_at:
                    failing = asyncio.create_task(failure())
                puts.append(asyncio.create_task(put(n)))
                # Pacing: a steady rate, whatever the puts cost.
                await asyncio.sleep(max(0.0, start + (n + 1) / rate - time.monotonic()))
            await asyncio.gather(*puts)
            assert failing is not None
            counts.promoted_after = await failing
            counts.acknowledged = len(acknowledged)

            async with asyncio.timeout(60):
                await _drained(mailboxes)  # every outcome is written: nothing more comes
                await eventually(tail.caught_up, within=60)
                tail.stopping.set()
                await tailing

                async def settle(handle: TurnHandle) -> None:
                    try:
                        await handle.outcome()
                    except MailboxError as exc:
                        counts.errors.append(type(exc).__name__)

                await asyncio.gather(*(settle(h) for h in handles))
    counts.lost = sum(1 for uuid in acknowledged if tail.seen[uuid] == 0)
    counts.outcomes_twice = sum(1 for uuid in acknowledged if tail.seen[uuid] > 1)
    ran = _runs(logs)
    counts.ran_twice = sum(1 for times in ran.values() if times > 1)
    counts.never_ran = sum(1 for uuid in acknowledged if ran[uuid] == 0)
    return counts


def _runs(logs: Path) -> Counter[str]:
    """How many times the tool ran, by turn uuid (the workers' logs)."""
    found: Counter[str] = Counter()
    for path in logs.glob("ran-*.txt"):
        found.update(line.split()[0] for line in path.read_text().splitlines())
    return found


async def _wait_for_workers(mailboxes: Mailboxes, count: int) -> None:
    async def live() -> bool:
        return (await mailboxes.stats(AGENT)).workers >= count

    await eventually(live, within=60)


async def _drained(mailboxes: Mailboxes) -> None:
    """Until the mailbox holds nothing: every turn recorded (or dead-lettered)."""
    while True:
        try:
            stats = await mailboxes.stats(AGENT)
            if stats.depth == 0 and stats.pending == 0:
                return
        except MailboxUnavailableError:
            pass
        await asyncio.sleep(0.05)
