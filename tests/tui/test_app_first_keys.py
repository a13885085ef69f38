"""The panels' digits and ``/`` are taken by the app before the focused widget sees
them (bindings with priority): a key the focused widget did not take used to travel
up to the app a widget a turn of the event loop. They are left alone where they
would not have reached the app: typed into the filter, or on a screen over the main
one. How far a key travelled is counted (the messages it was dispatched as), not
timed."""

from __future__ import annotations

from typing import Any

from pilot import dashboard
from textual import events
from textual.command import CommandPalette
from textual.message import Message
from textual.widgets import Input, TabbedContent, TabPane

from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens import HelpScreen
from pygents_tui.ui.widgets import TimelineTable

SIZE = (120, 36)


class KeyTrips:
    """Counts the times a key event is dispatched (a ``run_test`` message hook): once
    to the app; again to the focused widget and to every widget it bubbles up to."""

    def __init__(self) -> None:
        self.trips: dict[str, int] = {}

    def __call__(self, message: Message) -> None:
        if isinstance(message, events.Key):
            self.trips[message.key] = self.trips.get(message.key, 0) + 1

    def of(self, key: str) -> int:
        return self.trips.pop(key, 0)


def active_tab(app: Dashboard) -> str:
    return app._main.query_one(TabbedContent).active


async def timeline_focused(app: Dashboard, pilot: Any) -> TimelineTable:
    await pilot.press("6")
    await pilot.pause()
    timeline = app._main.query_one(TimelineTable)
    assert app.focused is timeline
    return timeline


async def filter_opened(app: Dashboard, pilot: Any) -> Input:
    """``/`` pressed from the Timeline's table: the filter field, focused."""
    await timeline_focused(app, pilot)
    await pilot.press("slash")
    field = app.focused
    assert isinstance(field, Input)
    return field


async def test_a_digit_shows_its_panel_taken_by_the_app_before_the_focused_table() -> None:
    keys = KeyTrips()
    app = dashboard()
    async with app.run_test(size=SIZE, message_hook=keys) as pilot:
        await timeline_focused(app, pilot)
        keys.trips.clear()

        await pilot.press("4")

        assert active_tab(app) == "tab-context"
        assert keys.of("4") == 1, "dispatched to the app only, never to the table"


async def test_with_the_filter_focused_a_digit_and_a_slash_are_typed_into_it() -> None:
    keys = KeyTrips()
    app = dashboard()
    async with app.run_test(size=SIZE, message_hook=keys) as pilot:
        keys.trips.clear()
        field = await filter_opened(app, pilot)  # from the table: the app's first too
        assert keys.of("slash") == 1
        assert field.value == ""

        await pilot.press("4", "slash")

        assert field.value == "4/"
        assert app.focused is field
        assert active_tab(app) == "tab-timeline"


async def test_with_the_help_on_top_a_digit_leaves_the_main_screens_panel_alone() -> None:
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await timeline_focused(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)

        await pilot.press("3", "slash")

        assert isinstance(app.screen, HelpScreen), "the help stays"
        assert active_tab(app) == "tab-timeline"
        assert not app._main.query_one("#filter", Input).display
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("3")  # back on the main screen: the digit works again
        assert active_tab(app) == "tab-values"


async def test_the_palette_and_the_action_still_switch_panels_where_the_keys_do_not() -> None:
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await filter_opened(app, pilot)

        app.action_show_tab("tab-values")  # not a key: not left to the filter
        assert active_tab(app) == "tab-values"

        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.pause()
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await pilot.press("3", "slash")  # typed into the palette's search, as before
        assert palette.query_one(Input).value == "3/"
        assert active_tab(app) == "tab-values"
        await pilot.press("backspace", "backspace", *"Filter events")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.screen is app._main
        assert active_tab(app) == "tab-events"
        assert isinstance(app.focused, Input)


async def test_escape_then_slash_keeps_the_field_open_when_the_screen_reads_the_blur_late() -> None:
    """``/`` is the app's first: under load it can open the field again before the
    main screen has read the blur that escape left behind (each widget reads its own
    queue). That late blur must not hide the field that has the focus again."""
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        field = await filter_opened(app, pilot)
        await pilot.press("s")

        # The blur of an earlier escape, read only now that the field is focused again.
        app._main.post_message(events.DescendantBlur(field))
        await pilot.pause()

        assert app.focused is field
        assert field.display
        await pilot.press("v")
        assert field.value == "sv"


async def test_a_panel_s_late_focus_does_not_take_back_the_tab_the_next_key_chose() -> None:
    """``6`` focuses the Timeline's table; its pane says so on a message read later.
    ``2``, the app's first, chose Running meanwhile: that late word must not bring
    the Timeline back (under load, ``6`` then ``2`` ended on the Timeline)."""
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await timeline_focused(app, pilot)
        await pilot.press("2")
        assert active_tab(app) == "tab-running"

        tabs = app._main.query_one(TabbedContent)
        tabs.post_message(TabPane.Focused(tabs.get_pane("tab-timeline")))
        await pilot.pause()

        assert active_tab(app) == "tab-running"
