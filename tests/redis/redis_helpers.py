"""Helpers shared by the Redis tests (import as ``from redis_helpers import ...``)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pygents.redis import Mailboxes, Outcome, RedisServer, Worker
from system_programs import require

HERE = Path(__file__).resolve().parent


class Serving:
    """Workers running in this event loop, stopped (and awaited) at the end."""

    def __init__(self) -> None:
        self.runs: list[tuple[Worker, asyncio.Task[None]]] = []

    async def __aenter__(self) -> Serving:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self, worker: Worker) -> Worker:
        task = asyncio.create_task(worker.run())
        self.runs.append((worker, task))
        async with asyncio.timeout(10):
            await worker.wait_ready()
        return worker

    async def stop(self, worker: Worker) -> None:
        for found, task in self.runs:
            if found is worker:
                worker.stop()
                await task

    async def close(self) -> None:
        for worker, _ in self.runs:
            worker.stop()
        for _, task in self.runs:
            await task


async def eventually(check: Callable[[], object], *, within: float = 10.0) -> None:
    """Poll ``check`` (a coroutine function or plain) until it is truthy; bounded."""
    async with asyncio.timeout(within):
        while True:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(0.01)


async def recorded_outcomes(mailboxes: Mailboxes) -> list[Outcome]:
    """Every outcome record on the reply streams (nobody read them, so nothing trimmed):
    the client's one stream on a single server, one per mailbox on a cluster."""
    found: list[Outcome] = []
    streams = {mailboxes.replies.key_for(agent) for agent in await mailboxes.agents()}
    for stream in sorted(streams):
        for _, fields in await mailboxes.client.xrange(stream):
            for _uuid, kind, _index, _attempt, data in json.loads(fields["r"]):
                if kind == "o":
                    found.append(Outcome.from_dict(data))
    return found


def spawn(script: str, logs: Path, *args: str) -> subprocess.Popen[bytes]:
    """``python tests/redis/<script> ARGS...``, its output in ``logs/<args[1]>.log``."""
    with (logs / f"{args[1]}.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, str(HERE / script), *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def processes(started: list[subprocess.Popen[bytes]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Stop (SIGTERM, then SIGKILL after 30 s) every process still running at the end."""
    try:
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def running_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A running, empty ``redis-server`` in ``tmp_path``, closed after the block; the
    test is skipped where there is none (CI installs it)."""
    require("redis-server")
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    server.start()
    try:
        yield server
    finally:
        server.close()
