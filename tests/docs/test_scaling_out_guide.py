"""The scaling-out guide's programs, saved and run the way the guide says, against a
real ``redis-server`` (docs/guides/scaling-out.md, "One machine").

The page's named blocks (``# clerk_tools.py``, ``# clerk.py``, ``# producer.py``) are
written to a folder of their own; its console blocks are run there as written: a
worker in the background, the producer, and ``pygents-tui run clerk.py`` in a real
terminal (tmux), where the clerk's row must show its mailbox and workers.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_blocks import ROOT, blocks, named_files, reader_environment
from terminal import WAIT, Terminal, terminal

from pygents.redis import RedisServer
from system_programs import require

GUIDE = ROOT / "docs" / "guides" / "scaling-out.md"
RUN = "pygents-tui run clerk.py"


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    require("redis-server")
    directory = tmp_path / "redis"
    directory.mkdir()
    with RedisServer(directory) as server:
        yield server.url


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The guide's files, saved as a reader would."""
    saved = tmp_path / "clerk"
    saved.mkdir()
    files = named_files(GUIDE)
    assert set(files) == {"clerk_tools.py", "clerk.py", "producer.py"}
    for name, code in files.items():
        (saved / name).write_text(code)
    return saved


def _console(*commands: str) -> list[str]:
    """The console block of the guide that holds exactly ``commands``."""
    for block in blocks(GUIDE):
        lines = [line.strip() for line in block.code.strip().splitlines()]
        if block.language == "console" and lines == list(commands):
            return lines
    raise AssertionError(f"{GUIDE.name} no longer shows a console block {commands}")


class Background:
    """``command &``: started in a session of its own, so that every process it
    started is stopped with it, whatever happens in the test."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", f"exec {command}"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, as a reader would; its exit status and what it wrote on stderr."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            _, err = self.process.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate()
            raise AssertionError(f"the worker did not stop within {WAIT:g} s of Ctrl-C") from None
        return self.process.returncode, err


def test_the_guides_worker_serves_the_guides_producer(folder: Path, redis_url: str) -> None:
    started, produce = _console("python clerk.py &", "python producer.py")
    env = reader_environment(REDIS_URL=redis_url)  # as the guide says to set it
    worker = Background(started.removesuffix("&").strip(), folder, env)
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", produce],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert worker.process.poll() is None, worker.process.communicate()[1]
    finally:
        status, err = worker.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "HELLO\n"
    assert "Traceback" not in done.stderr, done.stderr
    assert "producer.py` prints `HELLO`" in GUIDE.read_text()  # what the page promises
    # Ctrl-C stops the worker the way clerk.py says: it finishes and returns.
    assert status == 0, err
    assert "Traceback" not in err, err


def test_the_dashboard_runs_the_guides_worker_and_shows_its_mailbox(
    folder: Path, redis_url: str
) -> None:
    (command,) = _console(RUN)
    env = reader_environment(REDIS_URL=redis_url)  # as the guide says to set it
    with terminal("guide") as term:
        # Exactly the reader's environment (the tmux server would pass on the test's
        # own), but the pane's terminal type; COLUMNS and LINES, which would override
        # the terminal's size, are left out.
        settings = " ".join(
            shlex.quote(f"{key}={value}")
            for key, value in env.items()
            if key not in ("COLUMNS", "LINES", "TERM")
        )
        term.start(
            f'cd {shlex.quote(str(folder))} && exec env -i TERM="$TERM" '
            f"TEXTUAL_ANIMATIONS=none {settings} {command}",
            width=140,  # room for the Mailbox column after the 80-column layout
        )
        # The clerk's row, with its Mailbox cell: depth 0, one live worker (this one).
        screen = term.wait_for(
            "the clerk's row with its mailbox",
            lambda text: re.search(r"clerk.*\b0 · 1w\b", text) is not None,
        )
        assert "Mailbox" in screen
        term.keys("q")
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and _alive(term):
            time.sleep(0.1)
        assert not _alive(term), f"pygents-tui did not quit on q:\n{term.screen()}"


def _alive(term: Terminal) -> bool:
    """Whether the terminal's session (the dashboard) is still running."""
    try:
        term.run("has-session", "-t", term.session)
    except AssertionError:
        return False
    return True
