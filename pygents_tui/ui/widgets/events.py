"""The event log, with a filter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from pygents_tui.state import DashboardView, EventRow
from pygents_tui.ui._filter import state_words
from pygents_tui.ui.widgets._fit import split_label
from pygents_tui.ui.widgets._panel import FollowingLog
from pygents_tui.ui.widgets._rows import RowChoice
from pygents_tui.ui.widgets._text import Legend, legend


def event_fields(event: EventRow) -> dict[str, str]:
    """What the filter matches an event against: its agent (split into service,
    instance and name in listen mode), its kind (also as ``state``, with the older
    words for it: ``state:error`` finds failed turns) and its text."""
    name = event.agent.rpartition("/")[2]
    service, instance, name = split_label(event.agent, name)
    kind = state_words(event.kind)
    return {
        "agent": name,
        "service": service,
        "instance": instance,
        "kind": kind,
        "state": kind,
        "text": event.text,
    }


class EventsPanel(Vertical):
    """The newest events first-to-last; ``/`` filters them (agent, kind or text)."""

    DEFAULT_CSS = """
    EventsPanel { height: 1fr; }
    EventsPanel Log { height: 1fr; }
    EventsPanel #follow-hint { height: 1; color: $warning; display: none; }
    """

    LEGEND: ClassVar[Legend] = (
        ("▶ ✔ ✖", "a turn started, completed, failed"),
        ("◷ ⊘", "a turn timed out, was cancelled"),
        ("← ‖", "a turn was queued; an agent paused"),
        ("+ ♻", "context added; context evicted"),
    )
    """What the log's symbols mean: shown in the help screen and as the tooltip."""

    def __init__(self, view: DashboardView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = view
        self._written = 0
        self.choice = RowChoice()

    def compose(self) -> ComposeResult:
        log = FollowingLog(max_lines=2000, highlight=False, id="event-log")
        log.tooltip = legend(self.LEGEND)
        yield log
        yield Static(FollowingLog.FOLLOW_HINT, id="follow-hint", markup=False)

    def on_mount(self) -> None:
        self.watch(self.log_widget, "following", self._show_following, init=False)

    def _show_following(self, following: bool) -> None:
        self.query_one("#follow-hint").display = not following

    @property
    def log_widget(self) -> FollowingLog:
        return self.query_one("#event-log", FollowingLog)

    def set_filter(self, text: str) -> None:
        """Filter the log by ``text`` (see `pygents_tui.ui._filter`), and write it anew."""
        self.choice.set_query(text)
        self.choice_changed()

    def choice_changed(self) -> None:
        total, log = self.view.event_log()
        self.log_widget.refill(self._lines(log))
        self._written = total

    def refresh_from(self, agent: str | None) -> None:
        """Write the events logged since the last call; every agent's (``agent`` is
        unused: the filter narrows the log)."""
        view = self.view
        total, log = view.event_log()
        fresh = min(total - self._written, len(log))
        if fresh <= 0:
            return
        lines = self._lines(list(log)[-fresh:])
        if lines:
            self.log_widget.write_lines(lines)
        self._written = total

    def _lines(self, entries: Iterable[EventRow]) -> list[str]:
        """The entries that pass the filter, as the log's lines."""
        epoch = self.view.epoch
        return [
            f"{e.at - epoch:8.2f}  {e.agent:<12} {e.kind:<8} {e.text}"
            for e in self.choice.choose(entries, event_fields)
        ]
