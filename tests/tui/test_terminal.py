"""End to end, in a real terminal: ``pygents-tui demo`` under tmux.

This is the one test that runs the installed console script, with a real tty, real key
presses and real time. A terminal gives no signal but its screen, so the test polls
``tmux capture-pane`` every 0.1 s, and every wait has a bound.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

from terminal import POLL, SCRIPT, WAIT, terminal


def done_count(screen: str) -> int | None:
    """The status line's count of completed turns."""
    match = re.search(r"· (\d+) done", screen)
    return int(match.group(1)) if match else None


def test_demo_in_a_real_terminal(tmp_path: Path) -> None:
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} demo --seed 7; "
        f"echo EXIT:$? > {shlex.quote(str(exit_file))}"
    )
    with terminal("demo") as term:
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
        assert term.wait_for_file(exit_file) == "EXIT:0"
