"""The local Redis Cluster the Redis tests also run on (see ``conftest.py``).

One cluster per test session — three primaries and three replicas on free 127.0.0.1
ports (`pygents.redis._server.local_cluster.LocalCluster`: ``redis-server --cluster-enabled
yes`` and ``redis-cli --cluster create``) — emptied before each test that uses it, and
stopped at the end of the session. Six servers and the slot assignment take seconds:
one per test would cost more than the tests.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from redis.asyncio import Redis
from redis_helpers import eventually

from pygents.redis._server.local_cluster import LocalCluster
from pygents.redis._server.redis_server import RedisServer
from system_programs import require

__all__ = ["ClusterServer", "Failover", "running_cluster"]


class ClusterServer:
    """What a test gets as ``redis_server`` on the cluster backend: the same ``url``
    attribute (a ``redis+cluster://`` URL), so that a test written for one server runs
    unchanged. Stopping and restarting belong to single-server tests (marked so)."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster

    @property
    def url(self) -> str:
        return self.cluster.url

    def __repr__(self) -> str:
        return repr(self.cluster)

    def stop(self) -> None:
        raise NotImplementedError("mark the test single_server: it restarts its server")

    start = stop


@contextmanager
def running_cluster() -> Iterator[LocalCluster]:
    """A running local cluster for the session; skipped where Redis is not installed."""
    require("redis-server", "redis-cli")
    with LocalCluster() as cluster:
        yield cluster


class Failover:
    """``kill -9`` one primary of ``cluster``, wait until its replica is promoted, then
    start the killed node again (empty): it rejoins as the new primary's replica.

    Restarted only *after* the promotion, as in `sentinel_helpers`: an empty primary
    back before its replica took over would keep its slots, and the data would go."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster

    async def kill_primary_and_fail_over(self, within: float = 30.0) -> float:
        """Seconds from the kill to the promotion (every survivor says the cluster is
        ok and the replica is a primary)."""
        victim = self.cluster.primaries()[0]
        replica = await _replica_of(self.cluster, victim.port)
        process = victim.process
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
        victim.process = None
        killed = time.monotonic()
        survivors = [node for node in self.cluster.nodes if node.process is not None]

        async def promoted() -> bool:
            if (await _ask(replica.port, "ROLE"))[0] != "master":
                return False
            for node in survivors:
                if "cluster_state:ok" not in str(await _ask(node.port, "CLUSTER", "INFO")):
                    return False
            return True

        await eventually(promoted, within=within)
        promoted_after = time.monotonic() - killed
        victim.start()  # rejoins from its nodes.conf, as a replica of the promoted node
        return promoted_after


async def _ask(port: int, *command: str) -> Any:
    client = Redis(port=port, decode_responses=True)
    try:
        return await client.execute_command(*command)
    finally:
        await client.aclose()


async def _replica_of(cluster: LocalCluster, port: int) -> RedisServer:
    for node in cluster.nodes:
        role = await _ask(node.port, "ROLE")
        if role[0] == "slave" and int(role[2]) == port:
            return node
    raise AssertionError(f"no replica of 127.0.0.1:{port}")
