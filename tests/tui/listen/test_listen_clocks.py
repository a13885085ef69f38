"""A sender whose clock is far off the listener's: its running turns' elapsed time,
time left and timeline bars come from how long ago things happened (durations and
the sender's estimated offset), never from its absolute time.

The sender is the real SDK with its records and spans stamped an hour behind; the
listener is the real receiver and the dashboard under Pilot, on a hand-moved
monotonic clock so that "one second later" is exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from fake_clock import FakeClock
from otlp_sender import MakeSender

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.widgets import TimelineTable

SIZE = (130, 40)
HOUR = 3600.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(5000.0)


@pytest.fixture
def fleet(clock: FakeClock) -> FleetModel:
    """Overrides the listener fixtures' model: on the test's monotonic clock."""
    return FleetModel(clock=clock, wall=time.time_ns, stale_after=3600.0)


@pytest.mark.parametrize("offset", [-HOUR, HOUR], ids=["behind", "ahead"])
async def test_a_sender_clock_an_hour_off_shows_the_true_time_left_and_timeline_bars(
    offset: float,
    fleet: FleetModel,
    receiver: Receiver,
    senders: MakeSender,
    clock: FakeClock,
    until: Any,
    text_of: Callable[[Dashboard], str],
) -> None:
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("grpc", service="skewed", instance="s-1", clock_offset=offset)
        agent = sender.agent("planner")
        run = sender.run_start(agent)
        turn = sender.turn_start(agent, run, "fetch", timeout=10.0)
        await sender.sent()
        await until(pilot, lambda: len(fleet.store.running_turns()) == 1)

        clock.advance(1.0)  # one second into the ten-second turn
        await until(pilot, lambda: "left" in text_of(app))
        assert "  1.0s   9.0s left" in text_of(app)

        sender.clock_offset_ns += 10**9  # a second passes on the sender's clock too
        sender.turn_end(turn)
        await sender.sent()
        await until(pilot, lambda: not fleet.store.running_turns())
        (ended,) = fleet.store.recent_turns()
        # It started when its start record arrived (5000.0), not half a minute earlier;
        # it lasted what the sender's clock says (a second, plus the test's own time).
        assert ended.started == pytest.approx(5000.0, abs=0.5)
        assert 1.0 <= ended.elapsed_at(clock.now) < 5.0

        await pilot.press("6")  # the timeline: the turn is the last second of its window
        timeline = app.screen.query_one("#timeline", TimelineTable)
        await until(pilot, lambda: timeline.row_count == 1)
        bar = str(timeline.get_row_at(0)[3])
        assert set(bar.strip()) == {"█"}
        assert bar.index("█") >= 36, "one second of the thirty the bar spans, at its end"
