"""A real terminal for the dashboard's end-to-end tests: a tmux server of its own.

A terminal gives no signal but its screen, so ``Terminal.wait_for`` polls ``tmux
capture-pane`` every 0.1 s, and every wait has a bound.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

WAIT = 20.0  # seconds, for each thing the test waits for
POLL = 0.1
SCRIPT = Path(sys.executable).parent / "pygents-tui"


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
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.fail("tmux is not installed: this test needs it (apt-get install tmux)")
    assert SCRIPT.exists(), f"no console script at {SCRIPT}; run `uv sync`"
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    socket = Path(tempfile.gettempdir()) / f"pygents-tui-test-{tag}.sock"
    term = Terminal(tmux, socket=socket, session=f"{name}-{tag}")
    try:
        yield term
    finally:
        term.kill()
