"""Lanes: how a worker runs many deliveries at once without a task per turn.

A lane is to its deliveries what ``Agent.run()`` is to its turns: one task, one
frame (the current-scope variable's value) and one
`Runner` (`pygents._turn_run`) — a shared deadline timer — for a sequence of
turns. ``Lanes(n)`` runs ``n`` of them over one queue, and counts the deliveries
it holds (queued or running), which is what the reader sizes its reads by.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from pygents._scope import CURRENT, Frame
from pygents._turn_run import Runner

__all__ = ["Job", "Lanes"]

_log = logging.getLogger("pygents.redis")

Job = Callable[[Runner], Awaitable[None]]
"""One delivery for a lane: run a turn, or dead-letter an entry."""


class Lanes:
    """``count`` lanes over one queue of jobs; see the module docstring."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.load = 0  # jobs queued or running
        self.room = asyncio.Event()  # set whenever a job finishes
        self._jobs: asyncio.Queue[Job | None] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._lane()) for _ in range(self.count)]

    def add(self, job: Job) -> None:
        """Queue ``job``; once closed, drop it (its delivery stays with the worker,
        which hands it back)."""
        if self._closed:
            return
        self.load += 1
        self._jobs.put_nowait(job)

    def close(self) -> None:
        """Start no job any more: drop those queued, let the running ones finish."""
        if self._closed:
            return
        self._closed = True
        while not self._jobs.empty():
            if self._jobs.get_nowait() is not None:
                self.load -= 1
        for _ in range(self.count):
            self._jobs.put_nowait(None)
        self.room.set()

    async def _lane(self) -> None:
        frame = Frame(CURRENT.get())
        CURRENT.set(frame)
        runner = Runner(frame)
        done = 0
        try:
            while (job := await self._jobs.get()) is not None:
                try:
                    await job(runner)
                except Exception as exc:
                    _log.error("pygents.redis: a delivery failed in the worker", exc_info=exc)
                finally:
                    self.load -= 1
                    self.room.set()
                # Turns that never await leave the loop no chance to run the reader
                # and the writer; yielding now and then keeps reads and writes in flight
                # while the lanes work (otherwise they would wait for each read in turn).
                done += 1
                if not done % 8:
                    await asyncio.sleep(0)
        finally:
            runner.watchdog.close()

    async def drain(self, grace: float) -> None:
        """Close, let the running jobs finish (within ``grace`` seconds), then stop the
        lanes: jobs still running after that are cancelled."""
        self.close()
        _, late = await asyncio.wait(self._tasks, timeout=grace) if self._tasks else ((), ())
        for lane in late:
            lane.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
