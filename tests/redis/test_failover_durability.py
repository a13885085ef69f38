"""``Mailboxes(replicas=..., replica_timeout=...)`` and ``Mailboxes(client=...)``, on a
real primary and replica.

A replica is held still with ``SIGSTOP`` (and let go with ``SIGCONT``): it then cannot
confirm anything, which makes "the put waits for the replica" and "too few replicas
confirmed in time" observable without timing guesses.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis_helpers import Serving, eventually
from sentinel_helpers import Replicated, replicated

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, NotReplicatedError, RedisServer, Worker
from pygents.redis._lua.mailbox import RECORD
from system_programs import require


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Replicated]:
    """A primary and its replica, synced; no Sentinel."""
    with replicated(tmp_path, sentinels=0) as found:
        yield found


@asynccontextmanager
async def held_still(pair: Replicated) -> AsyncIterator[None]:
    """The replica stopped (SIGSTOP) for the block, then running again."""
    process = pair.replica.process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(process.pid, signal.SIGCONT)


def ledger() -> Agent:
    @tool()
    async def post(amount: int) -> int:
        """Posts an amount."""
        return amount * 2

    return Agent("ledger", "Keeps the books", [post])


async def test_a_put_with_replicas_returns_only_once_the_replica_has_the_turn(
    pair: Replicated,
) -> None:
    await pair.wait_synced()
    agent = ledger()
    primary = Redis(port=pair.primary.port, decode_responses=True)
    replica = Redis(port=pair.replica.port, decode_responses=True)
    try:
        async with Mailboxes(pair.primary.url, replicas=1, replica_timeout=30.0) as mailboxes:
            mailbox = mailboxes.keys("ledger").mailbox
            async with held_still(pair):
                turn = Turn(agent.tools[0], args=[1])
                putting = asyncio.create_task(mailboxes.put("ledger", turn))

                async def waiting() -> bool:
                    clients = await primary.client_list()
                    return any(c.get("cmd") == "wait" for c in clients)

                await eventually(waiting)
                assert not putting.done()
                assert await primary.xlen(mailbox) == 1  # written, not yet confirmed
            handle = await putting
            assert handle.message_id
            assert await replica.xlen(mailbox) == 1  # the replica has it: WAIT said so
    finally:
        await primary.aclose()
        await replica.aclose()


async def test_a_put_no_replica_confirms_in_time_raises_and_its_turn_still_runs(
    pair: Replicated, serving: Serving
) -> None:
    await pair.wait_synced()
    agent = ledger()
    async with (
        Mailboxes(pair.primary.url, replicas=1, replica_timeout=0.2) as durable,
        Mailboxes(pair.primary.url) as plain,
    ):
        async with held_still(pair):
            with pytest.raises(NotReplicatedError, match="are in the mailbox") as raised:
                await durable.put("ledger", Turn(agent.tools[0], args=[21]))
        assert raised.value.confirmed == 0
        (handle,) = raised.value.handles
        await serving.start(Worker(plain, agent, concurrency=1))
        assert await handle.result() == 42  # it was queued all the same
        await serving.close()  # before its Mailboxes closes


async def test_a_worker_with_replicas_counts_outcome_batches_no_replica_confirmed(
    pair: Replicated, serving: Serving, caplog: pytest.LogCaptureFixture
) -> None:
    await pair.wait_synced()
    agent = ledger()
    async with (
        Mailboxes(pair.primary.url, replicas=1, replica_timeout=0.2) as durable,
        Mailboxes(pair.primary.url) as plain,
    ):
        worker = await serving.start(Worker(durable, agent, concurrency=1))
        async with held_still(pair):
            handle = await plain.put("ledger", Turn(agent.tools[0], args=[5]))
            assert await handle.result() == 10  # recorded on the primary
            await eventually(lambda: worker.counters.unreplicated >= 1)
        await serving.close()
    assert "only 0 of 1 replicas confirmed" in caplog.text
    assert any(r.levelno == logging.WARNING for r in caplog.records)


async def test_a_dead_letter_waits_for_replicas_like_an_outcome(
    pair: Replicated, serving: Serving
) -> None:
    await pair.wait_synced()
    async with Mailboxes(pair.primary.url, replicas=1, replica_timeout=0.2) as durable:
        worker = await serving.start(Worker(durable, ledger(), concurrency=1))
        async with held_still(pair):
            await durable.client.xadd(durable.keys("ledger").mailbox, {"turn": "{oops"})
            await eventually(lambda: worker.counters.unreplicated >= 1)
        assert worker.counters.dead_lettered == 1
        assert len(await durable.dead_letters("ledger")) == 1
        await serving.close()


def test_the_latency_measurement_of_the_guide_runs(tmp_path: Path) -> None:
    require("redis-server")
    script = Path(__file__).resolve().parent / "failover_latency.py"
    done = subprocess.run(
        [sys.executable, str(script), "20"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"replicas={r}" for r in (0, 1, 0, 1)]
    assert all("put -> result p50" in line for line in lines)


# The worker's outcome batch calls RECORD by its SHA1 in a pipeline: that digest, in RESP.
_RECORD_CALL = hashlib.sha1(RECORD.encode()).hexdigest().encode()


class RecordCutter:
    """A TCP relay to Redis on 127.0.0.1 that drops the connection the first ``cuts``
    times a client sends a pipeline calling ``RECORD`` — the worker's outcome batch:
    a connection lost at that step, as when a primary dies."""

    def __init__(self, port: int, cuts: int) -> None:
        self.port = port
        self.cuts = cuts
        self.server: asyncio.Server | None = None
        self.pumps: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"redis://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/0"

    async def __aenter__(self) -> RecordCutter:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self.server is not None
        self.server.close()
        for pump in list(self.pumps):
            pump.cancel()
        await asyncio.gather(*self.pumps, return_exceptions=True)
        await self.server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        pumps = [
            asyncio.create_task(self._pump(reader, up_writer, cutting=True)),
            asyncio.create_task(self._pump(up_reader, writer, cutting=False)),
        ]
        self.pumps.update(pumps)
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            self.pumps.difference_update(pumps)
            for end in (writer, up_writer):
                end.close()
                with contextlib.suppress(OSError):
                    await end.wait_closed()

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, cutting: bool
    ) -> None:
        while data := await reader.read(65536):
            if cutting and self.cuts > 0 and _RECORD_CALL in data:
                self.cuts -= 1
                return  # the relay closes both sides
            writer.write(data)
            await writer.drain()


async def test_a_connection_lost_while_a_pipeline_records_outcomes_is_not_leaked(
    redis_server: RedisServer, serving: Serving
) -> None:
    """The worker's outcome batch is a pipeline. A pipeline whose execution fails must
    give its connection back; left to the garbage collector, it warns (an error here)
    and stays counted in its pool."""
    agent = ledger()
    async with (
        RecordCutter(redis_server.port, cuts=4) as cutter,
        Mailboxes(cutter.url) as mailboxes,
    ):
        await serving.start(Worker(mailboxes, agent, concurrency=1, max_reconnect_delay=0.05))
        handle = await mailboxes.put("ledger", Turn(agent.tools[0], args=[4]))
        assert await handle.result() == 8  # written once the relay lets it through
        assert cutter.cuts == 0  # the batch's connection was cut, twice over
        await serving.close()
        in_use = mailboxes.client.connection_pool._in_use_connections
        assert not in_use, f"{len(in_use)} connections never went back to the pool"
    gc.collect()  # a pipeline that kept its connection warns now, failing the test


def test_the_replica_settings_are_checked() -> None:
    with pytest.raises(ValueError, match=re.escape("replicas=...) must be zero or more")):
        Mailboxes(replicas=-1)
    with pytest.raises(TypeError, match=re.escape("replicas=...) takes a int")):
        Mailboxes(replicas=True)
    with pytest.raises(ValueError, match=re.escape("replica_timeout=...) must be positive")):
        Mailboxes(replica_timeout=0)
    with pytest.raises(TypeError, match="replica_timeout"):
        Mailboxes(replica_timeout="1")


async def test_mailboxes_run_on_a_ready_made_client(pair: Replicated, serving: Serving) -> None:
    agent = ledger()
    client = Redis(port=pair.primary.port, decode_responses=True)
    async with Mailboxes(client=client) as mailboxes:
        assert mailboxes.client is client
        assert mailboxes.where == f"redis://localhost:{pair.primary.port}/0"
        await serving.start(Worker(mailboxes, agent, concurrency=1))
        handle = await mailboxes.put("ledger", Turn(agent.tools[0], args=[3]))
        assert await handle.result() == 6
        await serving.close()


async def test_a_ready_made_client_is_refused_unless_it_decodes_and_comes_alone() -> None:
    raw, decoding = Redis(port=1), Redis(port=1, decode_responses=True)
    try:
        with pytest.raises(ValueError, match="decode_responses=True"):
            Mailboxes(client=raw)
        with pytest.raises(TypeError, match="takes the client alone"):
            Mailboxes("redis://localhost:1/0", client=decoding)
        with pytest.raises(TypeError, match="takes a redis\\.asyncio\\.Redis"):
            Mailboxes(client="redis://localhost:1/0")  # type: ignore[arg-type]
    finally:
        await raw.aclose()
        await decoding.aclose()
