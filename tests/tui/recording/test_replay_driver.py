"""The replay driver under a fake clock: speed, pause, seek and the end of a
recording, fed into the real fleet model through the receiver's decoder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_clock import FakeClock
from recorded import SECOND, T0, turn_lines, write_lines

from pygents_tui.feeders import ReplayView
from pygents_tui.recording import Recording


def uuid(n: int) -> str:
    return f"{n:032x}"


def a_minute(path: Path) -> Path:
    """``planner`` runs a half-second turn every second for a minute; ``watcher``
    starts one turn at 40 s that never ends."""
    lines: list[str] = []
    for second in range(60):
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 1), start, start + SECOND // 2)
        if second == 40:
            lines += turn_lines("svc", "watcher", uuid(1000), start, None, tool="watch")
    return write_lines(path, lines)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(100.0)


@pytest.fixture
def view(tmp_path: Path, clock: FakeClock) -> Iterator[ReplayView]:
    replay = ReplayView(Recording(a_minute(tmp_path / "r.jsonl")), clock=clock, stale_after=3600)
    yield replay
    replay.close()


def seconds_in(view: ReplayView) -> float:
    return (view.replay.position_ns - view.replay.start_ns) / SECOND


def rows(view: ReplayView) -> list[tuple[str, str]]:
    return [(row.label, row.phase) for row in view.store.agent_rows()]


def ended_turns(view: ReplayView) -> int:
    return len(view.store.recent_turns())


def test_at_one_x_ten_seconds_of_clock_play_ten_seconds_of_recording(
    view: ReplayView, clock: FakeClock
) -> None:
    view.store.drain()
    assert seconds_in(view) == 0
    assert rows(view) == [("svc@svc-1/planner", "running")]
    clock.advance(10.0)
    view.store.drain()
    assert seconds_in(view) == 10.0
    assert ended_turns(view) == 10  # the turns of seconds 0 to 9 ended; the 11th runs
    assert "replay 0:00:10 / 0:00:59 · 1× · playing" in view.status()


def test_at_ten_x_one_second_of_clock_plays_ten_seconds(view: ReplayView, clock: FakeClock) -> None:
    view.replay.set_speed(10)
    clock.advance(1.0)
    view.store.drain()
    assert seconds_in(view) == 10.0
    assert ended_turns(view) == 10
    assert "· 10× ·" in view.status()


def test_speed_is_kept_between_one_and_a_hundred_and_steps_through_the_usual_values(
    view: ReplayView,
) -> None:
    replay = view.replay
    assert replay.set_speed(500) == 100
    assert replay.set_speed(0.1) == 1
    assert [replay.faster() for _ in range(7)] == [2, 5, 10, 20, 50, 100, 100]
    assert [replay.slower() for _ in range(3)] == [50, 20, 10]


def test_a_paused_replay_does_not_move_and_resumes_where_it_stopped(
    view: ReplayView, clock: FakeClock
) -> None:
    clock.advance(5.0)
    view.store.drain()
    assert view.replay.toggle_pause() is True
    clock.advance(30.0)
    view.store.drain()
    assert seconds_in(view) == 5.0
    assert ended_turns(view) == 5
    assert view.status().endswith("· paused")
    view.replay.toggle_pause()
    clock.advance(2.0)
    view.store.drain()
    assert seconds_in(view) == 7.0


def test_seeking_back_rebuilds_the_same_state_as_playing_straight_there(
    tmp_path: Path, view: ReplayView, clock: FakeClock
) -> None:
    clock.advance(50.0)
    view.store.drain()
    before = view.replay.generation
    view.replay.seek(view.replay.start_ns + 45 * SECOND)
    view.store.drain()
    assert view.replay.generation == before + 1  # a fresh model
    assert seconds_in(view) == 45.0
    # The same rows and running turns as a replay that played to 45 s directly.
    straight = ReplayView(Recording(tmp_path / "r.jsonl"), clock=FakeClock(0.0), stale_after=3600)
    straight.replay.seek(straight.replay.start_ns + 45 * SECOND)
    straight.store.drain()
    assert (
        rows(view)
        == rows(straight)
        == [
            ("svc@svc-1/planner", "running"),
            ("svc@svc-1/watcher", "running"),
        ]
    )
    assert [t.uuid for t in view.store.running_turns()] == [
        t.uuid for t in straight.store.running_turns()
    ]
    straight.close()


def test_a_short_seek_forward_reads_on_and_a_long_one_warms_up_a_fresh_model(
    tmp_path: Path, clock: FakeClock
) -> None:
    recording = Recording(a_minute(tmp_path / "r.jsonl"))
    view = ReplayView(recording, clock=clock, stale_after=3600, warmup=10.0)
    view.store.drain()
    view.replay.seek_by(5.0)
    view.store.drain()
    assert view.replay.generation == 1
    assert ended_turns(view) == 5
    view.replay.seek_by(40.0)  # to 45 s: further than the warm-up
    view.store.drain()
    assert view.replay.generation == 2
    assert seconds_in(view) == 45.0
    # Only the 10 s before the target were replayed into the fresh model: ten ended
    # turns, and the watcher's turn (started at 40 s) running.
    assert ended_turns(view) == 10
    assert [t.tool for t in view.store.running_turns()] == ["watch", "work"]
    view.close()


def test_the_end_of_a_recording_stays_on_its_last_screen_saying_so(
    view: ReplayView, clock: FakeClock
) -> None:
    view.replay.set_speed(100)
    clock.advance(5.0)
    view.store.drain()
    clock.advance(5.0)
    view.store.drain()
    assert view.replay.ended
    assert view.status().endswith("· end of recording")
    assert seconds_in(view) == 59.5
    assert ended_turns(view) == 60
    assert len(rows(view)) == 2
    clock.advance(60.0)
    assert view.store.drain() is False  # nothing moves any more
    view.replay.seek_by(-10.0)  # ... until the user seeks back
    view.store.drain()
    assert not view.replay.ended
    assert seconds_in(view) == 49.5


def test_requests_the_decoder_refuses_are_counted_and_the_replay_goes_on(
    tmp_path: Path, clock: FakeClock
) -> None:
    good = turn_lines("svc", "planner", uuid(1), T0, T0 + SECOND)
    lines = [
        good[0],
        '{"resourceSpans":' + "[" * 3000,  # deep
        '{"resourceLogs":[{"scopeLogs":"not a list"}]}',  # the wrong shape
        *good[1:],
        '{"resourceLogs":[{"trunc',  # a truncated last line
    ]
    view = ReplayView(Recording(write_lines(tmp_path / "bad.jsonl", lines)), clock=clock)
    view.replay.seek(view.replay.end_ns)
    view.store.drain()
    assert view.store.counters()["malformed"] == 3
    assert view.replay.drops["malformed"] == 3
    assert ended_turns(view) == 1  # the good requests around them were played
    view.close()


def test_a_replay_that_cannot_keep_up_plays_at_most_its_budget_per_step(
    tmp_path: Path, clock: FakeClock
) -> None:
    view = ReplayView(Recording(a_minute(tmp_path / "r.jsonl")), clock=clock, budget=10)
    view.replay.set_speed(100)
    clock.advance(1.0)  # 100 s due: every request of the minute
    assert view.replay.advance() == 10
    behind = seconds_in(view)
    assert 0 < behind < 10  # where it really is, not where it should be
    # It goes on from there at its speed; what it missed is not owed as a backlog:
    # 0.01 s at 100x is one more second of recording (three requests), not 90.
    clock.advance(0.01)
    assert view.replay.advance() == 3
    assert seconds_in(view) == pytest.approx(behind + 1.0)
    view.close()


def test_a_seek_forward_over_more_bytes_than_the_warm_up_rebuilds_instead_of_reading_on(
    tmp_path: Path, clock: FakeClock
) -> None:
    # Within the warm-up's seconds, but not its bytes: reading on would decode more
    # than a rebuild does (a busy fleet packs many requests into a few seconds).
    recording = Recording(a_minute(tmp_path / "r.jsonl"))
    with ReplayView(recording, clock=clock, warmup=60.0, warmup_bytes=8 * 1024) as view:
        view.store.drain()
        view.replay.seek_by(20.0)
        view.store.drain()
        assert view.replay.generation == 2
        assert seconds_in(view) == 20.0
        assert view.replay.requests < 20 * 3  # only the last 8 KiB were replayed
        assert rows(view) == [("svc@svc-1/planner", "running")]


THIRTY_YEARS = 30 * 365 * 24 * 3600 * SECOND


def test_one_request_stamped_thirty_years_ahead_plays_in_its_place_and_the_rest_follow(
    tmp_path: Path, clock: FakeClock
) -> None:
    # One sender's clock is 30 years ahead for one request, among a planner's turns:
    # the recording's order says when it arrived, and the model corrects that
    # sender's clock as listen does. Nothing waits for year 2056.
    lines: list[str] = []
    for second in range(20):
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 1), start, start + SECOND // 2)
        if second == 5:
            skewed = start + THIRTY_YEARS
            lines += turn_lines("skewed", "drifter", uuid(999), skewed, None, tool="drift")
    with ReplayView(Recording(write_lines(tmp_path / "r.jsonl", lines)), clock=clock) as view:
        assert "replay 0:00:00 / 0:00:19 · 1× · playing" in view.status()
        view.replay.set_speed(100)
        clock.advance(1.0)  # 100 s of recording at 100x: the whole of it
        view.store.drain()

        assert view.replay.ended
        assert view.replay.requests == len(lines)
        assert ended_turns(view) == 20
        assert "replay 0:00:19 / 0:00:19" in view.status()
        assert "skipped" not in view.status()
        (drifter,) = view.store.running_turns()
        assert drifter.tool == "drift"


def test_an_idle_night_is_skipped_and_the_status_says_so(tmp_path: Path, clock: FakeClock) -> None:
    night = 8 * 3600 * SECOND + 10 * SECOND  # from the evening's first turn: 8 h idle
    lines: list[str] = []
    for second in range(10):
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 1), start, start + SECOND // 2)
    for second in range(10):
        start = T0 + night + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 100), start, start + SECOND // 2)
    with ReplayView(Recording(write_lines(tmp_path / "r.jsonl", lines)), clock=clock) as view:
        clock.advance(10.0)
        view.store.drain()  # the evening's ten turns, then the night: skipped at once
        assert ended_turns(view) == 10
        assert "· playing · skipped 8h00m idle" in view.status()
        assert (view.replay.position_ns - T0) // SECOND == 8 * 3600 + 10
        clock.advance(10.0)  # ten more seconds of clock: the morning's turns
        view.store.drain()
        assert ended_turns(view) == 20
        assert view.replay.ended
        assert view.replay.requests == len(lines)


def test_a_gap_shorter_than_the_idle_bound_is_played_in_real_time(
    tmp_path: Path, clock: FakeClock
) -> None:
    lines = turn_lines("svc", "planner", uuid(1), T0, T0 + SECOND)
    lines += turn_lines("svc", "planner", uuid(2), T0 + 50 * SECOND, T0 + 51 * SECOND)
    with ReplayView(Recording(write_lines(tmp_path / "r.jsonl", lines)), clock=clock) as view:
        clock.advance(30.0)
        view.store.drain()
        assert ended_turns(view) == 1
        assert seconds_in(view) == 30.0
        assert "skipped" not in view.status()
        clock.advance(21.0)
        view.store.drain()
        assert ended_turns(view) == 2


def test_a_sender_whose_clock_is_behind_plays_at_once_and_starts_no_idle_skip(
    tmp_path: Path, clock: FakeClock
) -> None:
    lines: list[str] = []
    for second in range(20):
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 1), start, start + SECOND // 2)
        if second == 5:
            late = start - 600 * SECOND  # ten minutes behind
            lines += turn_lines("late", "laggard", uuid(999), late, None, tool="lag")
    with ReplayView(Recording(write_lines(tmp_path / "r.jsonl", lines)), clock=clock) as view:
        clock.advance(5.75)  # played: the late request; due next: the turn at 6 s
        view.store.drain()
        assert seconds_in(view) == 5.75
        assert "skipped" not in view.status()
        assert {turn.tool for turn in view.store.running_turns()} == {"lag"}
        clock.advance(15.0)
        view.store.drain()
        assert view.replay.ended
        assert view.replay.requests == len(lines)
