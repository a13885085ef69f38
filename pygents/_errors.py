"""Exception and warning classes raised by pygents.

Every message names the object involved and says how to fix the problem, and
shows user values through `brief`, never a whole ``repr``.
"""

from __future__ import annotations

import reprlib
from enum import Enum
from itertools import islice
from typing import Any

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
    "brief",
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


_BUILTINS: tuple[type, ...] = (str, int, dict, list, tuple, set, frozenset)


class _BriefRepr(reprlib.Repr):
    """``reprlib`` with every cost bounded by the output, not by the value.

    ``reprlib`` already slices strings and the first few items of containers;
    it still sorts a whole dict or set before taking its first keys, turns a whole
    int into decimal text (slow, and refused past 4,300 digits), and falls back to
    the full ``repr`` for subclasses of the built-in types. Those are replaced here.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 2
        self.maxtuple = self.maxlist = self.maxdeque = self.maxset = self.maxfrozenset = 4
        self.maxdict = 4
        self.maxstring = self.maxother = self.maxlong = limit

    def repr1(self, x: Any, level: int) -> str:
        cls = type(x)
        if cls not in _BUILTINS and not isinstance(x, (bool, Enum)):
            for base in _BUILTINS:
                if isinstance(x, base):
                    shaped: str = getattr(self, f"repr_{base.__name__}")(x, level)
                    return shaped
        return super().repr1(x, level)

    def repr_str(self, x: str, level: int) -> str:
        # reprlib's cut, with a share of the room for each string inside a container.
        width = self.maxstring if level == self.maxlevel else max(12, self.maxstring // 4)
        text = repr(x[:width])
        if len(text) > width:
            head = max(0, (width - 3) // 2)
            tail = max(0, width - 3 - head)
            text = repr(x[:head] + x[len(x) - tail :])
            text = text[:head] + "..." + text[len(text) - tail :]
        return text

    def repr_int(self, x: int, level: int) -> str:
        bits = x.bit_length()
        if bits > 4 * self.maxlong:  # more digits than maxlong: don't convert it all
            return f"<int of about {int(bits * 0.30103) + 1} digits>"
        return super().repr_int(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
            for k, v in islice(x.items(), self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append("...")
        return "{" + ", ".join(pieces) + "}"

    def repr_set(self, x: set[Any], level: int) -> str:
        return self._unordered(x, level, "set()", "{", "}")

    def repr_frozenset(self, x: frozenset[Any], level: int) -> str:
        return self._unordered(x, level, "frozenset()", "frozenset({", "})")

    def _unordered(self, x: Any, level: int, empty: str, left: str, right: str) -> str:
        if not x:
            return empty
        if level <= 0:
            return f"{left}...{right}"
        pieces = [self.repr1(item, level - 1) for item in islice(x, self.maxset)]
        if len(x) > self.maxset:
            pieces.append("...")
        return left + ", ".join(pieces) + right


_BRIEF: dict[int, _BriefRepr] = {}


def brief(value: object, limit: int = 80) -> str:
    """A ``repr`` of ``value`` for an error message: at most ``limit`` characters.

    Messages that quote what the user passed must stay readable (and cheap) when
    the value is a megabyte string, a 200,000-key dict or an int of 5,000 digits.
    Strings, numbers and containers cost O(limit) to describe; another object's
    own ``__repr__`` is called once and its result cut to size.
    """
    shaper = _BRIEF.get(limit)
    if shaper is None:
        shaper = _BRIEF.setdefault(limit, _BriefRepr(limit))
    try:
        text = shaper.repr(value)
    except Exception:  # a broken __repr__ deep inside a container
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
