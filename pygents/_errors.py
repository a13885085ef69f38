"""Exception and warning classes raised by pygents.

Every message names the object involved and says how to fix the problem.
"""

from __future__ import annotations

__all__ = [
    "CompletionCheckReturnError",
    "FixedKwargOverrideWarning",
    "PygentsError",
    "SafeExecutionError",
    "TurnTimeoutError",
    "UnregisteredAgentError",
    "UnregisteredError",
    "UnregisteredHookError",
    "UnregisteredToolError",
    "WrongRunMethodError",
]


class PygentsError(Exception):
    """Base class of every error pygents raises on its own behalf."""


class SafeExecutionError(PygentsError):
    """An object was started or changed while it is running (or paused)."""


class WrongRunMethodError(PygentsError, TypeError):
    """``returning()`` was used on a streaming tool, or ``yielding()`` on a coroutine tool."""


class TurnTimeoutError(PygentsError, TimeoutError):
    """A turn ran past its timeout."""


class CompletionCheckReturnError(PygentsError, TypeError):
    """A completion-check tool returned something other than a ``bool``."""


class UnregisteredError(PygentsError, LookupError):
    """A name was looked up in a registry that does not hold it."""


class UnregisteredToolError(UnregisteredError):
    """No tool is registered under the requested name."""


class UnregisteredAgentError(UnregisteredError):
    """No agent is registered under the requested name."""


class UnregisteredHookError(UnregisteredError):
    """No hook is registered under the requested name."""


class FixedKwargOverrideWarning(UserWarning):
    """A call-time keyword argument replaced a tool's or hook's fixed keyword argument."""
