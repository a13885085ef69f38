"""Helpers shared by the Redis tests (import as ``from redis_helpers import ...``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pygents.redis import Worker

NO_SERVER = "redis-server is not on PATH (Debian/Ubuntu: apt-get install redis-server)"


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
