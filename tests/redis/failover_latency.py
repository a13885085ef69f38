"""The latency cost of ``Mailboxes(replicas=1)``: ``python failover_latency.py [TURNS]``.

Starts a primary and a replica on 127.0.0.1 (`sentinel_helpers.Replicated`, without
sentinels), serves a no-op tool with one worker in this process, and puts ``TURNS``
turns (default 2,000) one at a time, awaiting each result, with ``replicas=0`` and
then ``replicas=1``, twice each. Prints ``put`` and ``put`` → result p50 and p95 —
the figures of "Durability and failover" in docs/guides/scaling-out.md.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, its path holds only this folder: the helpers it imports need
# tests/ too (system_programs), as under pytest.
sys.path.append(str(Path(__file__).resolve().parent.parent))

from sentinel_helpers import Replicated

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, Worker


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(fraction * len(ordered)) - 1)] * 1000


async def measure(url: str, agent: Agent, replicas: int, turns: int) -> str:
    async with (
        Mailboxes(url, replicas=replicas) as producer,
        Mailboxes(url, replicas=replicas) as served,
    ):
        worker = Worker(served, agent, concurrency=4, stats_interval=None, control_interval=None)
        running = asyncio.create_task(worker.run())
        await worker.wait_ready()
        tool_ = agent.tools[0]
        for n in range(50):  # warm up: connections, scripts
            await (await producer.put(agent.name, Turn(tool_, args=[n]))).result()
        puts: list[float] = []
        results: list[float] = []
        for n in range(turns):
            start = time.perf_counter()
            handle = await producer.put(agent.name, Turn(tool_, args=[n]))
            put = time.perf_counter()
            await handle.result()
            puts.append(put - start)
            results.append(time.perf_counter() - start)
        worker.stop()
        await running
    return (
        f"replicas={replicas}: put p50 {percentile(puts, 0.5):.2f} ms, "
        f"p95 {percentile(puts, 0.95):.2f} ms; put -> result p50 "
        f"{percentile(results, 0.5):.2f} ms, p95 {percentile(results, 0.95):.2f} ms"
    )


async def main(turns: int) -> None:
    @tool()
    async def noop(n: int) -> int:
        """Returns its argument."""
        return n

    with tempfile.TemporaryDirectory() as directory:
        pair = Replicated(Path(directory), sentinels=0)
        pair.start()
        try:
            await pair.wait_synced()
            for round_, replicas in enumerate((0, 1, 0, 1)):
                agent = Agent(f"latency-{round_}", "Answers at once", [noop])
                print(await measure(pair.primary.url, agent, replicas, turns), flush=True)
        finally:
            pair.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
