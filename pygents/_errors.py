"""Exception and warning classes raised by pygents.

Every message names the object involved and says how to fix the problem, and
shows user values through `brief`, never a whole ``repr``.

User text is cut to size by `cut`, the one rule for the whole core: one ``…``
marks the cut, and the text, ellipsis included, fits the limit it was cut to, so
a limit is a promise about what the reader sees. ``pygents_otel`` and
``pygents_tui`` import this function (``pygents_otel._text``,
``pygents_tui.text._cut``): one implementation, so the three cannot drift apart.
"""

from __future__ import annotations

import reprlib
from enum import Enum
from itertools import islice
from typing import Any, Final, Literal

__all__ = [
    "ELLIPSIS",
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
    "cut",
]

ELLIPSIS: Final = "…"
"""What marks a cut: one character, so a cut costs a single character of the limit."""


def cut(text: str, limit: int, keep: Literal["head", "tail", "middle"] = "head") -> str:
    """``text`` if it fits in ``limit`` characters, else ``limit`` characters of it
    with `ELLIPSIS` where text was left out: its head kept (the default), its tail
    (a stack trace, whose end matters) or both ends (an id, told apart by either)."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[: max(limit, 0)]
    room = limit - 1
    if keep == "head":
        return text[:room] + ELLIPSIS
    if keep == "tail":
        return ELLIPSIS + text[len(text) - room :]
    head = room // 2
    return text[:head] + ELLIPSIS + text[len(text) - (room - head) :]


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
        self.fillvalue = ELLIPSIS

    def repr1(self, x: Any, level: int) -> str:
        cls = type(x)
        if cls not in _BUILTINS and not isinstance(x, (bool, Enum)):
            for base in _BUILTINS:
                if isinstance(x, base):
                    shaped: str = getattr(self, f"repr_{base.__name__}")(x, level)
                    return shaped
        return super().repr1(x, level)

    def repr_str(self, x: str, level: int) -> str:
        # A middle cut, with a share of the room for each string inside a container.
        width = self.maxstring if level == self.maxlevel else max(12, self.maxstring // 4)
        if len(x) > 2 * width:  # only its ends can show: repr no more than them
            x = x[:width] + x[len(x) - width :]
        return cut(repr(x), width, "middle")

    def repr_int(self, x: int, level: int) -> str:
        bits = x.bit_length()
        if bits > 4 * self.maxlong:  # more digits than maxlong: don't convert it all
            return f"<int of about {int(bits * 0.30103) + 1} digits>"
        return super().repr_int(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{" + self.fillvalue + "}"
        pieces = [
            f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
            for k, v in islice(x.items(), self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append(self.fillvalue)
        return "{" + ", ".join(pieces) + "}"

    def repr_set(self, x: set[Any], level: int) -> str:
        return self._unordered(x, level, "set()", "{", "}")

    def repr_frozenset(self, x: frozenset[Any], level: int) -> str:
        return self._unordered(x, level, "frozenset()", "frozenset({", "})")

    def _unordered(self, x: Any, level: int, empty: str, left: str, right: str) -> str:
        if not x:
            return empty
        if level <= 0:
            return f"{left}{self.fillvalue}{right}"
        pieces = [self.repr1(item, level - 1) for item in islice(x, self.maxset)]
        if len(x) > self.maxset:
            pieces.append(self.fillvalue)
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
    return cut(text, limit)
