"""The main screen: agents on top, the selected agent's panels below.

The screen owns what it shows: the selected agent (its reactive `MainScreen.
selected`, following the agents table's cursor), whether the view is frozen, and
which panel is visible. The app's timer drains the view and asks the screen to
repaint; the screen repaints the status line, the agents table and the one visible
`Panel`, never the hidden ones.
"""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Input, Static, TabbedContent, TabPane

from pygents_tui.state import DashboardView
from pygents_tui.state import Panel as ViewPanel
from pygents_tui.state._stuck import next_stuck
from pygents_tui.text._plain import plain
from pygents_tui.ui._filter import MAX_QUERY
from pygents_tui.ui._output import ProgramOutput
from pygents_tui.ui.screens._status import arrived, status_line
from pygents_tui.ui.widgets import (
    AgentsTable,
    ContextPanel,
    EventsPanel,
    OutputLog,
    QueueTable,
    RunningPanel,
    TimelineTable,
    ValuesLog,
)
from pygents_tui.ui.widgets._attention import budget_toast
from pygents_tui.ui.widgets._fit import fit_label
from pygents_tui.ui.widgets._panel import find_row
from pygents_tui.ui.widgets._rows import Filterable
from pygents_tui.ui.widgets.mailbox import MailboxPanel, MailboxReader

HEADER_ICON: Final = "○"
"""The header's icon (it opens the command palette): Textual's, U+2B58, is in no font
Debian's Chromium has, so ``--web`` drew it as an empty box; this one is in DejaVu
Sans Mono, the browser's monospace font there (tests/tui/test_web_glyphs.py)."""

TABS: tuple[tuple[ViewPanel, str], ...] = (
    ("queue", "Queue"),
    ("running", "Running"),
    ("values", "Values"),
    ("context", "Context"),
    ("events", "Events"),
    ("timeline", "Timeline"),
    ("output", "Output"),
)
"""The panels below the agents table, in the order of their number keys: each its
name in the read API (what `DashboardView.unavailable` is asked about) and
its tab's label."""
_PANELS: dict[str, ViewPanel] = {f"tab-{key}": key for key, _ in TABS}  # by tab id
_PANELS["tab-mailbox"] = "mailbox"  # a tab only where a Redis source reads mailboxes
_LABELS: dict[ViewPanel, str] = {**dict(TABS), "mailbox": "Mailbox"}

_ONE_AGENT = frozenset({"queue", "values", "context", "timeline", "mailbox"})
"""The panels that show the selected agent only (the others show every agent's)."""

_PanelWidget = (
    QueueTable
    | RunningPanel
    | ValuesLog
    | ContextPanel
    | EventsPanel
    | TimelineTable
    | OutputLog
    | MailboxPanel
)  # each a Widget and a Panel


