"""``pygents-tui demo --record FILE`` in a real terminal (tmux): the demo's spans
and live records are written in the OTLP/JSON file format as it runs, and the file
replays into the fleet dashboard with the demo's agents and their turns.

It polls the terminal, as every tmux test does (a terminal gives no other signal),
with a bound on each wait.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

from fake_clock import FakeClock
from terminal import SCRIPT, terminal

from pygents_tui.cli.replay import open_replay
from pygents_tui.feeders import ReplayView

DEMO_ENDED = Path(__file__).with_name("demo_ended.py")


def played_to_the_end(view: ReplayView, clock: FakeClock) -> None:
    """Play the whole recording, at the top speed, as the dashboard's timer would."""
    view.replay.set_speed(100)
    clock.advance(10**6)
    for _ in range(100_000):
        view.store.drain()
        if view.replay.ended and not view.model.backlog:
            return
    raise AssertionError("the replay never reached the end of the recording")


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
        assert "it ends where the dashboard did" in said

    with open_replay(str(recording), clock=FakeClock(0.0)) as view:
        view.replay.seek(view.replay.end_ns)
        view.store.drain()
        agents = {row.label.rsplit("/", 1)[-1] for row in view.store.agent_rows()}
        assert {"planner", "fetcher-1"} <= agents  # the ones the live screen showed
        assert len(view.store.recent_turns()) > 0
        assert not view.store.counters().get("malformed")
        (service,) = {row.label.split("@", 1)[0] for row in view.store.agent_rows()}
        assert service == "pygents-tui demo"

    # The demo cancels no turn: only quitting does, which the screen never showed.
    clock = FakeClock(0.0)
    with open_replay(str(recording), clock=clock) as view:
        played_to_the_end(view, clock)
        cancelled = {row.name: row.cancelled for row in view.store.agent_rows()}
        assert set(cancelled.values()) == {0}, cancelled


def test_a_recorded_demo_replays_to_the_counts_the_dashboard_ended_on(tmp_path: Path) -> None:
    """Every agent's completed, failed, timed-out and cancelled turns and its values,
    and the turns still running, as the live dashboard had them when it ended (it
    read planner 13/0/0 Values 0, its replay 13/0/0 ⊘1 Values 13)."""
    recording = tmp_path / "demo.jsonl"
    child = subprocess.run(
        [sys.executable, str(DEMO_ENDED), str(recording)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    live = json.loads(child.stdout.splitlines()[-1])
    assert live["running"], "the scene has turns running as the dashboard ends"
    assert live["agents"]["planner"][4] == 0  # it returns turns: no values
    assert live["agents"]["fetcher-1"][4] > 0  # it streams pages

    clock = FakeClock(0.0)
    with open_replay(str(recording), clock=clock) as view:
        played_to_the_end(view, clock)
        store = view.store
        replayed = {
            row.name: [row.completed, row.failed, row.timed_out, row.cancelled, row.values]
            for row in store.agent_rows()
        }
        assert replayed == live["agents"]
        assert sorted(turn.uuid for turn in store.running_turns()) == live["running"]
        assert not store.counters().get("malformed")
