"""W9: turns through Redis mailboxes, against raw XADD + XREADGROUP + XACK.

For 1, 2 and 4 worker processes, the producer (this process) puts ``n`` no-op turns
on a mailbox and waits for every result; the floor is the same payloads pushed
through the same client by hand: ``XADD`` from this process, ``XREADGROUP`` and
``XACK`` in as many consumer processes. Both sides batch alike (100 entries a
pipeline or script call, reads of up to 32 entries). The latency rows time one
``put`` → result at a time, with one worker.

Needs ``redis-server`` on PATH (started here, without persistence); the rows say
so when it is not. Worker processes run ``python -m benchmarks.redis_workloads``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, cast

from redis.asyncio import Redis

from pygents import Agent, AgentRegistry, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker

AGENT: Final = "bench-w9"
RAW: Final = "bench-w9-raw"
CHUNK: Final = 100  # entries per producer round trip, on both sides
READ: Final = 32  # entries per read: the raw consumers' COUNT, the workers' concurrency


@tool()
async def bench_w9(x: int) -> int:
    """W9: a no-op coroutine tool."""
    return x


def _agent() -> Agent:
    found = AgentRegistry.find(AGENT)
    return found if found is not None else Agent(AGENT, "W9", [bench_w9])


# -- the processes ------------------------------------------------------------------------


async def _serve(url: str) -> None:
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, _agent(), concurrency=READ)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
        await worker.run()


async def _consume(url: str, name: str) -> None:
    """The floor's consumer: read, acknowledge, count — nothing else."""
    client = Redis.from_url(url, decode_responses=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await client.sadd(f"{RAW}:ready", name)
    while not stop.is_set():
        found = await client.xreadgroup("raw", name, {RAW: ">"}, count=READ, block=200)
        for _, entries in found or ():
            ids = [entry_id for entry_id, _ in entries]
            pipe = client.pipeline(transaction=False)
            pipe.xack(RAW, "raw", *ids)
            pipe.incrby(f"{RAW}:done", len(ids))
            await pipe.execute()
    await client.aclose()


@contextmanager
def _processes(url: str, role: str, count: int) -> Iterator[None]:
    args = [sys.executable, "-m", "benchmarks.redis_workloads", role, url]
    procs = [
        subprocess.Popen([*args, f"{role}-{i}"], stdin=subprocess.DEVNULL) for i in range(count)
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def _until(check: Any, within: float = 60.0) -> None:
    """Poll ``check`` every millisecond until it holds (the floor has no event to wait on)."""
    async with asyncio.timeout(within):
        for _ in iter(int, 1):  # forever, within the timeout
            if await check():
                return
            await asyncio.sleep(0.001)


# -- one repetition each ------------------------------------------------------------------


def _payloads(n: int, reply: str) -> list[str]:
    return [
        json.dumps({"reply": reply, "turn": Turn(bench_w9, args=[i]).to_dict()}) for i in range(n)
    ]


async def floor_w9(client: Redis, payloads: list[str]) -> float:
    """Raw XADD of the payloads, consumed by the raw processes; seconds until all acked."""
    await client.xtrim(RAW, maxlen=0, approximate=False)
    await client.set(f"{RAW}:done", 0)
    start = time.perf_counter()
    for at in range(0, len(payloads), CHUNK):
        pipe = client.pipeline(transaction=False)
        for payload in payloads[at : at + CHUNK]:
            pipe.xadd(RAW, {"turn": payload})
        await pipe.execute()

    async def all_acked() -> bool:
        return int(await client.get(f"{RAW}:done") or 0) >= len(payloads)

    await _until(all_acked)
    return time.perf_counter() - start


async def w9(mailboxes: Mailboxes, n: int) -> float:
    """n turns put (100 a call) and every result awaited; seconds."""
    start = time.perf_counter()
    handles = []
    for at in range(0, n, CHUNK):
        turns = [Turn(bench_w9, args=[i]) for i in range(at, min(n, at + CHUNK))]
        handles += await mailboxes.put_many(AGENT, turns)
    for handle in handles:
        await handle.outcome()
    return time.perf_counter() - start


async def latency(mailboxes: Mailboxes, samples: int) -> list[float]:
    """Seconds from ``put`` to result, one turn at a time."""
    found = []
    for i in range(samples):
        start = time.perf_counter()
        await (await mailboxes.put(AGENT, Turn(bench_w9, args=[i]))).result()
        found.append(time.perf_counter() - start)
    return found


# -- the rows -----------------------------------------------------------------------------


async def rows(quick: bool, reps: int) -> list[dict[str, Any]]:
    """W9's rows, as ``benchmarks.__main__.Row`` keyword arguments."""
    if not RedisServer.available():
        return [_row("W9", "mailbox turns (redis-server not on PATH)", "skipped", "", None, None)]
    n = 400 if quick else 5000
    out: list[dict[str, Any]] = []
    with RedisServer() as server:
        async with Mailboxes(server.url) as mailboxes:
            client = mailboxes.client
            await client.xgroup_create(RAW, "raw", id="0", mkstream=True)
            payloads = _payloads(n, mailboxes.replies.key)
            for workers in (1, 2, 4):
                with (
                    _processes(server.url, "serve", workers),
                    _processes(server.url, "consume", workers),
                ):
                    await _until(lambda w=workers: _ready(mailboxes, w))
                    await client.delete(f"{RAW}:ready")
                    await w9(mailboxes, 50)  # warm up: connections, scripts
                    floors, works = [], []
                    for _ in range(reps):
                        floors.append(await floor_w9(client, payloads))
                        works.append(await w9(mailboxes, n))
                    ratio = statistics.median(w / f for w, f in zip(works, floors, strict=True))
                    out.append(
                        _row(
                            f"W9.{workers}",
                            f"{n:,} mailbox turns, {workers} worker process"
                            + ("es" if workers > 1 else ""),
                            f"{n / min(works):,.0f} turns/s",
                            f"{n / min(floors):,.0f} turns/s",
                            ratio,
                            1.5,
                        )
                    )
                    if workers == 1:
                        lat = sorted(await latency(mailboxes, 30 if quick else 300))
                        p50 = statistics.median(lat) * 1e3
                        p99 = lat[min(len(lat) - 1, round(0.99 * (len(lat) - 1)))] * 1e3
                        out.append(
                            _row("W9l", "put → result, one at a time", f"p50 {p50:.2f} ms",
                                 f"p99 {p99:.2f} ms", None, None)
                        )  # fmt: skip
    return out


async def _ready(mailboxes: Mailboxes, workers: int) -> bool:
    stats = await mailboxes.stats(AGENT)
    consumers = cast(int, await mailboxes.client.scard(f"{RAW}:ready"))
    return stats.workers >= workers and consumers >= workers


def _row(
    rid: str, what: str, figure: str, floor: str, ratio: float | None, target: float | None
) -> dict[str, Any]:
    return {
        "id": rid,
        "what": what,
        "figure": figure,
        "floor": floor,
        "ratio": ratio,
        "target": f"≤ {target:.1f}×" if target else "(report)",
        "ok": None if target is None or ratio is None else ratio <= target,
    }


if __name__ == "__main__":
    role, url, name = sys.argv[1:4]
    asyncio.run(_serve(url) if role == "serve" else _consume(url, name))
