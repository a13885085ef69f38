"""The failover crash test on a Redis Cluster: one of three primaries ``kill -9``ed
under load, the cluster promotes its replica, producers and worker processes carry on
by themselves.

The same harness as the Sentinel test (``failover_helpers.py``), with turns spread
over agents on all three shards, on a cluster of its own (killing a primary would
spoil the session's) with a one-second node timeout, so that the promotion comes
within seconds. With ``Mailboxes(replicas=1)`` nothing acknowledged is lost and Redis
keeps one outcome per turn; with it off, work resumes and the counts are printed
(``pytest -s``) for the guide.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cluster_helpers import Failover
from failover_helpers import Counts, run_load
from redis.asyncio.cluster import RedisCluster

from pygents.redis import Mailboxes
from pygents.redis._server.local_cluster import LocalCluster
from system_programs import require

pytestmark = pytest.mark.slow

AGENTS = [f"ledger-{n}" for n in range(6)]


@pytest.fixture
async def cluster() -> AsyncIterator[LocalCluster]:
    """A cluster for this test alone, every node stopped afterwards (even on failure)."""
    require("redis-server", "redis-cli")
    with LocalCluster(node_timeout=1.0) as found:
        yield found


async def _run(cluster: LocalCluster, tmp_path: Path, replicas: int) -> Counts:
    async with Mailboxes(cluster.url) as mailboxes:
        client: RedisCluster = mailboxes.client  # type: ignore[assignment]
        await client.initialize()
        nodes = {client.get_node_from_key(mailboxes.keys(a).mailbox).name for a in AGENTS}
    assert len(nodes) == 3  # the turns go to every shard, the killed one among them
    logs = tmp_path / "logs"
    logs.mkdir()
    failover = Failover(cluster)
    counts = await run_load(
        cluster.url,
        logs,
        failover.kill_primary_and_fail_over,
        replicas=replicas,
        agents=AGENTS,
    )
    print(f"\n{counts.line(f'Cluster failover, replicas={replicas}')}")
    assert counts.acknowledged + counts.refused + counts.unreplicated == counts.turns
    # Producers, workers and a live caller's reply readers found the new primary by
    # themselves.
    assert counts.acknowledged_after > 0, "no put succeeded after the failover"
    assert counts.awaited_after > 0, "no result came to a live caller after the failover"
    return counts


async def test_with_replicas_a_cluster_failover_loses_no_acknowledged_turn(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    counts = await _run(cluster, tmp_path, replicas=1)
    assert counts.lost == 0
    assert counts.errors == []  # every handle got its outcome
    assert counts.awaited_lost == 0
    assert counts.never_ran == 0  # at least once
    assert counts.outcomes_twice == 0  # Redis keeps one outcome per turn


async def test_without_replicas_a_cluster_failover_is_survived_and_its_losses_counted(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    counts = await _run(cluster, tmp_path, replicas=0)
    assert counts.unreplicated == 0  # nothing waits for replicas
