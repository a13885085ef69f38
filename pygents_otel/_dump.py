"""A budgeted JSON-ish dump of any value, for content capture.

``json.dumps`` followed by a cut costs as much as the whole value: three results of a
200,000-key dict took seconds with capture on. `dump` walks the value itself and
stops as soon as the text is longer than the budget, so a value costs what its first
``budget`` characters cost, whatever its size.

The text is JSON for what JSON holds (``dict`` with keys made strings as ``json``
does, ``list``, ``tuple``, ``str``, numbers, ``bool``, ``None``), and a JSON array for
sets and deques, a JSON object for dataclasses and other mappings, and a JSON string
holding ``repr()`` for anything else. For JSON values, the text before a final ``…``
is a prefix of what ``json.dumps(value, ensure_ascii=False)`` gives. Cycles, deep
nesting, huge integers and values whose ``repr()`` raises give short placeholders;
nothing raises.

``repr()`` of an object pygents does not know cannot be stopped early: an object whose
own ``repr`` writes megabytes costs that much before it is cut.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from pygents_otel._text import cut

MAX_DEPTH: Final = 32
"""Containers nested deeper than this are written as a placeholder."""

_HUGE_INT_BITS: Final = 4096
"""Above this, ``str(int)`` gets slow (and Python refuses past 4,300 digits)."""

_SEQUENCES: Final = (list, tuple, set, frozenset, deque)


class _Full(Exception):
    """The text is longer than the budget: stop walking."""


class _Out:
    __slots__ = ("budget", "parts", "size")

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > self.budget:
            raise _Full

    def string(self, text: str) -> None:
        """``text`` as a JSON string, encoding no more of it than can still fit."""
        room = self.budget - self.size
        if len(text) > room:  # cannot fit: encode one character too many, and stop
            self.write(json.dumps(text[: room + 1], ensure_ascii=False)[:-1])
        else:
            self.write(json.dumps(text, ensure_ascii=False))


def dump(value: Any, budget: int) -> str:
    """``value`` as JSON-ish text of at most ``budget`` characters, ending in ``…``
    when it was cut (the ellipsis counts: the core's `cut` rule). ``budget`` must be
    at least 1."""
    out = _Out(budget)
    try:
        _write(value, out, 0, set())
    except _Full:  # more than ``budget`` characters were written: cut, so a cut shows
        return cut("".join(out.parts), budget)
    except Exception:  # user code raised while the value was walked (a broken mapping)
        return cut(json.dumps(f"<{type(value).__name__} (could not be serialized)>"), budget)
    return "".join(out.parts)


def safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__} (repr failed)>"


def _write(value: Any, out: _Out, depth: int, open_: set[int]) -> None:
    """Write ``value``; ``open_`` holds the ids of the containers being written."""
    if value is None:
        out.write("null")
    elif value is True or value is False:
        out.write("true" if value else "false")
    elif isinstance(value, str):
        out.string(value)
    elif isinstance(value, int):
        if value.bit_length() <= _HUGE_INT_BITS:
            out.write(int.__repr__(value))
        else:
            out.string(f"<int of {value.bit_length()} bits>")
    elif isinstance(value, float):
        out.write(_float(value))
    elif isinstance(value, (bytes, bytearray)):
        out.string(repr(bytes(value[: out.budget - out.size + 1])))
    elif depth >= MAX_DEPTH:
        out.string(f"<{type(value).__name__} nested too deep>")
    elif id(value) in open_:
        out.string(f"<{type(value).__name__} (circular reference)>")
    elif isinstance(value, Mapping):
        _container(value, out, depth, open_, _pairs(value.items()))
    elif isinstance(value, _SEQUENCES):
        _container(value, out, depth, open_, None)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
        _container(value, out, depth, open_, fields)
    else:
        out.string(safe_repr(value))


def _pairs(items: Any) -> Any:
    for key, item in items:
        yield _key(key), item


def _key(key: Any) -> str:
    """A mapping key as ``json`` makes it a string (``repr`` for other types)."""
    if isinstance(key, str):
        return key
    if key is None or key is True or key is False:
        return "null" if key is None else ("true" if key else "false")
    if isinstance(key, int):
        return int.__repr__(key) if key.bit_length() <= _HUGE_INT_BITS else "<huge int>"
    if isinstance(key, float):
        return _float(key)
    return safe_repr(key)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _container(value: Any, out: _Out, depth: int, open_: set[int], pairs: Any) -> None:
    """A JSON object (``pairs`` of key and value) or, without pairs, a JSON array."""
    open_.add(id(value))
    if pairs is None:
        out.write("[")
        for index, item in enumerate(value):
            if index:
                out.write(", ")
            _write(item, out, depth + 1, open_)
        out.write("]")
    else:
        out.write("{")
        for index, (key, item) in enumerate(pairs):
            if index:
                out.write(", ")
            out.string(key)
            out.write(": ")
            _write(item, out, depth + 1, open_)
        out.write("}")
    open_.discard(id(value))
