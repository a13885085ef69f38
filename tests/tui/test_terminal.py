"""End to end, in a real terminal: ``pygents-tui demo`` under tmux.

This is the one test that runs the installed console script, with a real tty, real key
presses and real time. A terminal gives no signal but its screen, so the test polls
``tmux capture-pane`` every 0.1 s, and every wait has a bound.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
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


def done_count(screen: str) -> int | None:
    """The status line's count of completed turns."""
    match = re.search(r"· (\d+) done", screen)
    return int(match.group(1)) if match else None


def test_demo_in_a_real_terminal(tmp_path: Path) -> None:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.fail("tmux is not installed: this test needs it (apt-get install tmux)")
    assert SCRIPT.exists(), f"no console script at {SCRIPT}; run `uv sync`"
    exit_file = tmp_path / "exit.txt"
    tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    socket = Path(tempfile.gettempdir()) / f"pygents-tui-test-{tag}.sock"
    term = Terminal(tmux, socket=socket, session=f"demo-{tag}")
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} demo --seed 7; "
        f"echo EXIT:$? > {shlex.quote(str(exit_file))}"
    )
    try:
        term.start(command)

        # Drawn: the demo's agents are listed.
        term.wait_for(
            "the agents table", lambda s: "planner" in s and "fetcher-1" in s and "done" in s
        )
        # Live: the status line's count of completed turns goes up.
        first = done_count(term.screen())
        assert first is not None
        term.wait_for(
            f"more than {first} done turn(s)",
            lambda s: (done_count(s) or 0) > first,
        )

        term.keys("?")
        term.wait_for("the help screen", lambda s: "pygents-tui — keys" in s)
        term.keys("Escape")
        term.wait_for(
            "the help screen to close",
            lambda s: "pygents-tui — keys" not in s and "planner" in s,
        )

        time.sleep(0.3)  # past ESCDELAY, so that `q` is not read as alt+q
        term.keys("q")
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not exit_file.exists():
            time.sleep(POLL)
        assert exit_file.exists(), f"pygents-tui did not exit on q; the screen:\n{term.screen()}"
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not exit_file.read_text().strip():
            time.sleep(POLL)
        assert exit_file.read_text().strip() == "EXIT:0"
    finally:
        term.kill()
