"""The event log, with a filter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from pygents_tui.state import DashboardView, EventRow
from pygents_tui.widgets._panel import FollowingLog
from pygents_tui.widgets._text import Legend, legend

_ALIASES = {"failed": "error"}
"""Older names of event kinds, still matched by the filter (a failed turn's kind was
``error`` before the dashboard named it ``failed`` everywhere)."""


class EventsPanel(Vertical):
    """The newest events first-to-last; ``/`` focuses the filter (agent, kind or text)."""

    DEFAULT_CSS = """
    EventsPanel { height: 1fr; }
    EventsPanel Input { height: 3; }
    EventsPanel Log { height: 1fr; }
    EventsPanel #follow-hint { height: 1; color: $warning; display: none; }
    """

    LEGEND: ClassVar[Legend] = (
        ("▶ ✔ ✖", "a turn started, completed, failed"),
        ("⏱ ⊘", "a turn timed out, was cancelled"),
        ("← ⏸", "a turn was queued; an agent paused"),
        ("+ ♻", "context added; context evicted"),
    )
    """What the log's symbols mean: shown in the help screen and as the tooltip."""

    def __init__(self, model: DashboardView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self._written = 0
        self._filter = ""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter events (agent, kind or text) — / to focus", id="filter")
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
        self._filter = text.strip().lower()
        total, log = self.model.event_log()
        self.log_widget.refill(self._lines(log))
        self._written = total

    def on_input_changed(self, event: Input.Changed) -> None:
        self.set_filter(event.value)

    def refresh_from(self, agent: str | None) -> None:
        """Write the events logged since the last call; every agent's (``agent`` is
        unused: the filter narrows the log)."""
        model = self.model
        total, log = model.event_log()
        fresh = min(total - self._written, len(log))
        if fresh <= 0:
            return
        lines = self._lines(list(log)[-fresh:])
        if lines:
            self.log_widget.write_lines(lines)
        self._written = total

    def _lines(self, entries: Iterable[EventRow]) -> list[str]:
        """The entries that pass the filter, as the log's lines."""
        needle = self._filter
        epoch = self.model.epoch
        return [
            f"{e.at - epoch:8.2f}  {e.agent:<12} {e.kind:<8} {e.text}"
            for e in entries
            if not needle
            or needle in f"{e.agent} {e.kind} {_ALIASES.get(e.kind, '')} {e.text}".lower()
        ]
