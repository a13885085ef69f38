"""Decoding off the event loop: in processes of their own, threads as the fallback.

Why: the receiver shares its process with the dashboard, and decoding holds the
interpreter. A 4 MB OTLP/JSON body takes seconds to parse (protobuf's pure-Python
``json_format``); a dozen gzipped copies sent at once held a key press for over ten
seconds while they were parsed on the loop. Protobuf bodies are quicker, 10 to 30 µs
a span, but at a fleet's 12,000 spans a second that is a quarter of the interpreter:
decoded in threads, it was taken in turns with the dashboard, every turn of the event
loop waited for a decoding thread to let go of it, and a key that travels through a
dozen turns waited for each (W13).

* Lanes: a lane is one process, ``python -m`` this module, that reads requests from
  a pipe, decodes them whole (`decode.decode`) and answers with the `Batch`,
  pickled; unpickling it costs about a fifth of decoding. Each worker thread drives
  a lane of its own, started on its first body, with blocking reads and writes
  (which let go of the interpreter): the event loop sees one result per request, not
  a turn per chunk of the pipe. OTLP/JSON has a thread and a lane of its own, so that
  a long parse never holds protobuf bodies up. Not `multiprocessing`, whose children
  import the parent's main script again. What a lane answers is read only from the
  pipe of a process this module started.
* Threads (`Offload.run`): inflating gzipped bodies, and driving the lanes. When a
  lane cannot start, or dies, its thread decodes the request itself, and its next
  request starts a new process.

A request waiting for a thread keeps its bytes charged to the in-flight budget, so
what waits is bounded too. A caller that goes away (a sender that hung up) does not
cut an exchange short: the thread finishes it, and the lane stays in step.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Final, ParamSpec, TypeVar

from pygents_tui.listen.decode import Batch, Limits, Malformed, Reads, Signal, decode

__all__ = ["Offload"]

P = ParamSpec("P")
R = TypeVar("R")

_REQUEST: Final = struct.Struct(">BBI")  # the signal, OTLP/JSON or not, the body's length
_ANSWER: Final = struct.Struct(">BII")  # the outcome, the values read, the payload's length
_SIGNALS: Final[tuple[Signal, ...]] = ("traces", "logs", "metrics")
_OK, _INVALID, _TOO_LARGE = 0, 1, 2
_STOP_WAIT: Final = 2.0  # seconds a lane's process has to end at the end of its input

_Answer = tuple[int, int, bytes]


class _Lane:
    """One decoding process and its pipe, driven by one thread at a time."""

    def __init__(self, limits: Limits) -> None:
        self._arguments = [sys.executable, "-m", __name__, json.dumps(dataclasses.asdict(limits))]
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # the thread using it, or the one stopping it
        self.closed = False

    @property
    def process_id(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def exchange(self, signal: Signal, body: bytes, json_body: bool) -> _Answer | None:
        """The process's answer for ``body``; None when there is no process to ask
        (it could not start, or died on the way)."""
        with self._lock:
            process = self._started()
            if process is None:
                return None
            stdin, stdout = process.stdin, process.stdout
            assert stdin is not None
            assert stdout is not None
            try:
                stdin.write(_REQUEST.pack(_SIGNALS.index(signal), json_body, len(body)))
                stdin.write(body)
                stdin.flush()
                outcome, read, size = _ANSWER.unpack(_read(stdout, _ANSWER.size))
                return outcome, read, _read(stdout, size)
            except (OSError, ValueError, EOFError, struct.error):  # it died, or was stopped
                self._end(process)
                return None

    def _started(self) -> subprocess.Popen[bytes] | None:
        if self.closed:
            return None
        if self._process is None or self._process.poll() is not None:
            if self._process is not None:  # died between two requests: close its pipes
                self._end(self._process)
                self._process = None
            try:
                self._process = subprocess.Popen(
                    self._arguments,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,  # never onto the dashboard's screen
                    env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                    start_new_session=True,  # ctrl+c is the dashboard's; it ends at EOF
                )
            except OSError:
                self._process = None
            else:
                self._process = self._kept(self._process)
        return self._process

    def _kept(self, process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes] | None:
        """``process``, just started, unless the lane was stopped meanwhile."""
        if self.closed:
            self._end(process)
            return None
        return process

    def stop(self) -> None:
        """End the process: at the end of its input, or killed if it takes longer
        than `_STOP_WAIT` (a thread waiting on its answer gets none)."""
        self.closed = True
        process = self._process
        if process is not None:
            self._end(process)

    def _end(self, process: subprocess.Popen[bytes]) -> None:
        if process.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                process.stdin.close()
        try:
            process.wait(_STOP_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _read(stream: IO[bytes], size: int) -> bytes:
    """Exactly ``size`` bytes; `EOFError` if the stream ends first."""
    data = stream.read(size)
    if len(data) != size:
        raise EOFError
    return data


class Offload:
    """``await offload.decode(signal, body, json_body, reads)``: the `Batch`, decoded
    in a lane (see the module docstring); ``await offload.run(function, *args)``:
    ``function`` in one of ``workers`` threads. The result (or the exception) comes
    back on the loop. Everything starts on first use and is stopped by `close`."""

    def __init__(self, workers: int, limits: Limits) -> None:
        self.workers = max(1, workers)
        self.limits = limits
        self._threads: ThreadPoolExecutor | None = None
        self._json_thread: ThreadPoolExecutor | None = None
        self._json = _Lane(limits)
        self._lanes: list[_Lane] = []  # one per worker thread that decoded protobuf
        self._lane = threading.local()
        self._closed = False

    @property
    def process_id(self) -> int | None:
        """The OTLP/JSON lane's process id while it runs (None before the first JSON
        body)."""
        return self._json.process_id

    @property
    def process_ids(self) -> list[int]:
        """The protobuf lanes' process ids, of those that run."""
        return [pid for lane in list(self._lanes) if (pid := lane.process_id) is not None]

    async def run(self, function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self._closed:
            raise Malformed("the receiver is stopping; retry")
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="otlp-decode")
        pool = self._threads
        return await asyncio.get_running_loop().run_in_executor(
            pool, lambda: function(*args, **kwargs)
        )

    async def decode(self, signal: Signal, body: bytes, json_body: bool, reads: Reads) -> Batch:
        """``body`` decoded as `decode.decode` does, what it read spent from ``reads``;
        `Malformed` as that raises it."""
        if not json_body:
            return await self.run(self._decode, signal, body, False, reads)
        if self._closed:
            raise Malformed("the receiver is stopping; retry")
        if self._json_thread is None:
            self._json_thread = ThreadPoolExecutor(1, thread_name_prefix="otlp-json")
        pool = self._json_thread
        return await asyncio.get_running_loop().run_in_executor(
            pool, self._decode, signal, body, True, reads
        )

    def _decode(self, signal: Signal, body: bytes, json_body: bool, reads: Reads) -> Batch:
        """In a worker thread: ask its lane; decode here if there is none."""
        lane = self._json if json_body else self._thread_lane()
        answer = lane.exchange(signal, body, json_body)
        if answer is None:
            if self._closed:
                raise Malformed("the receiver is stopping; retry")
            return decode(signal, body, json_body=json_body, limits=self.limits, reads=reads)
        outcome, read, payload = answer
        reads.left -= read
        if outcome != _OK:
            text = payload.decode(errors="replace")
            raise Malformed(text, "too_large") if outcome == _TOO_LARGE else Malformed(text)
        batch: Batch = pickle.loads(payload)
        return batch

    def _thread_lane(self) -> _Lane:
        lane: _Lane | None = getattr(self._lane, "lane", None)
        if lane is None:
            lane = self._lane.lane = _Lane(self.limits)
            self._lanes.append(lane)
            lane.closed = self._closed
        return lane

    async def close(self) -> None:
        """Stop the processes (an exchange under way gets no answer, and its request
        is refused as the receiver stopping), and the threads once the work they
        have is done (without waiting for it: a decode is bounded, its result no
        longer wanted)."""
        self._closed = True
        lanes = [self._json, *self._lanes]

        def stop() -> None:
            for lane in lanes:
                lane.stop()

        await asyncio.get_running_loop().run_in_executor(None, stop)
        for pool in (self._threads, self._json_thread):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._threads = self._json_thread = None


