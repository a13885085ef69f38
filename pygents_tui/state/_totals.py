"""What the dashboard counts of one agent, whatever source tells it: its phase, its
turns by how they ended, its values and evictions, its last error, and its
throughput over the last minute.

Each source reports the same facts in its own shape (core scopes in-process, OTLP
records over the wire); they all end here, so a turn that ends is counted, logged and
charted by one piece of code (`AgentTotals.turn_ended`), and what each lifecycle
event does to an agent's phase is written once: `AgentTotals.began` (a run or a turn
started), `AgentTotals.hooked` (a pause or resume hook, by `HOOK_PHASE`),
`AgentTotals.reported` (a snapshot's state, one of `PHASES`) and
`AgentTotals.run_ended` (by `RUN_PHASE`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

from pygents import AgentHook, StopReason
from pygents_tui.state._turns import TurnFacts

__all__ = ["HOOK_PHASE", "PHASES", "RUN_PHASE", "THROUGHPUT_SECONDS", "AgentTotals", "Throughput"]

THROUGHPUT_SECONDS: Final = 60

RUN_PHASE: Final = {StopReason.COMPLETED: "finished", StopReason.CANCELLED: "idle"}
"""An agent's phase after a run that ended for a reason; any other reason: failed."""

HOOK_PHASE: Final = {AgentHook.ON_PAUSE: "paused", AgentHook.ON_RESUME: "running"}
"""An agent's phase after one of its hooks ran; other hooks leave it as it was."""

PHASES: Final = frozenset(("idle", "running", "paused"))
"""The phases an agent reports of itself (a snapshot's state); the others are the
dashboard's: how its last run ended."""


class Throughput:
    """Turns completed per whole second over the last minute; quiet seconds count
    as zero once `roll` moves the window up to now."""

    __slots__ = ("buckets", "second")

    def __init__(self, seconds: int = THROUGHPUT_SECONDS) -> None:
        self.buckets: deque[int] = deque([0] * seconds, maxlen=seconds)
        self.second = 0  # the whole second the last bucket counts (0: none yet)

    def roll(self, now: float) -> bool:
        """Move the window up to the second of ``now``; True if it moved."""
        second = int(now)
        if not self.second or second <= self.second:
            return False
        for _ in range(min(second - self.second, len(self.buckets))):
            self.buckets.append(0)
        self.second = second
        return True

    def tick(self, at: float) -> None:
        """Count a completed turn in the second of ``at``."""
        if not self.second:
            self.second = int(at)
        self.roll(at)
        self.buckets[-1] += 1


@dataclass(slots=True, kw_only=True)
class AgentTotals:
    """An agent's phase and totals. Each source's agent record extends it with what
    that source adds (the in-process one its turns, the fleet one its service and
    live sizes); the fields are keyword-only so that those come first."""

    phase: str = "idle"  # idle / running / paused / finished / failed
    completed: int = 0
    failed: int = 0
    timed_out: int = 0
    cancelled: int = 0
    values: int = 0
    evictions: int = 0
    last_error: str | None = None
    rate: Throughput = field(default_factory=Throughput)

    @property
    def throughput(self) -> deque[int]:
        """Turns completed per second, oldest first (for a sparkline)."""
        return self.rate.buckets

    def turn_ended(self, turn: TurnFacts) -> tuple[str, str]:
        """Count ``turn``, one of this agent's, which has ended (`TurnFacts.end`); the
        event log's kind and line for it."""
        reason, tool = turn.stop_reason, turn.tool
        at = turn.ended if turn.ended is not None else turn.started
        if reason is StopReason.COMPLETED:
            self.completed += 1
            self.rate.tick(at)
            return "turn", f"✔ {tool} {at - turn.started:.2f}s"
        if reason is StopReason.TIMEOUT:
            self.timed_out += 1
            return "timeout", f"◷ {tool} timed out after {turn.timeout:g}s"
        if reason is StopReason.ERROR:
            self.failed += 1
            self.last_error = turn.error
            return "failed", f"✖ {tool}: {turn.error or 'failed'}"
        self.cancelled += 1
        return "turn", f"⊘ {tool} cancelled"

    def began(self) -> None:
        """A run or a turn of this agent started: it is running, unless paused (a
        pause outlasts both)."""
        if self.phase != "paused":
            self.phase = "running"

    def hooked(self, hook: AgentHook) -> None:
        """One of this agent's hooks ran: take the phase it leaves (`HOOK_PHASE`)."""
        phase = HOOK_PHASE.get(hook)
        if phase is not None:
            self.phase = phase

    def reported(self, state: str | None) -> None:
        """The agent reported ``state`` of itself: take it if it is a phase, except
        that idle does not hide how the last run ended."""
        if (
            state is not None
            and state in PHASES
            and not (state == "idle" and self.phase in ("finished", "failed"))
        ):
            self.phase = state

    def run_ended(self, reason: StopReason | None) -> str:
        """Take the phase a run that ended for ``reason`` leaves; the log line for it."""
        self.phase = RUN_PHASE.get(reason, "failed") if reason is not None else "failed"
        return f"run ended: {reason}"
