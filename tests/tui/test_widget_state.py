"""The dashboard's widgets keep their own state in names of their own: none of them
writes over an attribute of the Textual class it extends."""

from __future__ import annotations

from typing import Any

from pilot import dashboard, numbered
from textual.widget import Widget

from pygents_tui import DashboardModel
from pygents_tui.ui.widgets import TimelineTable


async def test_every_widget_is_still_running_once_its_panel_has_shown_nothing_running(
    until: Any,
) -> None:
    # The timeline once kept "a turn is running" in ``_running``, which is also the
    # flag by which Textual knows that a widget's message pump runs: a timeline with
    # nothing running then said it was not running at all.
    _agent, workload = numbered("settled", 2)
    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: model.agent("settled").completed == 2)
        await pilot.press("6")
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: timeline.row_count == 2)
        assert not model.store.running_turns(None)  # the panel has drawn "nothing running"
        stopped = [w for w in app.screen.query(Widget) if not w.is_running]
        assert stopped == []


async def test_the_screens_and_panels_name_what_they_read_as_the_app_does(until: Any) -> None:
    # The read API had three names (the app's ``view``, the panels' ``model``, the
    # inspector's ``refresh_from_model``): one now, ``view``, and it is the app's.
    _agent, workload = numbered("one-name", 1)
    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: model.agent("one-name").completed == 1)
        assert app.view is model.store
        assert app._main.view is app.view
        readers = [w for w in app.screen.query(Widget) if "view" in vars(w)]
        assert len(readers) >= 5  # the agents table and the panels
        assert all(w.view is app.view for w in readers)
        assert not [w for w in app.screen.query(Widget) if "model" in vars(w)]
