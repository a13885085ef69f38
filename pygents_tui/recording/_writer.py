"""Writing a recording: one OTLP/JSON export request per line, off the event loop.

`RecordWriter.record` only queues what it is given (cheap: the receiver calls it
for every request it accepted); a thread turns each request into one OTLP/JSON
line and appends it. What waits is bounded in bytes: past ``max_pending`` bytes a
request is dropped and counted, never held. A file that cannot be written (a full
disk, a removed directory, no permission) stops the recording with one line in
``error``, and what follows is counted as dropped; the receiver and the dashboard
carry on either way. `RecordWriter.end` ends the recording early (where the dashboard
ended): what comes after is left out, and counted apart (``after_end``).

Protobuf requests are converted with ``google.protobuf.json_format`` in OTLP/JSON's
terms: lowerCamelCase names, enums as integers, 64-bit integers as strings (which
OTLP/JSON readers accept), and trace and span ids as hex, where protobuf's own
mapping would write base64.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Final

from google.protobuf import json_format  # type: ignore[import-untyped]  # no stubs installed
from google.protobuf.message import Message  # type: ignore[import-untyped]  # no stubs installed
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from pygents_tui.recording._format import Signal
from pygents_tui.text._plural import counted

__all__ = ["RecordWriter", "to_json_line"]

_IDS: Final = frozenset(("traceId", "spanId", "parentSpanId"))
_ID_DEPTH: Final = 12  # ids sit at most this deep in an export request
_REQUESTS: Final[dict[Signal, type[Message]]] = {
    "traces": trace_service_pb2.ExportTraceServiceRequest,
    "logs": logs_service_pb2.ExportLogsServiceRequest,
    "metrics": metrics_service_pb2.ExportMetricsServiceRequest,
}


def to_json_line(message: Message) -> bytes:
    """One export request (a protobuf message) as an OTLP/JSON line."""
    document = json_format.MessageToDict(message, use_integers_for_enums=True)
    _ids_to_hex(document, 0)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _ids_to_hex(node: Any, depth: int) -> None:
    if depth > _ID_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            _ids_to_hex(item, depth + 1)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in _IDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            elif isinstance(value, (dict, list)):
                _ids_to_hex(value, depth + 1)


def _json_line(body: bytes) -> bytes:
    """An OTLP/JSON request body, already in the format, made one compact line."""
    return json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


class RecordWriter:
    """Appends requests to ``path`` from a thread; see the module docstring.
    ``written``, ``dropped`` and ``error`` say how it went."""

    def __init__(self, path: str | os.PathLike[str], *, max_pending: int = 64 * 1024 * 1024):
        self.path = Path(path)
        self._file = open(self.path, "ab")  # noqa: SIM115  # closed by the thread
        self.max_pending = max_pending
        self.written = 0
        self.dropped: Counter[str] = Counter()
        self.error: str | None = None
        self.ended = False
        self.after_end = 0  # requests given after `end`, left out
        self._pending = 0
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[Signal, Any, int] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="pygents-tui record", daemon=True)
        self._thread.start()

    # -- any thread ------------------------------------------------------------------------

    def record(self, signal: Signal, request: Message | bytes, *, json_body: bool = False) -> None:
        """Queue one request (a protobuf message, or a body as received: protobuf
        bytes, or OTLP/JSON with ``json_body``). Never blocks, never raises."""
        size = request.ByteSize() if isinstance(request, Message) else len(request)
        with self._lock:
            if self.ended:
                self.after_end += 1
                return
            if self.error is not None or self._pending + size > self.max_pending:
                self.dropped["unwritten" if self.error is not None else "backlog"] += 1
                return
            self._pending += size
        self._queue.put((signal, (request, json_body), size))

    def end(self) -> None:
        """End the recording here: what was given so far is written, anything given
        later is left out (counted in ``after_end``). `close` still closes the file."""
        with self._lock:
            self.ended = True

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds) and close the file."""
        self._queue.put(None)
        self._thread.join(timeout)

    def summary(self) -> str:
        """One line on how the recording went, for the terminal after the dashboard."""
        dropped = sum(self.dropped.values())
        line = f"recorded {counted(self.written, 'request')} to {self.path}"
        if dropped:
            line += f", {dropped:,} not recorded"
        if self.error is not None:
            line += f" (the recording stopped: {self.error})"
        if self.after_end:  # (what the workload did as it was stopped: not shown either)
            more = counted(self.after_end, "request")
            line += f"; it ends where the dashboard did ({more} sent after that left out)"
        return line

    # -- the writer thread -----------------------------------------------------------------

    def _run(self) -> None:
        try:
            while (item := self._queue.get()) is not None:
                signal, (request, json_body), size = item
                try:
                    self._write(signal, request, json_body)
                finally:
                    with self._lock:
                        self._pending -= size
        finally:
            self._close_file()

    def _write(self, signal: Signal, request: Message | bytes, json_body: bool) -> None:
        if self.error is not None:
            self.dropped["unwritten"] += 1
            return
        try:
            line = self._line(signal, request, json_body)
        except Exception:  # the receiver decoded it; anything odd is just not recorded
            self.dropped["unconvertible"] += 1
            return
        try:
            self._file.write(line)
            self._file.flush()  # a recording is readable (and replayable) while it grows
        except OSError as exc:
            with self._lock:
                self.error = f"{exc.strerror or exc}"
            self.dropped["unwritten"] += 1
            return
        self.written += 1

    @staticmethod
    def _line(signal: Signal, request: Message | bytes, json_body: bool) -> bytes:
        if isinstance(request, Message):
            return to_json_line(request)
        if json_body:
            return _json_line(request)
        message = _REQUESTS[signal]()
        message.ParseFromString(request)
        return to_json_line(message)

    def _close_file(self) -> None:
        try:
            self._file.close()
        except OSError as exc:  # the last flush can fail on a full disk too
            with self._lock:
                if self.error is None:
                    self.error = f"{exc.strerror or exc}"
