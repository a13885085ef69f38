"""Safe, one-line previews of arbitrary values: huge, binary, multi-line, or with a
``repr`` that raises — the dashboard must show anything without breaking.

A preview costs O(its width), whatever the value. The dashboard previews every value
an agent produces, in the agents' own event loop, so building a 200,000-item list's
full ``repr`` only to cut it to one line would stall the agents and the keyboard
alike. Containers are therefore walked, not repr'd: a few items, a few levels deep,
until a character budget runs out (the way `reprlib` does, with a budget on
top). Objects the walk does not know are asked for their own ``repr``, guarded: one
that raises is named with its error, and a type whose ``repr`` once came back huge or
slow is shown by its name alone from then on, so that it costs once, not per value.
"""

from __future__ import annotations

import builtins
import dataclasses
import reprlib
import time
import weakref
from array import array
from collections import deque
from collections.abc import Iterable
from itertools import islice
from typing import Any, Final

from pygents_tui.text._cut import ELLIPSIS, cut
from pygents_tui.text._visible import visible

__all__ = ["preview"]

_LONG: Final = 4096  # characters: a repr longer than this marks its type as costly
_SLOW: Final = 0.002  # seconds: a repr slower than this marks its type as costly
_BIG_INT_BITS: Final = 10_000  # past this, an int's decimal digits cost too much
_CONTAINERS: Final = (list, tuple, set, frozenset, dict, deque, array)
_SCALARS: Final = frozenset((float, complex, bool, type(None), type(...)))
_REPR_FILES: Final = frozenset((dataclasses.__file__, reprlib.__file__))
_EXCEPTION_REPR: Final[object] = BaseException.__repr__


def _dataclass_repr(kind: type) -> bool:
    """True when ``kind`` shows the repr that ``@dataclass`` wrote for it (it wraps it
    with a recursion guard defined in the standard library)."""
    code = getattr(kind.__repr__, "__code__", None)
    return code is not None and code.co_filename in _REPR_FILES


