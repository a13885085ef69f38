"""What every source knows of a turn, running or ended, and how it ends.

The in-process feeder's records hold the live turn besides (its progress, then its
kept details); the fleet's hold the ids and previews a sender stamped. Both extend
`TurnFacts`, so a turn ends, and is timed, one way."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from pygents import StopReason

__all__ = ["TurnFacts", "by_start", "of_agent"]

T = TypeVar("T", bound="TurnFacts")


@dataclass(slots=True, kw_only=True)
class TurnFacts:
    """A turn as the panels show it; times are on the feeding model's clock."""

    agent: str | None  # the key of the agent that ran it (None: a bare turn, or unknown)
    tool: str
    started: float
    timeout: float = 0.0
    streaming: bool = False
    ended: float | None = None
    stop_reason: StopReason | None = None
    error: str | None = None  # a bounded summary, for a turn that did not complete
    values: int = 0
    trace_id: str | None = None
    # Known running only because its steps' spans arrived before its own (another
    # framework's run, whose span ends with it): its start is its first step's.
    inferred: bool = False
    conversation: str | None = None  # the conversation (session) it belongs to, if said
    # Whose usual pace it is judged against (stuck work), when not its tool's: set only
    # on another framework's run, to its agent's runs (every such run's tool is ``run``).
    paced_as: str | None = None

    def elapsed_at(self, now: float) -> float:
        return (self.ended if self.ended is not None else now) - self.started

    def end(self, reason: StopReason | None, at: float, error: str | None) -> None:
        """End the turn at ``at`` for ``reason``; ``error`` is kept unless it completed."""
        self.ended, self.stop_reason = at, reason
        if error and reason is not StopReason.COMPLETED:
            self.error = error


def of_agent(turns: Iterable[T], agent: str | None) -> list[T]:
    """The turns of the agent with key ``agent`` (``None``: all of them), in order."""
    return list(turns) if agent is None else [turn for turn in turns if turn.agent == agent]


def by_start(turns: Iterable[T], agent: str | None) -> list[T]:
    """The turns of ``agent`` (``None``: all), oldest start first: the running panel's
    order, whatever order a source keeps them in."""
    return sorted(of_agent(turns, agent), key=_started)


def _started(turn: TurnFacts) -> float:
    return turn.started
