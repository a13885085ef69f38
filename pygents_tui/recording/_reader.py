"""Reading a recording: streamed, bounded, and never raising on what it finds.

The file is read a line at a time, each line at most ``max_line`` bytes (longer
ones are skipped and counted without being held), so a replay holds one request
at a time whatever the file's size. Lines that are not OTLP export requests are
counted and skipped; whether one that looks like a request really is one is the
decoder's call (`pygents_tui.listen.decode`), made by the replay.

Seeking uses a sparse index built while reading (`Recording.index`: a byte offset
every ``index_records`` lines or ``index_seconds`` of recording), and beyond what
has been read, a bisection on byte offsets: a recording is written in arrival
order, so its times rise (nearly) with the offset, and a time an hour in is found
in a few dozen reads rather than by reading the hour.
"""

from __future__ import annotations

import bisect
import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final, Self

from pygents_tui.recording._clock import AHEAD, plausible
from pygents_tui.recording._format import Signal, signal_of, time_of

__all__ = ["Line", "Recording", "RecordingError"]

MAX_LINE: Final = 4 * 1024 * 1024  # the receiver's own limit on a request
_SKIP_CHUNK: Final = 64 * 1024
_BISECT_SPAN: Final = 64 * 1024  # bisection stops within this many bytes
_PROBE_LINES: Final = 16  # lines read after a probe offset, looking for a time
_TAIL_BYTES: Final = (64 * 1024, 1024 * 1024, 8 * 1024 * 1024)
_HEAD_BYTES: Final = 4 * MAX_LINE
"""How far into the file opening looks for the first request with a time: a file
with no newline in its first bytes (a disk image, ``/dev/zero`` copied out) is not a
recording, and must not be read to its end to find that out."""


class RecordingError(Exception):
    """The file cannot be read at all; the message is one line, fit to print."""


@dataclass(frozen=True, slots=True)
class Line:
    """One export request as recorded: where it starts, its time (Unix ns; 0 when
    it has none), its signal and its bytes (not decoded)."""

    offset: int
    time_ns: int
    signal: Signal
    data: bytes


