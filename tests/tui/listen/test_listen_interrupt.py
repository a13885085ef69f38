"""Ctrl-C (SIGINT) at each point of ``pygents-tui listen``'s start-up ends it with one
line and exit status 130: while its modules import, while the receiver starts, as
the dashboard mounts, and once it is drawn. Before, the first second gave a
traceback of whichever import it fell in, and a dashboard cancelled as it mounted
printed Textual's.

A real ``pygents-tui listen`` on a pseudo-terminal; each point is a condition the
test waits on (bounded), not a delay: a shared library the point's imports map into
the process, the HTTP port accepting connections, the title on the screen."""

from __future__ import annotations

import importlib.util
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from terminal import POLL, SCRIPT, WAIT, PtyProcess, free_port, said


def _library(module: str) -> str | None:
    """The file name of ``module`` where it is a shared library (on some Pythons the
    standard library's are built in)."""
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    return Path(origin).name if origin is not None and origin.endswith(".so") else None


def _mapped(name: str) -> Callable[[PtyProcess, int], bool]:
    def holds(running: PtyProcess, port: int) -> bool:
        try:
            return name in Path(f"/proc/{running.process.pid}/maps").read_text()
        except OSError:  # it has exited already
            return True

    return holds


def _bound(running: PtyProcess, port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return running.process.poll() is not None
    return True


def _drawn(running: PtyProcess, port: int) -> bool:
    return f"HTTP 127.0.0.1:{port}".encode() in bytes(running._output)


_RE2, _GRPC = _library("re2._re2"), _library("grpc._cython.cygrpc")
assert _RE2 is not None  # both are third-party extensions: always shared libraries
assert _GRPC is not None

POINTS: dict[str, Callable[[PtyProcess, int], bool]] = {
    "importing the dashboard (re2)": _mapped(_RE2),
    "importing the listen extra (grpcio)": _mapped(_GRPC),
    "the receiver started, the dashboard not yet": _bound,
    "the dashboard drawn": _drawn,
}
_ASYNCIO = _library("_asyncio")
if _ASYNCIO is not None:  # the first thing the command imports: pygents, and asyncio
    POINTS = {"importing pygents (asyncio)": _mapped(_ASYNCIO), **POINTS}


@pytest.mark.parametrize("point", list(POINTS))
def test_sigint_at_each_point_of_the_start_is_one_line_and_exit_130(
    point: str, tmp_path: Path
) -> None:
    port = free_port()
    running = PtyProcess(
        [str(SCRIPT), "listen", "--grpc-port", "0", "--http-port", str(port)], cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + WAIT
        while not POINTS[point](running, port):
            assert time.monotonic() < deadline, f"listen never reached {point}"
            time.sleep(POLL / 100)
        running.process.send_signal(signal.SIGINT)
    finally:
        status, output = running.finish()
    assert status == 130, output[-2000:]
    assert "never awaited" not in output
    assert "Error" not in output
    assert said(output) == ["pygents-tui: interrupted"]
