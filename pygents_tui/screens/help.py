"""The key map, as a modal screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "move in the focused table"),
    ("tab  shift+tab", "move between panels"),
    ("1 … 6", "panels: queue running values context events timeline"),
    ("enter", "timeline: inspect the turn"),
    ("esc", "back (close a screen, leave the filter)"),
    ("p", "pause / resume the selected agent"),
    ("space", "freeze the view (data keeps arriving)"),
    ("/", "filter the event log"),
    ("end", "values and events: follow the newest again"),
    ("?", "this help"),
    ("ctrl+p", "command palette"),
    ("q", "quit"),
)


class HelpScreen(ModalScreen[None]):
    """What every key does."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        lines = "\n".join(f"[b]{key:<16}[/b] {what}" for key, what in KEYS)
        with Vertical(id="help-dialog"):
            yield Static("[b]pygents-tui — keys[/b]\n", id="help-title")
            yield Static(lines, id="help-keys")
            yield Static("\n[dim]esc or ? to close[/dim]")
