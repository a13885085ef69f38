"""``pygents-tui demo --record FILE`` in a real terminal (tmux): the demo's spans
and live records are written in the OTLP/JSON file format as it runs, and the file
replays into the fleet dashboard with the demo's agents and their turns.

It polls the terminal, as every tmux test does (a terminal gives no other signal),
with a bound on each wait.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from fake_clock import FakeClock
from terminal import SCRIPT, terminal

from pygents_tui.cli.replay import open_replay


def test_a_recorded_demo_replays_with_its_agents_and_turns(tmp_path: Path) -> None:
    recording = tmp_path / "demo.jsonl"
    exit_file = tmp_path / "exit.txt"
    command = (
        f"{shlex.quote(str(SCRIPT))} demo --seed 7 --speed 5 --record {shlex.quote(str(recording))}"
        f"; echo EXIT:$? > {shlex.quote(str(exit_file))}; sleep 60"
    )
    with terminal("record") as term:
        term.start(command)
        term.wait_for("turns done", lambda s: "planner" in s and "fetcher-1" in s and "done" in s)
        term.wait_for("the first recorded requests", lambda s: recording.exists())
        time.sleep(0.3)  # past ESCDELAY, so that `q` is not read as alt+q
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"
        # The one line said once the terminal is back (the path may wrap).
        said = " ".join(term.screen().split())
        assert "pygents-tui: recorded " in said
        assert "not recorded" not in said

    with open_replay(str(recording), clock=FakeClock(0.0)) as view:
        view.replay.seek(view.replay.end_ns)
        view.store.drain()
        agents = {row.label.rsplit("/", 1)[-1] for row in view.store.agent_rows()}
        assert {"planner", "fetcher-1"} <= agents  # the ones the live screen showed
        assert len(view.store.recent_turns()) > 0
        assert not view.store.counters().get("malformed")
        (service,) = {row.label.split("@", 1)[0] for row in view.store.agent_rows()}
        assert service == "pygents-tui demo"
