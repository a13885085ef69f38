"""What a source of dashboard state can do, and, for what it cannot, the one line that
tells the user so.

The app and the panels never ask which source they show (this process, or a fleet
over OTLP): they ask what the selected agent is offered (`Capabilities`, combined over
the sources serving it by `pygents_tui.state.Sources`). A key for something not
offered answers with that line; a panel that needs it shows the line above what the
source does give (a queue's depth rather than its turns, say).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final, Literal

__all__ = ["OPT_IN", "PANEL_NEEDS", "Capabilities", "Capability", "Reply"]

Capability = Literal[
    "pause",
    "queue_contents",
    "context_items",
    "program_output",
    "mailbox",
    "cancel",
    "dead_letters",
    "drain",
]
"""``pause``: pause and resume an agent; ``queue_contents``: the turns waiting in an
agent's queue (not only how many); ``context_items``: the items of its context queue
and pool (not only their sizes); ``program_output``: what the program prints;
``mailbox``: its Redis mailbox (workers, running turns, dead letters); ``cancel``:
cancel one of its running turns; ``dead_letters``: retry or drop its dead letters;
``drain``: drain and stop one of its workers."""

PANEL_NEEDS: Final[Mapping[str, Capability]] = MappingProxyType(
    {
        "queue": "queue_contents",
        "context": "context_items",
        "output": "program_output",
        "mailbox": "mailbox",
    }
)
"""The panels that show something only some sources have, and what that is."""


OPT_IN: Final[Mapping[Capability, str]] = MappingProxyType(
    {
        "mailbox": "no mailbox: this agent is not served from a Redis mailbox that this "
        "dashboard reads (pygents-tui listen --redis URL)",
        "cancel": "cancelling a turn needs its Redis mailbox: only agents served from one "
        "(pygents-tui listen --redis URL --control) can have a turn cancelled",
        "dead_letters": "dead letters are those of a Redis mailbox: only agents served from "
        "one (pygents-tui listen --redis URL --control) have them",
        "drain": "draining a worker needs its Redis mailbox: only agents served from one "
        "(pygents-tui listen --redis URL --control) have workers to drain",
    }
)
"""The capabilities that only a source made for them offers (the Redis mailboxes':
no other source has workers or dead letters), each with the line said where none
does. Every other capability is offered unless a source says it lacks it, so the
sources written before these existed need no change."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Everything is offered except what ``lacking`` names, each with its one line,
    and the `OPT_IN` capabilities, offered only when ``granted``."""

    lacking: Mapping[Capability, str] = field(default_factory=dict)
    granted: frozenset[Capability] = frozenset()

    def offers(self, what: Capability) -> bool:
        return what not in self.lacking and (what not in OPT_IN or what in self.granted)

    def why_not(self, what: Capability) -> str | None:
        """The line saying the source does not offer ``what``; ``None`` if it does."""
        found = self.lacking.get(what)
        if found is None and what in OPT_IN and what not in self.granted:
            return OPT_IN[what]
        return found

    def panel_note(self, panel: str) -> str | None:
        """Why ``panel`` shows less here than it can (``None``: it shows it all)."""
        need = PANEL_NEEDS.get(panel)
        return self.why_not(need) if need is not None else None

    def lacks(self, what: Capability, line: str) -> Capabilities:
        """These capabilities, without ``what``, which ``line`` says is not offered."""
        return replace(self, lacking={**self.lacking, what: line}, granted=self.granted - {what})

    def gains(self, what: Capability) -> Capabilities:
        """These capabilities, with ``what`` offered too."""
        if self.offers(what):
            return self
        lacking = {k: v for k, v in self.lacking.items() if k != what}
        return replace(self, lacking=lacking, granted=self.granted | {what})


@dataclass(frozen=True, slots=True)
class Reply:
    """What a source answers to an action it offers: a line for the user, and
    whether it is a warning (nothing was done: no agent selected, or it is gone).

    A source that acts over the network answers with ``then``: ``text`` is then the
    question the user confirms (yes/no) before ``then`` runs, and ``then``'s own reply
    (which must not raise: a failure is a warning reply) is what is shown after."""

    text: str
    warning: bool = False
    then: Callable[[], Awaitable[Reply]] | None = None
