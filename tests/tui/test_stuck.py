"""Stuck and orphaned work (`pygents_tui.state._stuck`): a turn far past its tool's
recent p95, a stream that went quiet, a turn whose process went stale; the bounds
that keep it cheap, and the configuration keys that set it."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_clock import FakeClock

from pygents import StopReason
from pygents.redis import ConsumerStats, MailboxStats
from pygents_tui.cli._config import ConfigError, load_config
from pygents_tui.state._stuck import (
    DEFAULT_FACTOR,
    DEFAULT_SILENCE,
    StuckWatch,
    awaiting_takeover,
    next_stuck,
)
from pygents_tui.state._texts import takeover
from pygents_tui.state._turns import TurnFacts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from doc_blocks import ROOT, blocks

GUIDE = ROOT / "docs" / "dashboard.md"  # its configuration example sets [stuck]


@dataclass(slots=True, kw_only=True)
class Row(TurnFacts):
    """A turn as a source hands it out (`TurnRow`), on the fake clock."""

    key: str
    stale: bool = False

    @property
    def uuid(self) -> str:
        return self.key

    @property
    def agent_label(self) -> str:
        return self.agent or "—"

    def details(self) -> list[tuple[str, str]]:
        return []


def ended(key: str, tool: str, seconds: float, reason: StopReason = StopReason.COMPLETED) -> Row:
    return Row(key=key, agent="a", tool=tool, started=0.0, ended=seconds, stop_reason=reason)


def trained(watch: StuckWatch, tool: str, durations: list[float], batch: str = "") -> StuckWatch:
    for n, seconds in enumerate(durations):
        assert watch.learn_turn(ended(f"{tool}-{batch}{n}", tool, seconds))
    return watch


def test_a_turn_past_three_times_its_tools_p95_is_stuck_and_says_by_how_much() -> None:
    clock = FakeClock(0.0)
    watch = trained(StuckWatch(), "search", [0.5] * 45 + [0.8] * 5)
    turn = Row(key="t1", agent="a", tool="search", started=clock.now)
    clock.advance(2.4)  # exactly 3 x 0.8: not yet
    assert watch.check([turn], clock.now) == []
    clock.advance(0.88)
    (stuck,) = watch.check([turn], clock.now)
    assert stuck.key == "t1"
    assert stuck.kind == "slow"
    assert stuck.text == "running 4.1× its tool's p95 (p95 0.8 s over the last 50)"


def test_a_tool_seen_fewer_times_than_the_minimum_has_no_p95_and_flags_nothing() -> None:
    watch = trained(StuckWatch(min_samples=10), "rare", [0.1] * 9)
    assert watch.p95("rare") is None
    assert watch.check([Row(key="t", agent="a", tool="rare", started=0.0)], 1000.0) == []
    assert watch.learn_turn(ended("one-more", "rare", 0.1))
    assert watch.p95("rare") == (pytest.approx(0.1), 10)
    assert [s.kind for s in watch.check([Row(key="t", agent="a", tool="rare", started=0)], 5)] == [
        "slow"
    ]


def test_the_factor_is_configurable_and_a_quick_tool_is_never_slow_before_the_floor() -> None:
    watch = trained(StuckWatch(factor=10), "t", [0.1] * 20)
    turn = Row(key="k", agent="a", tool="t", started=0.0)
    assert watch.check([turn], 0.9) == []  # 9x: under a factor of 10
    assert watch.check([turn], 1.0) == []  # 10x, and not past the 1 s floor either
    assert watch.check([turn], 1.01)[0].kind == "slow"
    quick = trained(StuckWatch(), "q", [0.01] * 20)
    assert quick.check([Row(key="k", agent="a", tool="q", started=0.0)], 0.99) == []


def test_the_window_keeps_only_the_recent_durations_of_a_tool() -> None:
    watch = trained(StuckWatch(window=50), "t", [10.0] * 50)
    trained(watch, "t", [0.2] * 50, batch="later")  # the tool got faster: the old ones are gone
    assert watch.p95("t") == (pytest.approx(0.2), 50)


def test_only_completed_turns_teach_and_each_turn_only_once() -> None:
    watch = StuckWatch(min_samples=1)
    assert not watch.learn_turn(ended("f", "t", 99.0, StopReason.ERROR))
    assert not watch.learn_turn(ended("o", "t", 99.0, StopReason.TIMEOUT))
    assert not watch.learn_turn(ended("c", "t", 99.0, StopReason.CANCELLED))
    assert not watch.learn_turn(Row(key="r", agent="a", tool="t", started=0.0))  # running
    assert watch.p95("t") is None
    assert watch.learn_turn(ended("ok", "t", 2.0))
    assert not watch.learn_turn(ended("ok", "t", 2.0))  # the same turn, read again
    assert watch.p95("t") == (2.0, 1)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, -math.inf])
def test_a_duration_that_is_no_duration_is_ignored_and_counted(bad: float) -> None:
    watch = StuckWatch(min_samples=1)
    assert not watch.learn("t", bad)
    assert watch.ignored == 1
    assert watch.p95("t") is None


def test_hostile_clock_values_on_a_running_turn_flag_nothing_and_raise_nothing() -> None:
    watch = trained(StuckWatch(), "t", [0.1] * 20)
    rows = [
        Row(key="nan", agent="a", tool="t", started=math.nan),
        Row(key="inf", agent="a", tool="t", started=math.inf, streaming=True),
        Row(key="future", agent="a", tool="t", started=1e9, streaming=True),
    ]
    assert watch.check(rows, 50.0) == []
    assert watch.check(rows, math.nan) == []


def test_a_stream_with_no_new_value_for_the_silence_is_flagged_and_a_value_clears_it() -> None:
    clock = FakeClock(0.0)
    watch = StuckWatch(silence=30)
    turn = Row(key="s", agent="a", tool="chat", started=0.0, streaming=True)
    clock.advance(29.9)
    assert watch.check([turn], clock.now) == []  # quiet since it started, not for 30 s yet
    clock.advance(0.1)
    (stuck,) = watch.check([turn], clock.now)
    assert (stuck.kind, stuck.text) == ("silent", "no value for 30 s")
    turn.values = 1
    assert watch.check([turn], clock.now) == []
    clock.advance(45)
    assert watch.check([turn], clock.now)[0].text == "no value for 45 s"


def test_a_stream_first_seen_with_values_is_timed_from_when_it_was_first_seen() -> None:
    watch = StuckWatch(silence=10)
    turn = Row(key="s", agent="a", tool="chat", started=0.0, streaming=True, values=7)
    assert watch.check([turn], 100.0) == []  # when its 7th value came is not known
    assert watch.check([turn], 109.0) == []
    assert watch.check([turn], 110.0)[0].kind == "silent"


def test_a_turn_that_does_not_stream_is_never_silent() -> None:
    watch = StuckWatch(silence=1)
    assert watch.check([Row(key="k", agent="a", tool="t", started=0.0)], 500.0) == []


def test_a_turn_of_a_stale_process_is_orphaned_first_whatever_else_is_wrong() -> None:
    watch = trained(StuckWatch(silence=5), "t", [1.0] * 10)
    turn = Row(key="k", agent="a", tool="t", started=0.0, streaming=True, stale=True)
    (stuck,) = watch.check([turn], 20.0)
    assert stuck.kinds == ("orphaned", "slow", "silent")
    assert stuck.text.startswith("orphaned: its process went quiet · running 20.0×")
    assert stuck.text.endswith("· no value for 20 s")


def test_stuck_turns_come_in_the_order_given_and_the_jump_key_cycles_through_them() -> None:
    watch = StuckWatch()
    rows = [Row(key=k, agent="a", tool="t", started=0.0, stale=k != "ok") for k in "abc"]
    rows.insert(1, Row(key="ok", agent="a", tool="t", started=0.0))
    stuck = watch.check(rows, 1.0)
    assert [s.key for s in stuck] == ["a", "b", "c"]
    assert next_stuck(stuck, None) == "a"
    assert next_stuck(stuck, "a") == "b"
    assert next_stuck(stuck, "c") == "a"
    assert next_stuck(stuck, "ok") == "a"  # the selection is not a stuck one
    assert next_stuck([], "a") is None


def test_tools_and_followed_streams_are_bounded_and_the_forgotten_counted() -> None:
    watch = StuckWatch(max_tools=3, max_tracked=100, min_samples=1)
    for n in range(10):
        watch.learn(f"tool-{n}", 1.0)
    assert watch.tools_forgotten == 7
    assert watch.p95("tool-0") is None
    assert watch.p95("tool-9") == (1.0, 1)
    streams = [
        Row(key=f"s{n}", agent="a", tool="t", started=0.0, streaming=True) for n in range(500)
    ]
    watch.check(streams, 1.0)
    assert len(watch._streams) == 100
    for n in range(500):  # an ended turn is learned once, within the same bound
        watch.learn_turn(ended(f"e{n}", "t", 1.0))
    assert len(watch._learned) == 100


def test_a_bad_factor_or_silence_is_refused_when_the_watch_is_made() -> None:
    for arguments in ({"factor": 0.5}, {"factor": math.nan}, {"silence": 0}, {"silence": -1}):
        with pytest.raises(ValueError):
            StuckWatch(**arguments)  # type: ignore[arg-type]
    assert (DEFAULT_FACTOR, DEFAULT_SILENCE) == (3.0, 30.0)


# -- the configuration's [stuck] table -----------------------------------------------------


def test_the_stuck_table_sets_the_factor_and_the_silence(tmp_path: Path) -> None:
    path = tmp_path / "tui.toml"
    path.write_text("[stuck]\nfactor = 4\nsilence = 12.5\n")
    config = load_config(path)
    assert (config.stuck_factor, config.stuck_silence) == (4.0, 12.5)
    path.write_text("theme = 'nord'\n")
    config = load_config(path)
    assert (config.stuck_factor, config.stuck_silence) == (None, None)


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("[stuck]\nfactor = 0.5\n", "stuck.factor", "must be 1 or more, got 0.5"),
        ("[stuck]\nfactor = nan\n", "stuck.factor", "must be a positive number"),
        ("[stuck]\nsilence = 0\n", "stuck.silence", "must be a positive number"),
        ("[stuck]\nsilence = '30 s'\n", "stuck.silence", "must be a positive number"),
        ("[stuck]\npatience = 3\n", "stuck.patience", "unknown key (known here: factor, silence)"),
        ("stuck = 3\n", "stuck", "must be a table"),
    ],
)
def test_a_wrong_stuck_setting_is_one_line_naming_the_key(
    tmp_path: Path, text: str, key: str, problem: str
) -> None:
    path = tmp_path / "tui.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"config {path}: {key}: ")
    assert problem in str(caught.value)


def test_the_guides_example_configuration_sets_the_stuck_thresholds_it_documents(
    tmp_path: Path,
) -> None:
    (example,) = [b for b in blocks(GUIDE) if b.language == "toml" and "[stuck]" in b.code]
    path = tmp_path / "tui.toml"
    path.write_text(example.code)
    config = load_config(path)
    assert (config.stuck_factor, config.stuck_silence) == (DEFAULT_FACTOR, DEFAULT_SILENCE)


def test_a_tool_that_usually_takes_no_time_at_all_gives_a_readable_reason() -> None:
    watch = trained(StuckWatch(), "instant", [0.0] * 10)
    (stuck,) = watch.check([Row(key="k", agent="a", tool="instant", started=0.0)], 2.0)
    assert stuck.text == "running over 1000× its tool's p95 (p95 0.0 s over the last 10)"


def test_redis_entries_held_by_a_worker_that_stopped_heartbeating_wait_for_takeover() -> None:
    def stats(agent: str, *consumers: ConsumerStats) -> MailboxStats:
        pending = sum(c.pending for c in consumers)
        return MailboxStats(agent, pending, pending, 0, 1, consumers)

    mailboxes = {
        "planner": stats(
            "planner",
            ConsumerStats("w-live", pending=2, idle=0.1, live=True),
            ConsumerStats("w-dead", pending=3, idle=120.0, live=False),
            ConsumerStats("w-dead-2", pending=1, idle=90.0, live=False),
        ),
        "coder": stats("coder", ConsumerStats("w", pending=4, idle=0.5, live=True)),
        "idle": stats("idle", ConsumerStats("w-old", pending=0, idle=999.0, live=False)),
    }
    assert awaiting_takeover(mailboxes) == {"planner": 4}
    assert takeover(4) == "4 waiting for takeover (their worker is gone)"
