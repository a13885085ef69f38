"""W9c: turns/s through mailboxes on a three-primary Redis Cluster, against one server.

The same run on both, in this process: ``AGENTS`` agents (their mailboxes spread over
the three primaries: the run checks that every primary holds one), served by 2 and
then 4 worker processes that each serve every agent; the producer puts ``n`` no-op
turns round-robin over the agents, 100 a call, and waits for every result. The figure
is the cluster's turns/s, the floor the single server's, the ratio cluster time over
single-server time. On one machine the cluster's six ``redis-server`` processes share
its cores with the workers and the producer: the figure shows what the per-slot reads
and writes cost, not what a cluster of machines gains. Worker processes run
``python -m benchmarks.cluster_workloads URL NAME``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from contextlib import AbstractContextManager
from typing import Any, Final

from benchmarks.redis_workloads import CHUNK, READ, _row, _until, bench_w9, processes
from pygents import Agent, AgentRegistry, Turn
from pygents.redis import Mailboxes, RedisServer, Worker
from pygents.redis._server.local_cluster import LocalCluster

AGENTS: Final = 6
NAMES: Final = [f"bench-w9c-{n}" for n in range(AGENTS)]


def _agents() -> list[Agent]:
    return [AgentRegistry.find(n) or Agent(n, "W9c", [bench_w9]) for n in NAMES]


async def _serve(url: str, name: str) -> None:
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, _agents(), name=name, concurrency=READ)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
        await worker.run()


def _workers(url: str, count: int) -> AbstractContextManager[None]:
    names = [f"w9c-{i}" for i in range(count)]
    return processes("benchmarks.cluster_workloads", [url], names)


async def w9c(mailboxes: Mailboxes, n: int) -> float:
    """n turns put round-robin over the agents (100 a call), every result awaited."""
    start = time.perf_counter()
    handles = []
    for at in range(0, n, CHUNK):
        turns = [Turn(bench_w9, args=[i]) for i in range(at, min(n, at + CHUNK))]
        handles += await mailboxes.put_many(NAMES[(at // CHUNK) % AGENTS], turns)
    for handle in handles:
        await handle.outcome()
    return time.perf_counter() - start


async def _best(url: str, workers: int, n: int, reps: int) -> float:
    """The best of ``reps`` runs of `w9c` with ``workers`` worker processes."""
    async with Mailboxes(url) as mailboxes:
        with _workers(url, workers):

            async def ready() -> bool:
                stats = [await mailboxes.stats(name) for name in NAMES]
                return all(s.workers >= workers for s in stats)

            await _until(ready)
            await w9c(mailboxes, 60)  # warm up: connections, scripts
            return min([await w9c(mailboxes, n) for _ in range(reps)])


async def _spread(url: str) -> int:
    """How many primaries hold the agents' mailboxes."""
    async with Mailboxes(url) as mailboxes:
        client: Any = mailboxes.client
        await client.initialize()
        return len({client.get_node_from_key(mailboxes.keys(n).mailbox).name for n in NAMES})


async def rows(quick: bool, reps: int) -> list[dict[str, Any]]:
    """W9c's rows, as ``benchmarks.__main__.Row`` keyword arguments."""
    if not LocalCluster.available():
        return [_row("W9c", "cluster turns (redis-server not on PATH)", "skipped", "", None, None)]
    n = 600 if quick else 6000
    reps = 1 if quick else min(reps, 3)
    out: list[dict[str, Any]] = []
    with RedisServer() as server, LocalCluster() as cluster:
        spread = await _spread(cluster.url)
        for workers in (2, 4):
            single = await _best(server.url, workers, n, reps)
            clustered = await _best(cluster.url, workers, n, reps)
            out.append(
                _row(
                    f"W9c.{workers}",
                    f"{n:,} turns over {AGENTS} agents on {spread} of 3 cluster primaries, "
                    f"{workers} worker processes (floor: one server)",
                    f"{n / clustered:,.0f} turns/s",
                    f"{n / single:,.0f} turns/s",
                    clustered / single,
                    None,
                )
            )
    return out


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], sys.argv[2]))
