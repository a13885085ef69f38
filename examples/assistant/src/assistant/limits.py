"""How much one message may cost: steps, model calls, wall time and failed calls.

A model that never calls ``stop`` (or keeps calling tools that fail) would otherwise
loop for as long as the endpoint answers. Every :class:`~session.Session` has
:class:`Limits`; each :meth:`~session.Session.run` gets a fresh :class:`Budget` from
them, so the limits bound each message of a conversation, not the conversation as a
whole. When one is reached the run ends at once, says which limit in a ``limit``
event and in :attr:`~session.Session.outcome`, answers the calls it did not run, and
leaves nothing queued.

Commands have their own cap: ``bash`` refuses a ``timeout`` above
:data:`MAX_COMMAND_TIMEOUT` seconds (the schema the model is offered says so).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_COMMAND_TIMEOUT",
    "LIMIT_NAMES",
    "MAX_COMMAND_TIMEOUT",
    "Budget",
    "Limits",
]

#: The longest a single ``bash`` command may run, in seconds.
MAX_COMMAND_TIMEOUT: Final = 600.0
#: A command's timeout when the model does not give one, in seconds.
DEFAULT_COMMAND_TIMEOUT: Final = 30.0

#: Each limit's name (as reported in events and outcomes) and the field that sets it.
LIMIT_NAMES: Final = {
    "steps": "max_steps",
    "model_calls": "max_model_calls",
    "wall_time": "max_seconds",
    "errors": "max_errors",
}


@dataclass(frozen=True)
class Limits:
    """What one message (one ``Session.run``) may use before the run is ended.

    * ``max_steps`` — tool calls the model makes (``stop`` aside), run or refused;
    * ``max_model_calls`` — requests to the model;
    * ``max_seconds`` — wall time from the message to the end of the run; each turn's
      timeout is also cut to the time left, so a slow command cannot overrun it by much;
    * ``max_errors`` — tool calls that failed (raised, timed out, or were refused for
      bad arguments or an unknown tool), after which the model is stopped rather than
      left to retry without end.
    """

    max_steps: int = 50
    max_model_calls: int = 30
    max_seconds: float = 900.0
    max_errors: int = 10

    def __post_init__(self) -> None:
        for field in ("max_steps", "max_model_calls", "max_errors"):
            value = getattr(self, field)
            if type(value) is not int or value < 1:
                raise ValueError(f"Limits.{field} must be a positive int, got {value!r:.40}")
        seconds = self.max_seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not math.isfinite(seconds)
            or seconds <= 0
        ):
            raise ValueError(
                f"Limits.max_seconds must be a positive finite number, got {seconds!r:.40}"
            )


class Budget:
    """One run's use of its :class:`Limits`, measured with ``clock`` (seconds).

    The clock is injectable so that the wall-time limit can be tested without waiting.
    Each ``before_*`` method answers the name of the limit that forbids going on, or
    ``None``; the caller counts what it then does.
    """

    def __init__(self, limits: Limits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._start = clock()
        self.steps = 0
        self.model_calls = 0
        self.errors = 0

    def elapsed(self) -> float:
        return self._clock() - self._start

    def remaining(self) -> float:
        """Seconds left before the wall-time limit (never below a small positive floor,
        since it becomes a turn's timeout)."""
        return max(self.limits.max_seconds - self.elapsed(), 0.001)

    def out_of_time(self) -> bool:
        return self.elapsed() >= self.limits.max_seconds

    def _wall(self) -> str | None:
        return "wall_time" if self.out_of_time() else None

    def before_step(self) -> str | None:
        if self.steps >= self.limits.max_steps:
            return "steps"
        return self._wall()

    def before_model_call(self) -> str | None:
        if self.model_calls >= self.limits.max_model_calls:
            return "model_calls"
        return self._wall()

    def failed(self) -> str | None:
        """Count one failed call; ``"errors"`` once there were more than allowed."""
        self.errors += 1
        return "errors" if self.errors > self.limits.max_errors else None

    def describe(self, limit: str) -> str:
        """A sentence for the model and the user: which limit, its value, how to change it."""
        limits = self.limits
        what = {
            "steps": f"{limits.max_steps} tool calls",
            "model_calls": f"{limits.max_model_calls} model calls",
            "wall_time": f"{limits.max_seconds:g} seconds",
            "errors": f"{limits.max_errors} failed tool calls",
        }[limit]
        return f"the {limit} limit was reached ({what} per message; Limits.{LIMIT_NAMES[limit]})"
