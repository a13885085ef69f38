"""W7: start-to-screen latency of live mode, from a turn starting in a worker process
to the fleet model of ``pygents-tui listen`` showing it running.

The receiver and the fleet model run in this process, drained ten times a second
(the dashboard's pace or slower). A worker process (this module run as a script) is
a pygents application set up the documented way — ``pygents_otel.configure(live=True)``
with nothing else changed: OTLP export, live records batched every 200 ms. Its agent
runs turns one after another; each turn's tool waits for a line on its standard
input, which this process writes once the model showed the turn running (after a
random pause of up to 0.3 s, so that turns start at any moment of the exporter's
cycle and of the drain's). A turn's start is the runtime's
own timestamp (``Turn.start_time``, which the worker reports at the end); the moment
it is seen is this process's clock, the same machine's.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass

import pygents_otel
from pygents import Agent, Turn, tool
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver

DRAIN_SECONDS = 0.1
JITTER_SECONDS = 0.3
TARGET_SECONDS = 1.5
_TIMEOUT = 60.0  # a worker that has not shown a turn by then is broken


@dataclass(frozen=True)
class Latency:
    transport: str
    turns: int
    p50: float  # seconds
    p95: float
    worst: float


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def w7(turns: int, transport: str = "grpc") -> Latency:
    """Run one worker of ``turns`` turns against a fresh receiver; see the module
    docstring."""
    fleet = FleetModel(stale_after=3600.0)
    grpc_port, http_port = (0, None) if transport == "grpc" else (None, 0)
    async with Receiver(fleet, grpc_port=grpc_port, http_port=http_port) as receiver:
        if transport == "grpc":
            endpoint, protocol = f"http://{receiver.grpc_endpoint}", "grpc"
        else:
            endpoint, protocol = str(receiver.http_endpoint), "http/protobuf"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYGENTS_"))}
        env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
        worker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.live_workloads",
            "worker",
            str(turns),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        try:
            seen = await _watch(fleet, worker, turns)
            assert worker.stdout is not None
            report = await asyncio.wait_for(worker.stdout.read(), _TIMEOUT)
            await asyncio.wait_for(worker.wait(), _TIMEOUT)
        finally:
            if worker.returncode is None:
                worker.kill()
                await worker.wait()
    started: dict[str, int] = json.loads(report.decode().strip().splitlines()[-1])
    latencies = [(seen[uuid] - started[uuid]) / 1e9 for uuid in started]
    return Latency(
        transport=transport,
        turns=len(latencies),
        p50=statistics.median(latencies),
        p95=_percentile(latencies, 0.95),
        worst=max(latencies),
    )


async def _watch(
    fleet: FleetModel, worker: asyncio.subprocess.Process, turns: int
) -> dict[str, int]:
    """When each turn was first seen running (Unix ns). The model is drained on a
    fixed 100 ms cadence, as a dashboard's timer does, whatever the turns do; each
    turn seen is let go after a random pause, so that the next one starts at any
    moment of both the exporter's and the drain's cycle."""
    jitter = random.Random(7)
    seen: dict[str, int] = {}
    releases: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()
    tick = loop.time()
    deadline = time.monotonic() + _TIMEOUT
    while len(seen) < turns:
        tick += DRAIN_SECONDS
        await asyncio.sleep(max(0.0, tick - loop.time()))
        fleet.store.drain()
        now = time.time_ns()
        for turn in fleet.store.running_turns():
            if turn.uuid not in seen:
                seen[turn.uuid] = now
                release = asyncio.create_task(_release(worker, jitter.uniform(0, JITTER_SECONDS)))
                releases.add(release)
                release.add_done_callback(releases.discard)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the worker showed {len(seen)} of {turns} turns in {_TIMEOUT:g} s")
    await asyncio.gather(*releases)
    return seen


async def _release(worker: asyncio.subprocess.Process, after: float) -> None:
    """Let the worker's running turn end (and its next one start) ``after`` seconds on."""
    assert worker.stdin is not None
    await asyncio.sleep(after)
    worker.stdin.write(b"next\n")
    await worker.stdin.drain()


# -- the worker process -------------------------------------------------------------------


@tool
async def wait_for_next() -> None:
    """Runs until the benchmark writes a line: it saw this turn running."""
    await asyncio.to_thread(sys.stdin.readline)


async def _work(turns: int) -> dict[str, int]:
    agent = Agent("latency", "runs turns the benchmark lets go", [wait_for_next])
    queued = [Turn(wait_for_next, timeout=_TIMEOUT) for _ in range(turns)]
    for turn in queued:
        await agent.put(turn)
    async for _ in agent.run():
        pass
    return {
        turn.uuid: int(turn.start_time.timestamp() * 1e9)
        for turn in queued
        if turn.start_time is not None
    }


def _worker(turns: int) -> int:
    telemetry = pygents_otel.configure("bench-live", live=True, metrics_exporter="none")
    try:
        started = asyncio.run(_work(turns))
    finally:
        telemetry.shutdown()
    print(json.dumps(started), flush=True)
    return 0


def main(argv: list[str]) -> int:
    """``python -m benchmarks.live_workloads [--quick]`` measures W7 alone (100 turns
    per transport; 5 with ``--quick``); ``... worker N`` is the worker process."""
    if argv[:1] == ["worker"]:
        return _worker(int(argv[1]))
    turns = 5 if "--quick" in argv else 100
    for transport in ("grpc", "http"):
        res = asyncio.run(w7(turns, transport))
        print(
            f"W7 {transport:<4} p50 {res.p50 * 1000:.0f} ms, p95 {res.p95 * 1000:.0f} ms,"
            f" worst {res.worst * 1000:.0f} ms over {res.turns} turns"
            f" (target p95 <= {TARGET_SECONDS * 1000:.0f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
