"""Fixtures for the Redis mailbox tests: a real ``redis-server`` per test.

Each server runs on a free loopback port in the test's own temporary directory,
with persistence off (``--save "" --appendonly no``), and is stopped afterwards.
Tests that need one are skipped, with the reason, only when ``redis-server`` is not
on ``PATH`` (CI installs it).

The tests of the modules in ``CLUSTERED`` run twice: on a single server and on a local
Redis Cluster (``cluster_helpers.py``), through the same ``redis_server`` fixture —
its ``url`` is then a ``redis+cluster://`` URL. A test that is about one server (it
restarts it, or reads that server's own counters) is marked ``single_server``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Final

import pytest
from cluster_helpers import ClusterServer, running_cluster
from desk_tools import DeskTools, declare
from redis_helpers import Serving, running_server

from pygents.redis import Mailboxes, RedisServer
from pygents.redis._server.local_cluster import LocalCluster
from system_programs import require

# The modules whose tests also run on the cluster: delivery, replies, serving, the
# producer's side, control, survey, poison and crash — what a cluster changes (keys,
# scripts, reply streams, reads per slot). The others are about things a cluster does
# not touch (tracing, ACL users, stopping, stress and soak runs).
CLUSTERED: Final = frozenset(
    {
        "test_control",
        "test_crash",
        "test_delivery",
        "test_mailbox",
        "test_poison",
        "test_replies",
        "test_serving",
        "test_survey",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "single_server: runs on a single redis-server only (not on the cluster)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "redis_server" not in metafunc.fixturenames:
        return
    module = metafunc.module.__name__.rpartition(".")[2]
    if module in CLUSTERED and metafunc.definition.get_closest_marker("single_server") is None:
        metafunc.parametrize("backend", ["single", "cluster"], indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """``"single"`` or ``"cluster"``: where ``redis_server`` runs."""
    return str(getattr(request, "param", "single"))


@pytest.fixture(scope="session")
def local_cluster() -> Iterator[LocalCluster]:
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def redis_server(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[RedisServer | ClusterServer]:
    """A running, empty ``redis-server``; ``stop()``/``start()`` restart it empty. On the
    cluster backend, the session's cluster, emptied."""
    if backend == "cluster":
        cluster: LocalCluster = request.getfixturevalue("local_cluster")
        cluster.flush()
        yield ClusterServer(cluster)
        return
    with running_server(tmp_path) as server:
        yield server


@pytest.fixture
def full_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A ``redis-server`` that holds 3 MB at most, evicting nothing: a full Redis
    refuses the writes that may grow its memory."""
    require("redis-server")
    full = ["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"]
    with RedisServer(tmp_path, extra_args=full) as server:
        yield server


@pytest.fixture
async def mailboxes(redis_server: RedisServer | ClusterServer) -> AsyncIterator[Mailboxes]:
    async with Mailboxes(redis_server.url) as found:
        yield found


@pytest.fixture
async def serving() -> AsyncIterator[Serving]:
    found = Serving()
    try:
        yield found
    finally:
        await found.close()


@pytest.fixture
def desk_tools() -> DeskTools:
    """The control tests' tools, declared for this test only (`desk_tools.py`)."""
    return declare()
