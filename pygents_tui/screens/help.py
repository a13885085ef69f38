"""The key map, as a modal screen."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
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
    ("q  ctrl+c", "quit; ctrl+c interrupts (exit status 130)"),
)


def key_map() -> Text:
    """The keys in bold, what they do in plain text (styled spans, never markup)."""
    text = Text()
    for index, (key, what) in enumerate(KEYS):
        if index:
            text.append("\n")
        text.append(f"{key:<16}", style="bold")
        text.append(f" {what}")
    return text


class HelpScreen(ModalScreen[None]):
    """What every key does."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static(Text("pygents-tui — keys\n", style="bold"), id="help-title")
            yield Static(key_map(), id="help-keys")
            yield Static(Text("\nesc or ? to close", style="dim"))
