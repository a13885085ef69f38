"""``pygents-tui demo`` exporting to an OTLP target that is not there, in a real
terminal (tmux): quitting it says so in one line of ours, not in the SDK's ~30 lines
of failed exports, retries and shutdown warnings, some printed after the prompt.

It polls the terminal, as every tmux test does, with a bound on each wait.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from terminal import SCRIPT, terminal

from pygents.redis._server.redis_server import free_port


def test_quitting_a_demo_whose_collector_is_gone_says_so_in_one_line(tmp_path: Path) -> None:
    port = free_port()  # bound, then closed: nothing listens there
    endpoint = f"http://127.0.0.1:{port}"
    exit_file = tmp_path / "exit.txt"
    command = (
        f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint} {shlex.quote(str(SCRIPT))} demo --speed 5"
        f"; echo EXIT:$? > {shlex.quote(str(exit_file))}; sleep 60"
    )
    with terminal("unreachable") as term:
        term.start(command, width=200, height=50)
        term.wait_for("turns done", lambda s: "planner" in s and "done" in s)
        time.sleep(0.3)  # past ESCDELAY, so that `q` is not read as alt+q
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"
        # The exit file is written once the process has ended: all it printed, an
        # export thread's last retry included, is on the screen by now.
        printed = [
            line
            for line in term.run("capture-pane", "-p", "-J", "-t", term.session).splitlines()
            if line.strip() and not line.startswith("EXIT:")
        ]

    assert len(printed) == 1, "\n".join(printed)
    (line,) = printed
    assert line.startswith(f"pygents-tui: telemetry could not be exported to {endpoint}: "), line
    assert "spans not sent" in line
    assert "Traceback" not in line