class Panels(TabbedContent):
    """The panels' tabs, shown only by choosing one (`MainScreen.show_tab`, a click).

    Textual's `TabbedContent` also shows the pane of a widget focused from code, on a
    message it reads later. `show_tab` focuses within the pane it shows; the panels'
    keys are the app's first, so the next key can choose another tab before that
    message is read, which then took the tab back (``6`` then ``2`` at once ended on
    the Timeline)."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.prevent_default()
        event.stop()


class MainScreen(Screen[None]):
    """Composes the panels and repaints the visible one for the selected agent."""

    # Out of the footer, which keeps its room for the app's keys: the help lists them.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort", show=False, tooltip="the visible panel's (else the agents')"),
        Binding("S", "sort_reverse", "Reverse sort", show=False, tooltip="the same panel's"),
        # Here, not with the app's 1…7: listed by the help only where a Redis source is.
        Binding("8", "app.show_mailbox", "Mailbox", show=False, tooltip="its Redis mailbox"),
        Binding(
            "exclamation_mark",
            "next_stuck",
            "Next stuck",
            show=False,
            tooltip="the next stuck or orphaned turn, in Running",
        ),
    ]

    selected: reactive[str | None] = reactive(None, init=False)
    """The key of the agent under the agents table's cursor (None: no agent)."""

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """Textual's, the quit key first. The footer draws them in this order and is
        cut where the screen ends; in Textual's the focused panel's own keys (the
        timeline's ``enter``) come first, and a narrow screen would lose the way out."""
        found = super().active_bindings
        first = {key: bound for key, bound in found.items() if bound.binding.action == "quit"}
        return {**first, **found}

    def __init__(
        self, view: DashboardView, output: ProgramOutput, *, agent_width: int = 10
    ) -> None:
        super().__init__()
        self.view = view
        self.output = output
        self.agent_width = agent_width
        self.frozen = False
        self._frozen_at = 0
        self._panels: dict[str, _PanelWidget] = {}
        self._notes: dict[str, Static] = {}
        self._shown_notes: dict[str, str | None] = {}
        self._titles: dict[str, Static] = {}
        self._shown_titles: dict[str, str] = {}
        self._filtering: Filterable | None = None  # what the filter field edits

    def compose(self) -> ComposeResult:
        view = self.view
        self._status = Static("", id="status")
        self._agents_note = Static("", id="agents-note", classes="note")
        self._agents = AgentsTable(view, id="agents", agent_width=self.agent_width)
        panels: tuple[_PanelWidget, ...] = (
            QueueTable(view, id="queue"),
            RunningPanel(view, id="running"),
            ValuesLog(view, id="values"),
            ContextPanel(view, id="context"),
            EventsPanel(view, id="events"),
            TimelineTable(view, id="timeline", agent_width=max(self.agent_width, 12)),
            OutputLog(self.output, id="output"),
        )
        self._panels = {f"tab-{key}": panel for (key, _), panel in zip(TABS, panels, strict=True)}
        self._notes = {tab: Static("", classes="note") for tab in self._panels}
        self._titles = {tab: Static("", classes="panel-title") for tab in self._panels}
        self._agents_title = Static("", id="agents-title", classes="panel-title")
        self._filter = Input(
            placeholder="filter: agent:NAME state:failed tool:T service:S, !negates, regex",
            max_length=MAX_QUERY,
            select_on_focus=False,  # ``/`` again goes on editing the filter in force
            id="filter",
        )
        yield Header(show_clock=False, icon=HEADER_ICON)
        yield self._status
        yield self._agents_note
        yield self._agents_title
        yield self._agents
        yield self._filter
        with Panels(initial="tab-running", id="tabs") as self._tabs:
            for (key, label), panel in zip(TABS, panels, strict=True):
                with TabPane(label, id=f"tab-{key}"):
                    yield self._titles[f"tab-{key}"]
                    yield self._notes[f"tab-{key}"]
                    yield panel
            if view.sources.find(MailboxReader) is not None:  # type: ignore[type-abstract]
                yield from self._mailbox_tab()
        yield Footer()

    def _mailbox_tab(self) -> ComposeResult:
        """The Mailbox panel's tab (key ``8``), composed only where a Redis source is."""
        panel = self._panels["tab-mailbox"] = MailboxPanel(self.view, id="mailbox")
        note = self._notes["tab-mailbox"] = Static("", classes="note")
        title = self._titles["tab-mailbox"] = Static("", classes="panel-title")
        with TabPane(_LABELS["mailbox"], id="tab-mailbox"):
            yield title
            yield note
            yield panel

    # -- repainting --------------------------------------------------------------------

    def refresh_view(self, workload_failed: bool = False) -> None:
        """One tick: the status line, then (unless frozen) the agents table and the
        visible panel, in one batch so that the terminal sees a single update."""
        view = self.view
        status = self._status
        counts = view.counters()
        for passed in view.budget_news():  # each once, frozen or not
            row = find_row(view, passed.scope)
            toast = budget_toast(passed, row.label if row is not None else passed.scope)
            self.app.notify(toast, title="budget", severity="warning", timeout=15, markup=False)
        if self.frozen:
            fresh = arrived(counts) - self._frozen_at
            status.update(Text(f" FROZEN · +{fresh} new record(s) · space to resume"), layout=False)
            status.add_class("frozen")
            return
        status.remove_class("frozen")
        rows = view.agent_rows()
        width = status.content_size.width or self.app.size.width - 2  # its padding
        line = status_line(view, rows, counts, workload_failed, width)
        status.update(plain(line), layout=False)
        with self.app.batch_update():
            self._note(self._agents_note, "agents")
            self._agents.refresh_from(None)
            before = self.selected
            self.selected = self._agents.selected  # a change repaints in the watcher
            if self.selected == before:
                self.refresh_panel()

    def refresh_panel(self) -> None:
        """Repaint the visible panel (only) for the selected agent."""
        tab = self._tabs.active
        panel = self._panels.get(tab)
        if panel is not None:
            self._note(self._notes[tab], _PANELS[tab], self.selected)
            self._title(tab)
            panel.refresh_from(self.selected)

    def _title(self, tab: str) -> None:
        """The visible panel's title line: what it shows, for which agent, and the
        filter and sort in force (the agents table's above it, while it has some)."""
        key = _PANELS[tab]
        label = _LABELS[key]
        row = find_row(self.view, self.selected)
        width = max(self.size.width - 2, 10)
        who = fit_label(row.label, row.name, width // 2) if row is not None else "no agent"
        if key in _ONE_AGENT:
            title = f"{label} of {who}" if row is not None else f"{label} · no agent selected"
        elif key == "output":
            title = "Output of the program"
        else:
            title = f"{label} · every agent · selected: {who}"
        panel = self._panels[tab]
        choice = getattr(panel, "choice", None)
        if choice is not None and choice.describe():
            title += f" · {choice.describe()}"
        self._show_title(self._titles[tab], tab, title)
        chosen = self._agents.choice.describe()
        self._show_title(self._agents_title, "agents", f"Agents · {chosen}" if chosen else "")

    def _show_title(self, line: Static, name: str, title: str) -> None:
        """Repaint a title line only when it changes; an empty one is hidden."""
        if self._shown_titles.get(name) == title:
            return
        self._shown_titles[name] = title
        line.update(plain(title), layout=False)
        line.display = bool(title)

    # -- filtering and sorting ---------------------------------------------------------

    def _target(self) -> Filterable:
        """What ``/`` and ``s`` act on: the visible panel when it filters, else the
        agents table (Queue, Context and Output show one agent's items, unfiltered)."""
        panel = self._panels.get(self._tabs.active)
        if panel is not None and hasattr(panel, "choice"):
            return panel  # type: ignore[return-value]
        return self._agents

    def start_filter(self, tab: str | None = None) -> None:
        """Show ``tab`` (if given) and open the filter field on what it filters, with
        the filter in force to edit."""
        if tab is not None:
            self.show_tab(tab)
        self._filtering = self._target()
        self._filter.value = self._filtering.choice.typed
        self._filter.cursor_position = len(self._filter.value)
        self._filter.display = True
        self._filter.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        target = self._filtering
        if target is None:
            return
        target.choice.set_query(event.value)
        target.choice_changed()
        self.refresh_panel()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self._agents.focus()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """Leaving the field keeps the filter (the title line shows it) and hides it;
        unless the field has the focus again by the time this is handled (``/`` is the
        app's first, and can open the field before this screen reads an older blur)."""
        if event.widget is self._filter and not self._filter.has_focus:
            self._filter.display = False
            self._filtering = None

    def _sort(self, reverse: bool) -> None:
        target = self._target()
        if not target.choice.sorts:
            target = self._agents
        if reverse:
            target.choice.flip_sort()
        else:
            target.choice.cycle_sort()
        target.choice_changed()
        self.refresh_panel()

    def action_sort(self) -> None:
        """The next sort column of the visible panel (else of the agents table)."""
        self._sort(reverse=False)

    def action_sort_reverse(self) -> None:
        """Reverse the sort of the visible panel (else of the agents table)."""
        self._sort(reverse=True)

    def _note(self, note: Static, panel: ViewPanel, agent: str | None = None) -> None:
        """Say in one line what the view cannot show of ``panel`` for ``agent`` (hidden
        when everything is shown); repainted only when the line changes."""
        line = self.view.unavailable(panel, agent)
        if self._shown_notes.get(panel, "") == line:
            return
        self._shown_notes[panel] = line
        note.update(plain(f"• {line}" if line else ""), layout=False)
        note.display = line is not None

    def watch_selected(self) -> None:
        if not self.frozen:
            self.refresh_panel()

    def toggle_freeze(self) -> None:
        """Stop (or resume) repainting; what arrives meanwhile is counted."""
        self.frozen = not self.frozen
        self._frozen_at = arrived(self.view.counters())

    def show_tab(self, tab: str) -> None:
        """Show the panel ``tab`` and give the focus to what moves in it, so that its
        keys (``enter`` in the timeline, the arrows) work at once."""
        self._tabs.active = tab
        panel = self._panels.get(tab)
        if panel is not None:
            self._navigable(panel).focus()

    def action_next_stuck(self) -> None:
        """Select the agent of the next stuck turn (wrapping round) and show it in
        Running, marked."""
        running = self._panels["tab-running"]
        assert isinstance(running, RunningPanel)
        key = next_stuck(self.view.stuck_turns(), running.marked)
        turn = self.view.find_turn(key) if key is not None else None
        if turn is None:
            self.app.notify("nothing stuck", markup=False)
            return
        running.marked = key
        if turn.agent is not None and turn.agent in self._agents.rows:
            self._agents.move_cursor(row=self._agents.get_row_index(turn.agent), animate=False)
            self.selected = turn.agent
        self.show_tab("tab-running")
        self.refresh_panel()

    def _navigable(self, panel: _PanelWidget) -> Widget:
        """The widget of ``panel`` that keys move in: the panel itself if it takes the
        focus, the log of the events (a container that takes no focus itself), and
        otherwise the agents table: Running and Context show the agent chosen there."""
        if isinstance(panel, EventsPanel):
            return panel.log_widget
        return panel if panel.can_focus else self._agents

    # -- following the agents table ----------------------------------------------------

    @on(DataTable.RowHighlighted, "#agents")
    @on(DataTable.RowSelected, "#agents")
    def _follow_cursor(self) -> None:
        self.selected = self._agents.selected

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        if not self.frozen:
            self.refresh_panel()