def _answer(signal: Signal, body: bytes, json_body: bool, limits: Limits) -> _Answer:
    reads = Reads(limits.max_reads_per_request)
    try:
        batch = decode(signal, body, json_body=json_body, limits=limits, reads=reads)
    except Malformed as exc:
        outcome = _TOO_LARGE if exc.status == "too_large" else _INVALID
        return outcome, limits.max_reads_per_request - reads.left, str(exc).encode()
    except Exception as exc:  # a decoding bug: this request fails, the lane goes on
        text = f"the {signal} request could not be decoded ({type(exc).__name__})"
        return _INVALID, limits.max_reads_per_request - reads.left, text.encode()
    payload = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
    return _OK, limits.max_reads_per_request - reads.left, payload


def _serve(limits: Limits) -> None:
    """A lane's process: requests from stdin, answers to stdout, until stdin ends."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while header := source.read(_REQUEST.size):
        if len(header) < _REQUEST.size:
            return
        signal, json_body, size = _REQUEST.unpack(header)
        body = source.read(size)
        outcome, read, payload = _answer(_SIGNALS[signal], body, bool(json_body), limits)
        sink.write(_ANSWER.pack(outcome, max(0, read), len(payload)))
        sink.write(payload)
        sink.flush()


if __name__ == "__main__":
    _serve(Limits(**json.loads(sys.argv[1])))
