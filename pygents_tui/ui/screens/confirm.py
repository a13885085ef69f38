"""A yes/no question before an action that changes something elsewhere.

Acting on agents served through Redis pauses a mailbox, cancels a turn, deletes a
dead letter or stops a worker — on machines the dashboard does not run on, for every
producer. So each is confirmed: ``y`` or ``enter`` does it, ``n`` or ``esc`` does not.
The question names what it acts on; it comes from Redis, so it is plain text.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from pygents_tui.text._plain import plain

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ModalScreen[bool]):
    """Asks ``question``; dismissed with True (yes) or False (no)."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 70; height: auto; border: thick $warning; background: $surface;
        padding: 1 2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", tooltip="do it"),
        Binding("n,escape", "answer(False)", "No", tooltip="leave it as it is"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(plain(self.question, style="bold"), id="confirm-question")
            yield Static(Text("\ny / enter: yes · n / esc: no", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
