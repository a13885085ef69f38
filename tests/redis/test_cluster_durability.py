"""``Mailboxes(replicas=...)`` on a Redis Cluster: each write waits for the replica of
the shard that took it (``WAIT`` on that node's connection, see `_durability`).

On the session's local cluster (three primaries, one replica each). A replica is held
still with ``SIGSTOP`` for well under the cluster's node timeout (2 s), so that
"too few replicas confirmed" is observable without a failover; the failover itself is
``test_cluster_failover.py``'s.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.client import Redis
from redis_helpers import Serving, eventually

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, NotReplicatedError, Worker
from pygents.redis._server.local_cluster import LocalCluster
from pygents.redis._server.redis_server import RedisServer


@pytest.fixture
def cluster(local_cluster: LocalCluster) -> LocalCluster:
    local_cluster.flush()
    return local_cluster


def ledgers(names: list[str]) -> list[Agent]:
    @tool()
    async def post(amount: int) -> int:
        """Posts an amount."""
        return amount * 2

    return [Agent(name, "Keeps the books", [post]) for name in names]


async def one_agent_per_shard(mailboxes: Mailboxes) -> dict[int, str]:
    """An agent name for each primary (by port), by the client's slot map."""
    client: RedisCluster = mailboxes.client  # type: ignore[assignment]
    await client.initialize()
    found: dict[int, str] = {}
    for n in range(200):
        name = f"ledger-{n}"
        found.setdefault(int(client.get_node_from_key(mailboxes.keys(name).mailbox).port), name)
        if len(found) == 3:
            return found
    raise AssertionError(f"200 names did not cover three shards: {found}")


def replica_of(cluster: LocalCluster, primary_port: int) -> RedisServer:
    for node in cluster.nodes:
        with Redis(port=node.port, decode_responses=True) as client:
            role = client.execute_command("ROLE")
        if role[0] == "slave" and int(role[2]) == primary_port:
            return node
    raise AssertionError(f"no replica of 127.0.0.1:{primary_port}")


@contextmanager
def reading(replica: RedisServer) -> Iterator[Redis]:
    """A client of ``replica`` that may read its copy of the shard (``READONLY``)."""
    with Redis(port=replica.port, decode_responses=True, single_connection_client=True) as client:
        client.execute_command("READONLY")
        yield client


@asynccontextmanager
async def held_still(replica: RedisServer) -> AsyncIterator[None]:
    """The replica stopped (SIGSTOP) for the block, then running again."""
    assert replica.process is not None
    os.kill(replica.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(replica.process.pid, signal.SIGCONT)


async def test_with_replicas_a_put_on_a_cluster_returns_once_its_shards_replica_has_it(
    cluster: LocalCluster,
) -> None:
    async with Mailboxes(cluster.url, replicas=1, replica_timeout=5.0) as mailboxes:
        agents = await one_agent_per_shard(mailboxes)
        by_name = {agent.name: agent for agent in ledgers(list(agents.values()))}
        for port, name in agents.items():
            agent = by_name[name]
            turns = [Turn(agent.tools[0], args=[n]) for n in range(3)]
            handles = await mailboxes.put_many(name, turns)
            with reading(replica_of(cluster, port)) as replica:
                # WAIT returned: the replica has every turn already, no waiting here.
                kept = [entry_id for entry_id, _ in replica.xrange(mailboxes.keys(name).mailbox)]
            assert kept == [h.message_id for h in handles]
        assert await mailboxes.agents() == sorted(agents.values())


async def test_with_replicas_a_put_on_a_cluster_whose_replica_is_still_raises_not_replicated(
    cluster: LocalCluster, serving: Serving
) -> None:
    async with (
        Mailboxes(cluster.url, replicas=1, replica_timeout=0.2) as durable,
        Mailboxes(cluster.url) as plain,
    ):
        agents = await one_agent_per_shard(durable)
        port, name = next(iter(agents.items()))
        (agent,) = ledgers([name])
        await durable.put(name, Turn(agent.tools[0], args=[1]))  # lists the agent first
        async with held_still(replica_of(cluster, port)):
            with pytest.raises(NotReplicatedError, match="are in the mailbox") as raised:
                await durable.put(name, Turn(agent.tools[0], args=[21]))
        assert raised.value.confirmed == 0
        (handle,) = raised.value.handles
        await serving.start(Worker(plain, agent, concurrency=1))
        assert await handle.result() == 42  # queued all the same
        await serving.close()


async def test_a_worker_with_replicas_on_a_cluster_waits_for_each_shards_replica(
    cluster: LocalCluster, serving: Serving
) -> None:
    async with (
        Mailboxes(cluster.url, replicas=1, replica_timeout=0.2) as durable,
        Mailboxes(cluster.url) as plain,
    ):
        names = await one_agent_per_shard(durable)
        agents = ledgers(list(names.values()))
        worker = await serving.start(Worker(durable, agents, concurrency=4))
        handles = [
            await plain.put(agent.name, Turn(agent.tools[0], args=[n]))
            for n, agent in enumerate(agents)
        ]
        assert [await h.result() for h in handles] == [0, 2, 4]
        assert worker.counters.unreplicated == 0  # every shard's replica confirmed
        port, name = next(iter(names.items()))
        async with held_still(replica_of(cluster, port)):
            still = next(a for a in agents if a.name == name)
            handle = await plain.put(name, Turn(still.tools[0], args=[5]))
            assert await handle.result() == 10  # recorded on the primary
            await eventually(lambda: worker.counters.unreplicated >= 1)
        await serving.close()
