"""A real terminal for the dashboard's end-to-end tests: a tmux server of its own.

A terminal gives no signal but its screen, so ``Terminal.wait_for`` polls ``tmux
capture-pane`` every 0.1 s, and every wait has a bound.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pygents.redis._server.redis_server import free_port as free_port  # one port picker
from system_programs import require

WAIT = 20.0  # seconds, for each thing the test waits for
POLL = 0.1
SCRIPT = Path(sys.executable).parent / "pygents-tui"
ANSI = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])")


class Terminal:
    """A tmux session on a server of its own (its own socket), so that the test never
    touches the user's tmux."""

    def __init__(self, tmux: str, socket: Path, session: str) -> None:
        self.tmux = tmux
        self.socket = socket
        self.session = session

    def run(self, *args: str) -> str:
        result = subprocess.run(
            [self.tmux, "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def start(self, command: str, width: int = 100, height: int = 30) -> None:
        self.run(
            "new-session",
            "-d",
            "-s",
            self.session,
            "-x",
            str(width),
            "-y",
            str(height),
            "-e",
            "TERM=xterm-256color",
            "-e",
            "TEXTUAL_ANIMATIONS=none",
            command,
        )

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def wait_for(self, what: str, predicate: Callable[[str], bool]) -> str:
        """Poll the screen until ``predicate(screen)`` holds; the screen it held on."""
        deadline = time.monotonic() + WAIT
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(POLL)
        raise AssertionError(f"after {WAIT:g} s, still waiting for {what}; the screen:\n{screen}")

    def kill(self) -> None:
        subprocess.run(
            [self.tmux, "-S", str(self.socket), "kill-server"],
            capture_output=True,
            timeout=10,
            check=False,
        )
        self.socket.unlink(missing_ok=True)

    def wait_for_file(self, path: Path) -> str:
        """Wait until ``path`` exists and has text; that text."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if path.exists() and path.read_text().strip():
                return path.read_text().strip()
            time.sleep(POLL)
        raise AssertionError(f"after {WAIT:g} s, no {path.name}; the screen:\n{self.screen()}")


@contextmanager
def terminal(name: str) -> Iterator[Terminal]:
    """A fresh tmux server for one test, killed afterwards."""
    require("tmux")
    tmux = shutil.which("tmux")
    assert tmux is not None
    assert SCRIPT.exists(), f"no console script at {SCRIPT}; run `uv sync`"
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    socket = Path(tempfile.gettempdir()) / f"pygents-tui-test-{tag}.sock"
    term = Terminal(tmux, socket=socket, session=f"{name}-{tag}")
    try:
        yield term
    finally:
        term.kill()


class PtyProcess:
    """A process whose standard output and error are a pseudo-terminal (80x24), as
    the dashboard needs, and whose standard input is ``/dev/null``: no key reaches
    it. A thread keeps reading what it writes, so that it never blocks on a full
    terminal; `finish` waits (bounded) and returns its status and output."""

    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        master, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=cwd
            )
        finally:
            os.close(follower)
        self._master = master
        self._output = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                return
            if not data:
                return
            self._output += data

    def finish(self, timeout: float = WAIT) -> tuple[int, str]:
        """Wait for the process to end; its exit status and everything it wrote."""
        try:
            status = self.process.wait(timeout=timeout)
            self._reader.join(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            os.close(self._master)
        return status, self._output.decode(errors="replace")


def run_in_pty(argv: list[str], cwd: Path | None = None) -> tuple[int, str]:
    """Run ``argv`` on a pseudo-terminal (see `PtyProcess`); its status and output."""
    return PtyProcess(argv, cwd).finish()


def said(output: str) -> list[str]:
    """The lines written after the dashboard's last drawing (its escape codes)."""
    assert "Traceback" not in output, output
    return ANSI.split(output)[-1].splitlines()
