"""Folding in slices: the fleet feeder folds within a budget, stopping between two
items of a request and resuming it later, the store shows what was folded between
two drains, and the listen app folds a backlog a slice per turn of the event loop.

A budget of 0 folds exactly one item per call (a call always folds one before it
looks at its budget), so nothing here depends on how fast the machine is."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fake_clock import FakeClock
from otlp_requests import SpanSpec, new_id, spans_batch
from pilot import Notes

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.otlp import folding
from pygents_tui.listen.decode import ReceivedSpan
from pygents_tui.ui import app as app_module
from pygents_tui.ui.app import Dashboard

WALL = 1_700_000_000 * 10**9
TURNS = 2_000  # event-loop turns a backlog may take in the app before the test fails


def make(clock: FakeClock) -> FleetModel:
    return FleetModel(clock=clock, wall=lambda: WALL, stale_after=60.0)


def request(trace: bytes, *names: str) -> Any:
    """One traces request: a span per name, in that order, in ``trace``."""
    return spans_batch([SpanSpec(name, trace, new_id(8)) for name in names])


def names(fleet: FleetModel, trace: bytes) -> list[str]:
    return [span.name for span in fleet.traces.spans(trace.hex())]


def test_a_fold_with_no_time_folds_one_item_a_call_resuming_the_request_in_order(
    clock: FakeClock,
) -> None:
    fleet = make(clock)
    first, second = new_id(16), new_id(16)
    fleet.ingest(request(first, "a0", "a1", "a2"))
    fleet.ingest(request(second, "b0", "b1"))
    expected = [(first, ["a0"]), (first, ["a0", "a1"]), (first, ["a0", "a1", "a2"])]
    expected += [(second, ["b0"]), (second, ["b0", "b1"])]

    for done, (trace, shown) in enumerate(expected, 1):
        assert fleet.fold(budget=0) is True
        assert names(fleet, trace) == shown
        assert fleet.store.counts["spans"] == done
        last = done == len(expected)
        assert fleet.backlog is not last, f"after item {done}"
        assert fleet.arrived.is_set() is not last, f"after item {done}"
    assert names(fleet, first) == ["a0", "a1", "a2"]
    assert fleet.fold(budget=0) is False  # nothing left: nothing folded
    assert fleet.store.counts["spans"] == 5


def test_a_fold_without_a_budget_folds_every_request_queued(clock: FakeClock) -> None:
    fleet = make(clock)
    first, second = new_id(16), new_id(16)
    fleet.ingest(request(first, "a0", "a1", "a2"))
    fleet.ingest(request(second, "b0", "b1"))
    assert fleet.fold(budget=0) is True  # a request under way is finished too

    assert fleet.fold() is True
    assert (names(fleet, first), names(fleet, second)) == (["a0", "a1", "a2"], ["b0", "b1"])
    assert fleet.store.counts["spans"] == 5
    assert not fleet.backlog
    assert not fleet.arrived.is_set()


def test_a_drain_shows_what_was_folded_since_the_last_and_an_idle_drain_changes_nothing(
    clock: FakeClock,
) -> None:
    fleet = make(clock)
    store = fleet.store
    store.drain()
    before = store.version
    assert store.drain(0) is False
    assert store.version == before, "nothing folded, the clock still"

    fleet.ingest(request(new_id(16), "a0", "a1", "a2"))
    assert store.drain(0) is True
    shown = store.version
    assert shown == before + 1
    assert store.fold(0)  # the rest, between two drains
    assert store.fold(0)
    assert not store.backlog
    assert store.version == shown, "a fold alone shows nothing"
    assert store.drain(0) is True, "what the folds between drains brought is shown"
    assert store.version == shown + 1
    assert store.drain(0) is False
    assert store.version == shown + 1


def listening(fleet: FleetModel) -> Dashboard:
    """The app ``pygents-tui listen`` runs for ``fleet`` (fed here by the test)."""
    app = listen_app(fleet, "127.0.0.1", None, None)
    app.animation_level = "none"
    return app


async def fold_backlog(app: Dashboard, fleet: FleetModel) -> int:
    """One refresh, then let the event loop turn (no refresh timer) until the backlog
    is folded; the turns it took. Fails after `TURNS` turns instead of hanging."""
    app.refresh_view()
    for turn in range(TURNS):
        if not fleet.backlog:
            return turn
        await asyncio.sleep(0)
    raise AssertionError(f"a backlog was left after {TURNS} turns of the event loop")


async def test_a_backlog_is_folded_a_slice_a_turn_of_the_loop_with_no_refresh_between(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app_module, "FOLD_SLICE", 0.0)  # one item a slice
    fleet = FleetModel(stale_after=3600.0)
    app = listening(fleet)
    async with app.run_test(size=(130, 40)) as pilot:
        app.refresh_timer.stop()
        await pilot.pause()
        traces = [new_id(16) for _ in range(50)]
        for trace in traces:
            fleet.ingest(request(trace, "one", "two"))

        turns = await fold_backlog(app, fleet)

        assert all(names(fleet, trace) == ["one", "two"] for trace in traces)
        assert fleet.store.counts["spans"] == 100
        assert turns >= 99 / 2, "a slice a turn: the loop's other work ran between them"
        assert app.view_error is None
        before = app.view.version
        app.refresh_view()
        assert app.view.version > before, "the next refresh shows what the slices folded"


async def test_a_request_whose_fold_fails_is_dropped_said_once_and_the_rest_folded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app_module, "FOLD_SLICE", 0.0)
    fold_span = folding.Folding.fold_span

    def failing(self: folding.Folding, span: ReceivedSpan, *rest: Any) -> None:
        if span.name == "boom":  # a bug in folding this span, simulated
            raise RuntimeError("a bug in folding")
        fold_span(self, span, *rest)

    monkeypatch.setattr(folding.Folding, "fold_span", failing)
    fleet = FleetModel(stale_after=3600.0)
    notes = Notes()
    app = listening(fleet)
    async with app.run_test(size=(130, 40), message_hook=notes) as pilot:
        app.refresh_timer.stop()
        await pilot.pause()
        broken, fine, later = new_id(16), new_id(16), new_id(16)
        fleet.ingest(request(broken, "a0", "a1", "boom", "a3"))
        fleet.ingest(request(fine, "b0", "b1", "b2"))
        fleet.ingest(request(later, "boom", "c1"))

        await fold_backlog(app, fleet)

        assert names(fleet, broken) == ["a0", "a1"], "the rest of its request dropped"
        assert names(fleet, fine) == ["b0", "b1", "b2"]
        assert names(fleet, later) == []
        assert isinstance(app.view_error, RuntimeError)
        await pilot.pause()
        said = [m for m in notes.messages if "a bug in folding" in m]
        assert said == ["RuntimeError: a bug in folding"], "said once, for two failures"

        fleet.ingest(request(later, "c2"))  # and folding goes on after
        await fold_backlog(app, fleet)
        assert names(fleet, later) == ["c2"]
