"""What the program prints while the dashboard owns the terminal.

Textual takes ``sys.stdout`` and ``sys.stderr`` over while it runs, so a ``print()``
would be lost. The dashboard captures it instead: its last lines for the Output panel,
and all of it, in order, for `ProgramOutput.replay`, which writes it to the real
streams once the terminal is back. The full text is spooled: kept in memory up to a
megabyte, then in a temporary file, and past `KEPT` bytes only counted.
"""

from __future__ import annotations

import struct
import sys
import tempfile
import weakref
from collections import deque
from typing import Final, TextIO

from pygents_tui.text._preview import preview

__all__ = ["ProgramOutput"]

IN_MEMORY: Final = 1 << 20  # bytes spooled in memory before a temporary file takes over
KEPT: Final = 256 << 20  # bytes kept for the replay; past this, counted only
LINES: Final = 1000  # lines kept for the Output panel
LINE_WIDTH: Final = 1000  # characters per line in the panel
_HEADER = struct.Struct("<?I")  # stderr?, length of the chunk that follows


class ProgramOutput:
    """Captured writes to stdout and stderr: the panel's last lines, and the replay."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=LINES)
        self.total_lines = 0  # lines ever completed, for the panel to know what is new
        self.unkept = 0  # bytes past `KEPT`, not replayed
        # Opened by the first write, for as long as the dashboard runs; `replay` closes
        # it, and so does the collection of this object if nobody replays it.
        self._spool: tempfile.SpooledTemporaryFile[bytes] | None = None
        self._replayed = False
        self._kept = 0
        self._partial = {False: "", True: ""}  # per stream: the line not yet ended

    def write(self, text: str, stderr: bool = False) -> None:
        """Record ``text`` as written to stdout (or stderr)."""
        if not text:
            return
        self._keep(text, stderr)
        pending = self._partial[stderr] + text
        *complete, self._partial[stderr] = pending.split("\n")
        if len(self._partial[stderr]) > LINE_WIDTH:  # no newline in sight: show it now
            complete.append(self._partial[stderr])
            self._partial[stderr] = ""
        for line in complete[-LINES:]:
            self.lines.append(preview(line, LINE_WIDTH))
        self.total_lines += len(complete)

    def _keep(self, text: str, stderr: bool) -> None:
        if self._replayed:
            return
        spool = self._spool
        if spool is None:
            spool = self._spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)  # noqa: SIM115
            weakref.finalize(self, spool.close)
        data = text.encode("utf-8", "replace")
        if self._kept + len(data) > KEPT:
            self.unkept += len(data)
            return
        spool.write(_HEADER.pack(stderr, len(data)))
        spool.write(data)
        self._kept += len(data)

    def replay(self, stdout: TextIO | None = None, stderr: TextIO | None = None) -> None:
        """Write everything captured to ``stdout`` and ``stderr`` (the process's own by
        default), in the order it was written; once."""
        if self._replayed:
            return
        self._replayed = True
        spool, self._spool = self._spool, None
        streams = {False: stdout or sys.stdout, True: stderr or sys.stderr}
        if spool is not None:
            with spool:
                spool.seek(0)
                while header := spool.read(_HEADER.size):
                    to_stderr, size = _HEADER.unpack(header)
                    stream = streams[to_stderr]
                    stream.write(spool.read(size).decode("utf-8", "replace"))
                    stream.flush()  # the two streams may share a terminal: keep the order
        if self.unkept:
            streams[True].write(f"pygents-tui: {self.unkept} more byte(s) of output not kept\n")
