"""``--web``'s log of refusals (`RefusalLog`), on a clock and a timer the test moves: the
first refusal of each kind said as it is, the rest counted and said in one line as
its window ends, whether or not another request comes, or as the server stops. The
flood itself, from a page in a real browser, is in test_web.py."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Callable

from terminal import WAIT

from pygents_tui.cli._web_server import REFUSAL_WINDOW, RefusalLog


class Timers:
    """The log's clock and its timer, moved by the test: `run` fires what is due."""

    def __init__(self) -> None:
        self.now = 0.0
        self.set: list[tuple[float, Callable[[], None]]] = []  # (when, callback)

    def clock(self) -> float:
        return self.now

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        self.set.append((self.now + delay, callback))

    def run(self, until: float) -> None:
        """Move the clock to ``until``, firing each timer due on the way."""
        while due := sorted((t for t in self.set if t[0] <= until), key=lambda t: t[0]):
            when, callback = due[0]
            self.set.remove(due[0])
            self.now = when
            callback()
        self.now = until


def refusal_log(timers: Timers) -> tuple[RefusalLog, list[str]]:
    said: list[str] = []
    return RefusalLog(said.append, clock=timers.clock, later=timers.later), said


def test_the_first_refusal_of_each_kind_is_said_and_the_others_counted_in_one_line() -> None:
    timers = Timers()
    log, said = refusal_log(timers)
    for n in range(1000):
        log.refused("page", "the page needs the token")
        log.refused("token", f"'/download/{n}' without the token")
        timers.now += 0.001
    assert said == ["refused: the page needs the token", "refused: '/download/0' without the token"]
    timers.run(REFUSAL_WINDOW)
    assert said[2:] == [
        "refused 999 more requests for the page without the token in the last 10 s",
        "refused 999 more requests without the token in the last 10 s",
    ]
    timers.run(1000.0)
    assert len(said) == 4  # nothing left to say


def test_the_count_is_said_when_its_window_ends_though_no_request_follows() -> None:
    timers = Timers()
    log, said = refusal_log(timers)
    log.refused("host", "the Host 'evil.example' is not 127.0.0.1:8000")
    log.refused("host", "the Host 'evil.example' is not 127.0.0.1:8000")
    timers.now = 4.0
    log.refused("origin", "a socket from no Origin, not http://127.0.0.1:8000")
    log.refused("origin", "a socket from no Origin, not http://127.0.0.1:8000")
    log.refused("origin", "a socket from no Origin, not http://127.0.0.1:8000")
    assert [when for when, _ in timers.set] == [REFUSAL_WINDOW]  # one timer at a time
    timers.run(REFUSAL_WINDOW)
    assert said[-1] == "refused 1 more request naming another Host in the last 10 s"
    assert [when for when, _ in timers.set] == [14.0]  # set again for the other window
    timers.run(14.0)
    assert said[-1] == "refused 2 more sockets from another origin or none in the last 10 s"
    assert timers.set == []


def test_a_refusal_after_its_window_is_said_again_and_opens_another() -> None:
    timers = Timers()
    log, said = refusal_log(timers)
    log.refused("token", "'/a' without the token")
    log.refused("token", "'/b' without the token")
    # The clock is past the window but its timer has not fired yet: the refusal
    # closes the old window first, so each count covers its own window.
    timers.now = 12.0
    log.refused("token", "'/c' without the token")
    log.refused("token", "'/d' without the token")
    assert said == [
        "refused: '/a' without the token",
        "refused 1 more request without the token in the last 12 s",
        "refused: '/c' without the token",
    ]
    timers.run(100.0)
    assert said[-1] == "refused 1 more request without the token in the last 10 s"


def test_a_window_of_one_refusal_says_nothing_more() -> None:
    timers = Timers()
    log, said = refusal_log(timers)
    log.refused("full", "all 4 browser sessions are in use (--web-sessions); close a page")
    timers.run(100.0)
    log.flush()
    assert said == ["refused: all 4 browser sessions are in use (--web-sessions); close a page"]


def test_what_is_still_counted_is_said_as_the_server_stops() -> None:
    timers = Timers()
    log, said = refusal_log(timers)
    log.refused("page", "the page needs the token")
    timers.now = 2.6
    for _ in range(1234):
        log.refused("page", "the page needs the token")
    log.flush()
    assert said[-1] == "refused 1234 more requests for the page without the token in the last 3 s"
    log.flush()
    timers.run(100.0)  # the timer that was set finds nothing left
    assert len(said) == 2


def test_a_flood_of_distinct_refusals_keeps_no_more_memory_than_a_few() -> None:
    timers = Timers()
    log, said = refusal_log(timers)
    kinds = ("host", "page", "token", "origin", "full")
    for kind in kinds:
        log.refused(kind, "first")
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for n in range(100_000):
            log.refused(kinds[n % 5], f"'/{n:09d}' without the token, each line its own")
            timers.now += 0.00001  # one second in all: still the first window
        grown = sum(
            stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename")
        )
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown
    assert len(said) == 5
    log.flush()
    assert len(said) == 10
    assert "refused 20000 more requests naming another Host in the last 1 s" in said


async def test_the_timer_of_the_running_loop_says_the_count_by_itself() -> None:
    said: list[str] = []
    summary = asyncio.Event()

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("refused 2 more"):
            summary.set()

    log = RefusalLog(say, window=0.05)  # the real clock, and the loop's call_later
    for _ in range(3):
        log.refused("token", "'/x' without the token")
    await asyncio.wait_for(summary.wait(), WAIT)
    assert said == [
        "refused: '/x' without the token",
        "refused 2 more requests without the token in the last 1 s",
    ]
