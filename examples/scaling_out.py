"""Scaling out: an agent served by worker processes, through its mailbox on Redis.

    uv run python examples/scaling_out.py            # the whole demo, on this machine
    uv run python examples/scaling_out.py worker     # one worker (as in compose.yaml)
    uv run python examples/scaling_out.py produce    # put turns, print the results

The demo starts a throwaway ``redis-server`` (or uses ``REDIS_URL`` if set), runs two
worker processes of this very script, and puts turns on the ``clerk`` agent's mailbox
from this process. Going from one machine to many changes one thing: ``REDIS_URL``.
With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set (and the ``otel`` extra), every process
exports its spans: the workers' turns link to the spans that put them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import ExitStack
from typing import Any

from redis.asyncio import Redis

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, RedisServer, RemoteTurnError, Worker, current_delivery

URL_VARIABLE = "REDIS_URL"
ledger: Redis | None = None  # the workers' own connection, for the side effect below


@tool()
async def shout(text: str) -> str:
    """Says it louder."""
    return text.upper()


@tool()
async def spell(word: str) -> AsyncIterator[str]:
    """Streams a word letter by letter."""
    for letter in word:
        yield letter


@tool()
async def charge(order: str, cents: int) -> str:
    """Charges an order once, however many times the turn is delivered.

    The turn's uuid is the idempotency key: a redelivered turn (its first worker
    died before recording the outcome) finds the key taken and charges nothing.
    """
    delivery = current_delivery()
    assert delivery is not None, "runs in a worker"
    assert ledger is not None, "runs in a worker"
    first = await ledger.set(f"example:charged:{delivery.turn_uuid}", cents, nx=True)
    return f"order {order} charged {cents / 100:.2f}" + ("" if first else " (already)")


@tool()
async def refuse(reason: str) -> str:
    """Always fails."""
    raise ValueError(reason)


def clerk() -> Agent:
    return Agent("clerk", "Does the paperwork", [shout, spell, charge, refuse])


def telemetry(service: str) -> Any:
    """OpenTelemetry, when an endpoint is configured and the extra is installed."""
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return None
    try:
        import pygents_otel
    except ImportError:
        return None
    return pygents_otel.configure(service_name=service)


async def serve(url: str) -> None:
    """One worker process: serve the clerk until SIGTERM or Ctrl-C."""
    global ledger
    traced = telemetry("scaling-out-worker")
    ledger = Redis.from_url(url)
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, clerk(), concurrency=16, visibility_timeout=10)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stop)
        await worker.run()
    await ledger.aclose()
    if traced is not None:
        traced.shutdown()


async def produce(url: str, workers: int = 0) -> None:
    """Put turns on the clerk's mailbox and print what comes back."""
    traced = telemetry("scaling-out-producer")
    async with Mailboxes(url) as mailboxes:
        if workers:
            await wait_for_workers(mailboxes, workers)
            print(f"workers ready: {workers}")
        words = ["hello", "from", "another", "process"]
        handles = await mailboxes.put_many("clerk", [Turn(shout, args=[w]) for w in words])
        for word, handle in zip(words, handles, strict=True):
            print(f"shout: {word} -> {await handle.result()}")
        streamed = await mailboxes.put("clerk", Turn(spell, args=["pygents"]))
        print("spell:", "-".join([letter async for letter in streamed]))
        paid = await mailboxes.put("clerk", Turn(charge, kwargs={"order": "A-1", "cents": 1250}))
        print(f"charge: {await paid.result()}")
        refused = await mailboxes.put("clerk", Turn(refuse, args=["no such account"]))
        try:
            await refused.result()
        except RemoteTurnError as exc:
            print(f"refuse: {exc.outcome.error_type}: {exc.outcome.error}")
        stats = await mailboxes.stats("clerk")
        print(
            f"mailbox: depth {stats.depth}, pending {stats.pending}, "
            f"dead letters {stats.dead_letters}, workers {stats.workers}"
        )
    if traced is not None:
        traced.shutdown()


async def wait_for_workers(mailboxes: Mailboxes, count: int) -> None:
    """Until ``count`` workers serve the clerk (they announce themselves in Redis)."""
    for _ in range(1200):  # one minute at most
        if (await mailboxes.stats("clerk")).workers >= count:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{count} workers did not start within a minute")


def demo() -> int:
    """Redis, two workers of this script, and a producer — all on this machine."""
    url = os.environ.get(URL_VARIABLE)
    with ExitStack() as stack:
        if url is None:
            if not RedisServer.available():
                print(
                    "skipped: redis-server is not on PATH (apt-get install redis-server), "
                    f"and {URL_VARIABLE} is not set"
                )
                return 0
            url = stack.enter_context(RedisServer()).url
        env = {**os.environ, URL_VARIABLE: url}
        workers = [
            subprocess.Popen([sys.executable, __file__, "worker"], env=env) for _ in range(2)
        ]
        try:
            asyncio.run(produce(url, workers=len(workers)))
        finally:
            for process in workers:
                process.send_signal(signal.SIGTERM)
            codes = [process.wait(timeout=30) for process in workers]
        print(f"workers stopped: {codes}")
    return 0


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "demo"
    url = os.environ.get(URL_VARIABLE, "redis://localhost:6379/0")
    if mode == "worker":
        asyncio.run(serve(url))
        return 0
    if mode == "produce":
        asyncio.run(produce(url))
        return 0
    return demo()


if __name__ == "__main__":
    sys.exit(main())
