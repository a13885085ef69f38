"""The local Redis Cluster the Redis tests also run on (see ``conftest.py``).

One cluster per test session — three primaries and three replicas on free 127.0.0.1
ports (`pygents.redis._local_cluster.LocalCluster`: ``redis-server --cluster-enabled
yes`` and ``redis-cli --cluster create``) — emptied before each test that uses it, and
stopped at the end of the session. Six servers and the slot assignment take seconds:
one per test would cost more than the tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from pygents.redis._local_cluster import LocalCluster

__all__ = ["NO_CLUSTER", "ClusterServer", "running_cluster"]

NO_CLUSTER = (
    "redis-server or redis-cli is not on PATH (Debian/Ubuntu: apt-get install redis-server)"
)


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
    if not LocalCluster.available():
        pytest.skip(NO_CLUSTER)
    with LocalCluster() as cluster:
        yield cluster