class _Budgeted(reprlib.Repr):
    """`reprlib.Repr` with insertion order (no sorting of big sets and dicts),
    dispatch by ``isinstance`` (subclasses of containers are walked too), a character
    budget shared by the whole value, and guarded ``repr`` for everything else."""

    def __init__(self) -> None:
        super().__init__()
        self.fillvalue = ELLIPSIS
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = 12
        self.maxdeque = self.maxarray = 12
        self.maxdict = 8
        self.maxlong = 40
        self.maxstring = self.maxother = 80
        self.budget = 0
        self.costly: weakref.WeakSet[type] = weakref.WeakSet()

    def bounded(self, value: Any, width: int) -> str:
        """``value`` in about ``width`` characters (a little more; the caller cuts)."""
        self.budget = width + 8
        self.maxstring = self.maxother = max(width, 8)
        return self.repr1(value, self.maxlevel)

    def repr1(self, x: Any, level: int) -> str:
        if self.budget <= 0:
            return self.fillvalue
        kind = type(x)
        if kind is int or kind is str or kind in _SCALARS:
            text = self._leaf(x)  # the common case, first
            self.budget -= len(text)
            return text
        if isinstance(x, _CONTAINERS):
            return self._container(x, level)
        if isinstance(x, BaseException) and kind.__repr__ is _EXCEPTION_REPR:
            args = x.args if isinstance(x.args, tuple) else ()
            return kind.__name__ + self._items(args, level, "(", ")", len(args))
        if dataclasses.is_dataclass(x) and _dataclass_repr(kind):
            fields = [f.name for f in dataclasses.fields(x) if f.repr]
            pairs = ((name, getattr(x, name)) for name in fields)
            return kind.__name__ + self._items(pairs, level, "(", ")", len(fields), named=True)
        text = self._leaf(x)
        self.budget -= len(text)
        return text

    # -- containers: a few items each, a few levels deep ---------------------------------

    def _container(self, x: Any, level: int) -> str:
        kind = type(x)
        if isinstance(x, dict):
            body = self._items(dict.items(x), level, "{", "}", len(x), mapping=True)
        elif isinstance(x, tuple):
            fields = getattr(x, "_fields", None)
            if isinstance(fields, tuple) and len(fields) == len(x):  # a named tuple
                pairs = zip(fields, x, strict=True)
                return kind.__name__ + self._items(pairs, level, "(", ")", len(x), named=True)
            body = self._items(x, level, "(", ",)" if len(x) == 1 else ")", len(x))
        elif isinstance(x, (set, frozenset)):
            if not x:
                return f"{kind.__name__}()"
            body = self._items(x, level, "{", "}", len(x))
            return body if kind is set else f"{kind.__name__}({body})"
        elif isinstance(x, array):
            return f"array({x.typecode!r}, {self._items(x, level, '[', ']', len(x))})"
        else:
            body = self._items(x, level, "[", "]", len(x))
        if kind in (list, tuple, dict):
            return body
        return f"{kind.__name__}({body})"

    def _items(
        self,
        items: Iterable[Any],
        level: int,
        left: str,
        right: str,
        size: int,
        *,
        mapping: bool = False,
        named: bool = False,
    ) -> str:
        """At most ``maxlist`` items of ``items`` (never more are iterated)."""
        if size and level <= 0:
            return f"{left}{self.fillvalue}{right}"
        shown = self.maxdict if mapping else self.maxlist
        pieces: list[str] = []
        for item in islice(items, shown):
            if self.budget <= 0:
                break
            if mapping:
                key, value = item
                pieces.append(f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}")
            elif named:
                name, value = item
                pieces.append(f"{name}={self.repr1(value, level - 1)}")
            else:
                pieces.append(self.repr1(item, level - 1))
        if size > len(pieces):
            pieces.append(f"{self.fillvalue}{size - len(pieces)} more")
        return left + ", ".join(pieces) + right

    # -- leaves ------------------------------------------------------------------------

    def _leaf(self, x: Any) -> str:
        kind = type(x)
        if isinstance(x, str):
            head = builtins.repr(str(x[: self.maxstring]))
            return head + self.fillvalue if len(x) > self.maxstring else head
        if isinstance(x, (bytes, bytearray)):
            head = builtins.repr(bytes(x[: self.maxstring]))
            if kind is bytearray:
                head = f"bytearray({head})"
            return head + self.fillvalue if len(x) > self.maxstring else head
        if kind is int:
            if x.bit_length() > _BIG_INT_BITS:
                return f"<int of {x.bit_length()} bits>"
            return self.repr_int(x, 0)
        if kind in _SCALARS:
            return builtins.repr(x)
        if isinstance(x, memoryview):
            return f"<memoryview of {x.nbytes} bytes>"
        return self._guarded(x, kind)

    def _guarded(self, x: Any, kind: type) -> str:
        """The object's own repr, unless its type is known to be costly; never raises."""
        name = getattr(kind, "__name__", "object")
        if kind in self.costly:
            return f"<{name}>"
        start = time.perf_counter()
        try:
            text = builtins.repr(x)
        except Exception as exc:  # a broken __repr__ must not break the dashboard
            return f"<{name}: repr failed ({type(exc).__name__})>"
        if len(text) > _LONG or time.perf_counter() - start > _SLOW:
            try:
                self.costly.add(kind)
            except TypeError:
                pass  # a type that cannot be weakly referenced is asked each time
        if len(text) > self.maxother:
            return text[: self.maxother] + self.fillvalue
        return text


_REPR: Final = _Budgeted()


def preview(value: Any, width: int = 80) -> str:
    """At most ``width`` characters on one line, in O(width) time; never raises."""
    try:
        kind = type(value)
        if kind in _SCALARS or (kind is int and value.bit_length() <= _BIG_INT_BITS):
            text = builtins.repr(value)  # the common case, first
        elif isinstance(value, str):
            text = str(value[: width * 2 + 2])
        elif isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value[:64])
            text = f"<{len(value)} bytes> {raw!r}"
        else:
            text = _REPR.bounded(value, width)
    except Exception as exc:
        text = f"<{type(value).__name__}: preview failed ({type(exc).__name__})>"
    if not text.isprintable():
        text = visible(text)  # control and format characters made visible (_visible)
        if not text.isprintable():  # the other unprintables (U+2028, private use): a dot
            text = "".join(ch if ch.isprintable() else "·" for ch in text)
    return cut(text, width, "head")
