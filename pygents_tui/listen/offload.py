"""Decoding off the event loop: a few worker threads, shared by both transports.

Why: the receiver shares its event loop with the dashboard. A 4 MB OTLP/JSON body
takes seconds to parse (``json_format`` is pure Python), and a dozen gzipped copies
sent at once held a key press for over ten seconds while they were parsed on the
loop. In a worker thread the parse gives the interpreter back to the loop every
switch interval, so the dashboard keeps answering, and the receiver keeps reading
other requests. The workers are few (`Limits.max_concurrent_decodes`): requests
past them wait their turn, their bytes still charged to the in-flight budget, so
what waits is bounded too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["Offload"]

P = ParamSpec("P")
R = TypeVar("R")


class Offload:
    """``await offload.run(function, *args)``: ``function`` in one of ``workers``
    threads, its result (or its exception) back on the loop. The threads start on
    first use and are shut down by `close`."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None

    async def run(self, function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="otlp-decode")
        pool = self._pool
        return await asyncio.get_running_loop().run_in_executor(
            pool, lambda: function(*args, **kwargs)
        )

    def close(self) -> None:
        """Stop the threads once the work they have is done (without waiting for it:
        a decode is bounded, and its result is no longer wanted)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
