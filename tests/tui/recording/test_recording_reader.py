"""Reading recordings: streamed, bounded, and never an exception for what a file
holds. Hostile files are counted drops; files that cannot be opened are one
`RecordingError` line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from recorded import SECOND, T0, turn_lines, write_lines

from pygents_tui.recording import Recording, RecordingError, signal_of, time_of


@pytest.fixture
def opened() -> Iterator[Callable[..., Recording]]:
    """``opened(path, **options)``: a `Recording`, closed after the test."""
    made: list[Recording] = []

    def open_one(path: Path, **options: Any) -> Recording:
        made.append(Recording(path, **options))
        return made[-1]

    yield open_one
    for recording in made:
        recording.close()


def uuid(n: int) -> str:
    return f"{n:032x}"


def a_minute(path: Path) -> Path:
    """One turn a second for 60 s: 180 lines, times rising."""
    lines: list[str] = []
    for second in range(60):
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 1), start, start + SECOND // 2)
    return write_lines(path, lines)


def test_a_request_is_timed_by_its_newest_time_and_typed_by_its_one_field(
    opened: Callable[..., Recording],
) -> None:
    line = turn_lines("svc", "a", uuid(1), T0, T0 + 5 * SECOND)[2].encode()
    assert signal_of(line) == "traces"
    assert time_of(line) == T0 + 5 * SECOND  # the span's end, not its start
    assert signal_of(b'{"resourceLogs":[]}') == "logs"
    assert signal_of(b'{"other":1}') is None
    # A time quoted inside a string value is not a time.
    assert time_of(b'{"resourceLogs":[{"body":"\\"timeUnixNano\\":\\"99\\""}]}') == 0


def test_reading_returns_every_request_in_order_with_its_offset(
    tmp_path: Path, opened: Callable[..., Recording]
) -> None:
    recording = opened(a_minute(tmp_path / "r.jsonl"))
    lines = []
    while (line := recording.read()) is not None:
        lines.append(line)
    assert len(lines) == 180
    assert recording.first_ns == T0
    assert recording.last_ns == T0 + 59 * SECOND + SECOND // 2
    assert [line.signal for line in lines[:3]] == ["logs", "logs", "traces"]
    raw = (tmp_path / "r.jsonl").read_bytes()
    assert all(raw[line.offset : line.offset + len(line.data)] == line.data for line in lines)
    assert not recording.drops


def test_the_index_grows_as_the_file_is_read_and_a_seek_lands_before_its_time(
    tmp_path: Path, opened: Callable[..., Recording]
) -> None:
    recording = opened(a_minute(tmp_path / "r.jsonl"), index_records=10**6, index_seconds=5.0)
    while recording.read() is not None:
        pass
    # A point every 5 s of recording (and the first line), not one per line.
    assert 10 <= len(recording.index) <= 14
    times = [time for time, _ in recording.index]
    assert times == sorted(times)
    target = T0 + 30 * SECOND
    recording.seek_time(target)
    first = recording.read()
    assert first is not None
    assert first.time_ns <= target
    seen = [first]
    while (line := recording.read()) is not None:
        seen.append(line)
    assert any(line.time_ns == target for line in seen)  # ... and nothing at it is lost
    assert len(seen) < 180 // 2 + 20  # it started near the target, not at the top


def test_a_seek_past_what_was_read_bisects_the_file_instead_of_reading_it(
    tmp_path: Path, opened: Callable[..., Recording]
) -> None:
    lines: list[str] = []
    for second in range(3000):  # about 2 MB, far more than the bisection's last span
        start = T0 + second * SECOND
        lines += turn_lines("svc", "planner", uuid(second + 1), start, start + 1)[:1]
    recording = opened(write_lines(tmp_path / "big.jsonl", lines))
    assert recording.size > 1_000_000
    recording.seek_time(T0 + 2500 * SECOND)
    first = recording.read()
    assert first is not None
    assert T0 + 2400 * SECOND < first.time_ns <= T0 + 2500 * SECOND


@pytest.mark.parametrize(
    ("content", "drop"),
    [
        (b"garbage that is not json\n", "not_otlp"),
        (b"\x00\xff\xfe binary \x80\n", "not_otlp"),
        (b'["resourceSpans"]\n', "not_otlp"),
        (b'{"resourceSpans":' + b"[" * 3000 + b"\n", None),  # deep: the decoder's call
        (b"{" + b" " * 5000 + b"}\n", "too_long"),
    ],
    ids=["garbage", "binary", "a list", "deep", "too long"],
)
def test_hostile_lines_are_counted_and_reading_carries_on(
    tmp_path: Path, content: bytes, drop: str | None, opened: Callable[..., Recording]
) -> None:
    good = turn_lines("svc", "planner", uuid(1), T0, None)[0].encode() + b"\n"
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(good + content + good + b'{"resourceLogs":[{"trunc')
    recording = opened(path, max_line=4096)
    read = []
    while (line := recording.read()) is not None:
        read.append(line)
    # The good lines, and the truncated last one, are read (the decoder refuses the
    # truncated one); the hostile line is dropped and counted, or passed on to the
    # decoder when it looks like a request.
    assert [line.data for line in read if line.data == good] == [good, good]
    assert read[-1].data == b'{"resourceLogs":[{"trunc'
    if drop is not None:
        assert recording.drops[drop] == 1
    else:
        assert len(read) == 4


def test_a_huge_line_is_skipped_without_being_held(
    tmp_path: Path, opened: Callable[..., Recording]
) -> None:
    path = tmp_path / "huge.jsonl"
    good = turn_lines("svc", "planner", uuid(1), T0, None)[0].encode() + b"\n"
    with open(path, "wb") as out:
        out.write(good)
        out.write(b'{"resourceSpans":[' + b"0," * (8 * 1024 * 1024) + b"0]}\n")
        out.write(good)
    recording = opened(path, max_line=64 * 1024)
    read = []
    while (line := recording.read()) is not None:
        read.append(line)
    assert [line.data for line in read] == [good, good]
    assert recording.drops["too_long"] == 1


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_a_file_that_cannot_be_read_is_one_line(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "nope.jsonl"
    if kind == "directory":
        path.mkdir()
    with pytest.raises(RecordingError) as raised:
        Recording(path)
    message = str(raised.value)
    assert "\n" not in message
    assert str(path) in message


def test_an_empty_file_opens_and_has_nothing_to_read(
    tmp_path: Path, opened: Callable[..., Recording]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    recording = opened(path)
    assert recording.first_ns == 0
    assert recording.read() is None
