"""What a source of dashboard state can do, and, for what it cannot, the one line that
tells the user so.

The app and the panels never ask which source they show (this process, or a fleet
over OTLP): they ask what the selected agent is offered (`Capabilities`, combined over
the sources serving it by `pygents_tui.state.Sources`). A key for something not
offered answers with that line; a panel that needs it shows the line above what the
source does give (a queue's depth rather than its turns, say).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final, Literal

__all__ = ["PANEL_NEEDS", "Capabilities", "Capability", "Reply"]

Capability = Literal["pause", "queue_contents", "context_items", "program_output"]
"""``pause``: pause and resume an agent; ``queue_contents``: the turns waiting in an
agent's queue (not only how many); ``context_items``: the items of its context queue
and pool (not only their sizes); ``program_output``: what the program prints."""

PANEL_NEEDS: Final[Mapping[str, Capability]] = MappingProxyType(
    {"queue": "queue_contents", "context": "context_items", "output": "program_output"}
)
"""The panels that show something only some sources have, and what that is."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Everything is offered except what ``lacking`` names, each with its one line."""

    lacking: Mapping[Capability, str] = field(default_factory=dict)

    def offers(self, what: Capability) -> bool:
        return what not in self.lacking

    def why_not(self, what: Capability) -> str | None:
        """The line saying the source does not offer ``what``; ``None`` if it does."""
        return self.lacking.get(what)

    def panel_note(self, panel: str) -> str | None:
        """Why ``panel`` shows less here than it can (``None``: it shows it all)."""
        need = PANEL_NEEDS.get(panel)
        return self.lacking.get(need) if need is not None else None

    def lacks(self, what: Capability, line: str) -> Capabilities:
        """These capabilities, without ``what``, which ``line`` says is not offered."""
        return replace(self, lacking={**self.lacking, what: line})

    def gains(self, what: Capability) -> Capabilities:
        """These capabilities, with ``what`` offered too."""
        if what not in self.lacking:
            return self
        return replace(self, lacking={k: v for k, v in self.lacking.items() if k != what})


@dataclass(frozen=True, slots=True)
class Reply:
    """What a source answers to an action it offers: a line for the user, and
    whether it is a warning (nothing was done: no agent selected, or it is gone)."""

    text: str
    warning: bool = False