class Recording:
    """A recording file open for reading. ``drops`` counts what was skipped:
    ``too_long`` lines and lines that are ``not_otlp``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_line: int = MAX_LINE,
        index_records: int = 1000,
        index_seconds: float = 5.0,
    ) -> None:
        self.path = Path(path)
        # A recording is a regular file: seeking and reading its tail need one. Checked
        # before opening, which blocks on a FIFO until something writes to it; a
        # device (a link to /dev/zero) would be read for ever.
        try:
            _regular(os.stat(self.path).st_mode, self.path)
            self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115  # closed by close()
        except OSError as exc:
            raise RecordingError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        try:
            status = os.fstat(self._file.fileno())
            _regular(status.st_mode, self.path)  # (it may have been replaced since)
            self.size = status.st_size
            self._file.read(0)  # a directory opens on some systems, and fails here
        except (OSError, RecordingError) as exc:
            self._file.close()
            if isinstance(exc, RecordingError):
                raise
            raise RecordingError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        self.max_line = max_line
        self.drops: Counter[str] = Counter()
        self.index: list[tuple[int, int]] = []  # (newest time before offset, offset)
        self._index_records = index_records
        self._index_ns = int(index_seconds * 1e9)
        self._offset = 0
        self._newest = 0  # the newest time read since the last known point
        self._known = True  # whether reading went on from the start or an index point
        self._since_point = 0
        self.first_ns = self._first_time()
        self.last_ns = self._last_time()
        self.rewind()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def offset(self) -> int:
        return self._offset

    # -- reading forward ---------------------------------------------------------------

    def read(self) -> Line | None:
        """The next export request, or ``None`` at the end of the file."""
        while True:
            offset = self._offset
            data = self._raw_line()
            if data is None:
                return None
            if not data or data.isspace():
                continue
            signal = signal_of(data)
            if signal is None:
                self.drops["not_otlp"] += 1
                continue
            time_ns = time_of(data)
            self._note(offset, time_ns)
            return Line(offset, time_ns, signal, data)

    def _raw_line(self, until: int | None = None) -> bytes | None:
        """The next line's bytes (empty: skipped as too long), ``None`` at the end
        (or, with ``until``, once reading passes that offset). Reads at most
        ``max_line`` bytes of a line; the rest of a longer one is read through in
        small chunks and dropped."""
        data = self._file.readline(self.max_line + 1)
        if not data:
            return None
        self._offset += len(data)
        if len(data) <= self.max_line or data.endswith(b"\n"):
            return data
        while True:
            if until is not None and self._offset > until:
                return None
            rest = self._file.readline(_SKIP_CHUNK)
            self._offset += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
        self.drops["too_long"] += 1
        return b""

    def _note(self, offset: int, time_ns: int) -> None:
        """Index ``offset`` when reading has gone on long enough since the last point,
        with the newest time read before it (every line before the point is at most
        that old), then take in this line's time."""
        if self._known:
            self._since_point += 1
            last_time, last_offset = self.index[-1] if self.index else (0, -1)
            due = (
                not self.index
                or self._since_point >= self._index_records
                or (self._newest > 0 and self._newest - last_time >= self._index_ns)
            )
            if due and offset > last_offset:
                self.index.append((self._newest, offset))
                self._since_point = 0
        if time_ns > self._newest:
            self._newest = time_ns

    # -- moving ------------------------------------------------------------------------

    def bookmark(self) -> tuple[int, int, bool, int]:
        """Where reading is, to come back to with `restore` after a look elsewhere."""
        return self._offset, self._newest, self._known, self._since_point

    def restore(self, mark: tuple[int, int, bool, int]) -> None:
        offset, newest, known, since_point = mark
        self._goto(offset, newest, known=known)
        self._since_point = since_point

    def rewind(self) -> None:
        self._goto(0, 0, known=True)

    def seek_time(self, time_ns: int) -> None:
        """Go to a line at or before the first one at ``time_ns``: reading on from
        there finds every request from ``time_ns`` on (those before it, the caller
        skips by their time)."""
        if self.index and self.index[-1][0] >= time_ns:
            # The last point before which every line is older than ``time_ns``.
            at = bisect.bisect_left(self.index, (time_ns, -1)) - 1
            newest, offset = self.index[at] if at >= 0 else (0, 0)
            self._goto(offset, newest, known=True)
            return
        low = self.index[-1][1] if self.index else 0
        low_time = self.index[-1][0] if self.index else 0
        high = self.size
        while high - low > _BISECT_SPAN:
            middle = (low + high) // 2
            probe = self._probe(middle, high)
            if probe is None or probe[1] >= time_ns:
                high = middle
            else:
                low, low_time = probe
        # Past the index, the newest time before ``low`` is not known exactly: the
        # index is extended again only from a point read to from the start.
        self._goto(low, low_time, known=low == (self.index[-1][1] if self.index else 0))

    def seek_offset(self, offset: int) -> None:
        """Go to the first line that starts at or after ``offset``."""
        self._goto(offset, 0, known=False)
        if offset:
            self._raw_line()  # the rest of the line ``offset`` fell in

    def _probe(self, start: int, end: int) -> tuple[int, int] | None:
        """The offset and time of the first line with a time that starts after
        ``start`` (and before ``end``), or ``None``."""
        self.seek_offset(start)
        for _ in range(_PROBE_LINES):
            offset = self._offset
            if offset >= end:
                return None
            data = self._raw_line()
            if data is None:
                return None
            time_ns = time_of(data) if data and signal_of(data) else 0
            if time_ns:
                return offset, time_ns
        return None

    def _goto(self, offset: int, newest: int, *, known: bool) -> None:
        self._file.seek(offset)
        self._offset = offset
        self._newest = newest
        self._known = known
        self._since_point = 0

    # -- the ends, read once on opening --------------------------------------------------

    def _first_time(self) -> int:
        """The time of the first request that has a plausible one (within the first
        lines): not one whose sender's clock is ahead of the requests after it
        (`pygents_tui.recording._clock`)."""
        self._goto(0, 0, known=False)
        times: list[int] = []
        drops = self.drops.copy()  # what reading counts, it counts when it gets there
        for _ in range(1000):
            if self._offset > _HEAD_BYTES or len(times) > AHEAD:
                break
            data = self._raw_line(until=_HEAD_BYTES)
            if data is None:
                break
            time_ns = time_of(data) if data and signal_of(data) else 0
            if time_ns:
                times.append(time_ns)
        self.drops = drops
        return next((t for i, t in enumerate(times) if plausible(t, times[i + 1 :])), 0)

    def _last_time(self) -> int:
        """The newest plausible time among the last complete lines (not one whose
        sender's clock is ahead of the next requests': `pygents_tui.recording._clock`),
        reading the tail only (a larger tail if the last lines have none)."""
        for size in _TAIL_BYTES:
            start = max(self.size - size, 0)
            self._file.seek(start)
            tail = self._file.read(self.size - start)
            lines = tail.split(b"\n")
            if start:
                lines = lines[1:]  # the first piece may be a line's end
            times = [t for t in (time_of(line) for line in lines if signal_of(line)) if t]
            if times:
                later = AHEAD + 1
                return max(t for i, t in enumerate(times) if plausible(t, times[i + 1 : i + later]))
            if not start:
                break
        return self.first_ns


def _regular(mode: int, path: Path) -> None:
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        kind = "a FIFO" if stat.S_ISFIFO(mode) else kind
        kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else kind
        raise RecordingError(f"cannot read {path}: {kind}; a recording is a file")
