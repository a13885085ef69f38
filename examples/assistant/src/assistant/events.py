"""What a session reports: the events a run streams, how it ended, the tokens it used."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Event", "Outcome", "TokenUsage"]


@dataclass
class Event:
    """What :meth:`Session.run` streams: ``text`` (a piece of the model's reply),
    ``tool`` (a call and its result), ``limit`` (a limit ended the run) and ``done``
    (the summary, last)."""

    kind: str
    text: str
    session: str


@dataclass(frozen=True)
class Outcome:
    """How the last run ended: ``reason`` is ``stop`` (the model called it), ``answer``
    (it replied without calling a tool), ``limit`` (``limit`` names which), ``error`` or
    ``cancelled``."""

    summary: str
    reason: str
    limit: str | None = None


@dataclass
class TokenUsage:
    """Tokens the model reported for this session, over all its runs."""

    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, part: object) -> None:
        """Count a usage part of the model's stream (any object with ``input_tokens`` /
        ``output_tokens``; ``None`` where the endpoint did not say)."""
        for name in ("input_tokens", "output_tokens"):
            value = getattr(part, name, None)
            if type(value) is int:
                setattr(self, name, getattr(self, name) + value)
