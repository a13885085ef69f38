"""Decoding off the event loop: a few worker threads, and one process for OTLP/JSON.

Why: the receiver shares its event loop with the dashboard. A 4 MB OTLP/JSON body
takes seconds to parse, and a dozen gzipped copies sent at once held a key press for
over ten seconds while they were parsed on the loop.

* Threads (`Offload.run`): inflating and decoding protobuf. Inflating lets go of
  the interpreter; decoding is bounded by the reading budget. A few at once
  (`Limits.max_concurrent_decodes`): more would only compete with the loop.
* One process (`Offload.transcode`): OTLP/JSON into protobuf bytes
  (`decode.transcode_json`). That parse is pure Python (``json_format``) and long:
  in a thread it holds the interpreter the loop needs (a bare loop measured 100
  heartbeats in the time it otherwise runs 1,300), in a process of its own it runs
  beside the loop, on another core. Bytes cross over a pipe, one request at a time,
  so JSON bodies take one core at most. The process is ``python -m`` this module,
  started on the first JSON request: not `multiprocessing`, whose children import
  the parent's main script again. If it cannot start, or dies, the request is
  transcoded in a thread instead and the next one starts a new process.

Requests past the workers wait their turn, their bytes still charged to the
in-flight budget, so what waits is bounded too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import struct
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

from pygents_tui.listen.decode import Limits, Malformed, Signal, transcode_json

__all__ = ["Offload"]

P = ParamSpec("P")
R = TypeVar("R")

_HEADER: Final = struct.Struct(">BI")  # a signal or an outcome, and a length
_SIGNALS: Final[tuple[Signal, ...]] = ("traces", "logs", "metrics")
_OK, _INVALID, _TOO_LARGE = 0, 1, 2


class Offload:
    """``await offload.run(function, *args)``: ``function`` in one of ``workers``
    threads; ``await offload.transcode(signal, body)``: an OTLP/JSON body as protobuf
    bytes, from the JSON process. The result (or the exception) comes back on the
    loop. Both start on first use and are stopped by `close`."""

    def __init__(self, workers: int, limits: Limits) -> None:
        self.workers = max(1, workers)
        self.limits = limits
        self._threads: ThreadPoolExecutor | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._turn = asyncio.Lock()
        self._closed = False

    @property
    def process_id(self) -> int | None:
        """The JSON process's id while it runs (None before the first JSON body)."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    async def run(self, function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self._closed:
            raise Malformed("the receiver is stopping; retry")
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="otlp-decode")
        pool = self._threads
        return await asyncio.get_running_loop().run_in_executor(
            pool, lambda: function(*args, **kwargs)
        )

    async def transcode(self, signal: Signal, body: bytes) -> bytes:
        """`transcode_json` of ``body`` in the JSON process (in a thread if it cannot
        run there); `Malformed` as that raises it."""
        async with self._turn:  # one request at a time on the pipe
            process = await self._started()
            if process is not None:
                try:
                    return await _exchange(process, signal, body)
                except Malformed:
                    raise
                except BaseException as exc:  # cancelled mid-way, or the process died
                    await self._stop_process()
                    if not isinstance(exc, (OSError, asyncio.IncompleteReadError)):
                        raise
        return await self.run(transcode_json, signal, body, self.limits)

    async def _started(self) -> asyncio.subprocess.Process | None:
        if self._closed:
            return None
        if self._process is None or self._process.returncode is not None:
            limits = self.limits
            sizes = (limits.max_message_bytes, limits.max_items_per_request)
            try:
                self._process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    __name__,
                    *map(str, (*sizes, limits.max_reads_per_request)),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,  # never onto the dashboard's screen
                    env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                    start_new_session=True,  # ctrl+c is the dashboard's; it ends at EOF
                )
            except OSError:
                self._process = None
        return self._process

    async def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the process ends at the end of its input
        try:
            async with asyncio.timeout(2.0):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def close(self) -> None:
        """Stop the process, and the threads once the work they have is done
        (without waiting for it: a decode is bounded, its result no longer wanted)."""
        self._closed = True
        await self._stop_process()
        threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)


async def _exchange(process: asyncio.subprocess.Process, signal: Signal, body: bytes) -> bytes:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(_HEADER.pack(_SIGNALS.index(signal), len(body)) + body)
    await process.stdin.drain()
    outcome, size = _HEADER.unpack(await process.stdout.readexactly(_HEADER.size))
    payload = await process.stdout.readexactly(size)
    if outcome == _OK:
        return payload
    text = payload.decode(errors="replace")
    raise Malformed(text, "too_large") if outcome == _TOO_LARGE else Malformed(text)


def _serve(limits: Limits) -> None:
    """The JSON process: requests from stdin, answers to stdout, until stdin ends."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while header := source.read(_HEADER.size):
        if len(header) < _HEADER.size:
            return
        signal, size = _HEADER.unpack(header)
        body = source.read(size)
        try:
            outcome, payload = _OK, transcode_json(_SIGNALS[signal], body, limits)
        except Malformed as exc:
            outcome = _TOO_LARGE if exc.status == "too_large" else _INVALID
            payload = str(exc).encode()
        sink.write(_HEADER.pack(outcome, len(payload)) + payload)
        sink.flush()


if __name__ == "__main__":
    message_bytes, items, reads = map(int, sys.argv[1:4])
    _serve(
        Limits(
            max_message_bytes=message_bytes,
            max_items_per_request=items,
            max_reads_per_request=reads,
        )
    )
