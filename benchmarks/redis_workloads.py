"""W9: turns through Redis mailboxes, against raw XADD + XREADGROUP + XACK.

For 1, 2 and 4 worker processes, the producer (this process) puts ``n`` no-op turns
on a mailbox and waits for every result; the floor is the same payloads pushed
through the same client by hand: ``XADD`` from this process, ``XREADGROUP`` and
``XACK`` in as many consumer processes. Both sides batch alike (100 entries a
pipeline or script call, reads of up to 32 entries). The latency rows time one
``put`` → result at a time, with one worker.

W11: control through Redis, with 4 worker processes: seconds from the control call
to its effect as the producer sees it — ``cancel`` of a running turn until its
handle has the ``CANCELLED`` outcome, ``pause`` until every worker says it applies
it (the survey shows it), ``resume`` until a turn put while paused has its result.
W11s: the load of one survey of 100 populated mailboxes, in Redis commands
(``INFO commandstats`` deltas), and its time.

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
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final, cast

from redis.asyncio import Redis

from pygents import Agent, AgentRegistry, StopReason, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker, current_delivery

AGENT: Final = "bench-w9"
RAW: Final = "bench-w9-raw"
CONTROLLED: Final = "bench-w11"
CHUNK: Final = 100  # entries per producer round trip, on both sides
READ: Final = 32  # entries per read: the raw consumers' COUNT, the workers' concurrency


@tool()
async def bench_w9(x: int) -> int:
    """W9: a no-op coroutine tool."""
    return x


@tool()
async def bench_w11_hold() -> None:
    """W11: runs until cancelled (30 s at most), once it said it started."""
    delivery = current_delivery()
    assert delivery is not None
    client = Redis.from_url(_URL[0])
    try:
        await client.rpush(f"{CONTROLLED}:started", delivery.turn_uuid)
    finally:
        await client.aclose()
    await asyncio.sleep(30)


_URL: list[str] = [""]


def _agent() -> Agent:
    found = AgentRegistry.find(AGENT)
    return found if found is not None else Agent(AGENT, "W9", [bench_w9])


def _controlled() -> Agent:
    found = AgentRegistry.find(CONTROLLED)
    return found if found is not None else Agent(CONTROLLED, "W11", [bench_w9, bench_w11_hold])


# -- the processes ------------------------------------------------------------------------


async def _serve(url: str, agent: Agent) -> None:
    _URL[0] = url
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, agent, concurrency=READ)
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
def processes(module: str, args: list[str], names: list[str]) -> Iterator[None]:
    """Processes ``python -m module *args name``, one per name, stopped with SIGTERM (and
    killed after 30 s) on the way out — the worker processes of W9, W9c and W11."""
    command = [sys.executable, "-m", module, *args]
    procs = [subprocess.Popen([*command, name], stdin=subprocess.DEVNULL) for name in names]
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


def _processes(url: str, role: str, count: int) -> AbstractContextManager[None]:
    names = [f"{role}-{i}" for i in range(count)]
    return processes("benchmarks.redis_workloads", [role, url], names)


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


async def control_rows(quick: bool) -> list[dict[str, Any]]:
    """W11's rows: p95 of each control action's latency, with 4 worker processes."""
    if not RedisServer.available():
        return [_row("W11", "control (redis-server not on PATH)", "skipped", "", None, None)]
    samples = 10 if quick else 40
    with RedisServer() as server, _processes(server.url, "control", 4):
        async with Mailboxes(server.url) as mailboxes:
            await _until(lambda: _live(mailboxes, CONTROLLED, 4))
            cancels, pauses, resumes = [], [], []
            for _ in range(samples):
                cancels.append(await _cancel_latency(mailboxes))
                pause, resume = await _pause_latency(mailboxes)
                pauses.append(pause)
                resumes.append(resume)
            load = await survey_load(mailboxes)
    out = []
    for rid, what, found in (
        ("W11c", "cancel a running turn → CANCELLED outcome", cancels),
        ("W11p", "pause → every worker applies it", pauses),
        ("W11r", "resume → result of a turn put while paused", resumes),
    ):
        p95 = _p95(found)
        out.append(
            _row(rid, f"{what}, 4 workers (p95 of {samples})", f"p95 {p95 * 1e3:.0f} ms",
                 f"p50 {statistics.median(found) * 1e3:.0f} ms", p95 / 1.0, 1.0)
        )  # fmt: skip
    out.append(load)
    return out


def _p95(found: list[float]) -> float:
    ordered = sorted(found)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _cancel_latency(mailboxes: Mailboxes) -> float:
    handle = await mailboxes.put(CONTROLLED, Turn(bench_w11_hold))
    async with asyncio.timeout(30):
        while True:  # the tool says it started; BLPOP waits for it without polling
            _, started = await mailboxes.client.blpop([f"{CONTROLLED}:started"])
            if started == handle.turn_uuid:
                break
    start = time.perf_counter()
    await mailboxes.cancel(CONTROLLED, handle.turn_uuid, message_id=handle.message_id)
    outcome = await handle.outcome()
    took = time.perf_counter() - start
    assert outcome.stop_reason is StopReason.CANCELLED
    return took


async def _pause_latency(mailboxes: Mailboxes) -> tuple[float, float]:
    start = time.perf_counter()
    await mailboxes.pause(CONTROLLED)

    async def applied() -> bool:
        found = (await mailboxes.survey([CONTROLLED]))[CONTROLLED]
        return len(found.workers) == 4 and all(w.paused for w in found.workers)

    await _until(applied)
    paused = time.perf_counter() - start
    handle = await mailboxes.put(CONTROLLED, Turn(bench_w9, args=[1]))
    start = time.perf_counter()
    await mailboxes.resume(CONTROLLED)
    await handle.result()
    return paused, time.perf_counter() - start


async def survey_load(mailboxes: Mailboxes, count: int = 100) -> dict[str, Any]:
    """W11s: Redis commands (and time) of one survey of ``count`` mailboxes, each with
    10 queued turns, a pending one and 2 dead letters."""
    client = mailboxes.client
    for n in range(count):
        keys = mailboxes.keys(f"surveyed-{n}")
        turns = [Turn(bench_w9, args=[i]) for i in range(11)]
        await mailboxes.put_many(f"surveyed-{n}", turns, reply=False)
        await client.xgroup_create(keys.mailbox, "pygents", id="0")
        await client.xreadgroup("pygents", "ghost", {keys.mailbox: ">"}, count=1)
        for _ in range(2):
            await client.xadd(keys.dead, {"reason": "r", "error": "e", "payload": "{}"})
    names = [f"surveyed-{n}" for n in range(count)]
    await mailboxes.survey(names)  # the script into Redis's cache
    await client.config_resetstat()
    start = time.perf_counter()
    await mailboxes.survey(names)
    took = time.perf_counter() - start
    stats = await client.info("commandstats")
    ops = sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_config")
    what = f"one survey of {count} mailboxes (ops: INFO commandstats)"
    figure = f"{ops:,} ops ({ops / count:.0f}/mailbox)"
    return _row("W11s", what, figure, f"{took * 1e3:.1f} ms", None, None)


async def _live(mailboxes: Mailboxes, agent: str, workers: int) -> bool:
    return (await mailboxes.stats(agent)).workers >= workers


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
    if role == "consume":
        asyncio.run(_consume(url, name))
    else:
        asyncio.run(_serve(url, _agent() if role == "serve" else _controlled()))
