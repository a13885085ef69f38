"""``pygents-tui replay``'s dashboard under Pilot: its keys, its subtitle, and a
file that is not a recording (one line, exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_clock import FakeClock
from recorded import SECOND, T0, turn_lines, write_lines

from pygents_tui.cli._commands import main
from pygents_tui.cli.replay import ReplayDashboard, open_replay
from pygents_tui.ui.app import Dashboard

SIZE = (130, 40)
TextOf = Callable[[Dashboard], str]


def a_minute(path: Path) -> Path:
    lines: list[str] = []
    for second in range(60):
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", f"{second + 1:032x}", start, start + SECOND // 2)
    return write_lines(path, lines)


async def test_the_replay_keys_pause_change_speed_and_seek(
    tmp_path: Path, until: Any, text_of: TextOf
) -> None:
    clock = FakeClock(0.0)
    view = open_replay(str(a_minute(tmp_path / "m.jsonl")), clock=clock)
    app = ReplayDashboard(view, "m.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "· 1× · playing" in text_of(app))
        await pilot.press("plus", "plus")
        await until(pilot, lambda: "· 5× · playing" in text_of(app))
        await pilot.press("minus")
        await until(pilot, lambda: "· 2× · playing" in text_of(app))
        await pilot.press("space")
        await until(pilot, lambda: "· paused" in text_of(app))
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "replay 0:00:10 / 0:00:59" in text_of(app))
        await pilot.press("greater_than_sign")
        await until(pilot, lambda: "end of recording" in text_of(app))
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: "replay 0:00:49 / 0:00:59" in text_of(app))
        await pilot.press("less_than_sign")
        await until(pilot, lambda: "replay 0:00:00 / 0:00:59" in text_of(app))
        clock.advance(3.0)  # paused: the clock moving changes nothing
        await pilot.pause()
        assert "replay 0:00:00 / 0:00:59 · 2× · paused" in text_of(app)


@pytest.mark.parametrize(
    "content",
    [None, b"", b"garbage\n" * 10, b"\x00\xff" * 100, b'{"resourceLogs":[]}\n'],
    ids=["missing", "empty", "garbage", "binary", "no times"],
)
def test_a_file_that_is_not_a_recording_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes | None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_bytes(content)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("pygents-tui replay: error: ")
    assert str(path) in err


def test_a_directory_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot read" in err


def replay_command(path: Path) -> subprocess.CompletedProcess[str]:
    """The real command, in its own process: a file that hangs or spins it fails
    the test by the timeout instead of hanging the suite."""
    return subprocess.run(
        [sys.executable, "-m", "pygents_tui", "replay", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "huge file with no newline"])
def test_a_file_a_replay_cannot_seek_or_index_is_one_line_and_exit_2(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "r.jsonl"
    if kind == "fifo":
        os.mkfifo(path)  # nothing ever writes to it: opening it would block for ever
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        with path.open("wb") as file:
            file.truncate(1 << 40)  # a sparse tebibyte of zeros: no disk used
    result = replay_command(path)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    said = (
        f"pygents-tui replay: error: {path} ",
        f"pygents-tui replay: error: cannot read {path}: ",
    )
    assert line.startswith(said)


def test_a_speed_outside_one_to_a_hundred_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replay", str(a_minute(tmp_path / "m.jsonl")), "--speed", "500"])
    assert exited.value.code == 2
    assert "a speed is 1 to 100" in capsys.readouterr().err


def test_listen_with_a_recording_it_cannot_open_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Checked before any port is bound or the screen taken.
    target = tmp_path / "no such directory" / "r.jsonl"
    assert main(["listen", "--record", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"pygents-tui listen: error: cannot record to {target}: ")
