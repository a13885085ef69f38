"""A small generic name → object registry, shared by tools, hooks and agents."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from pygents._errors import UnregisteredError, brief, cut

__all__ = ["Registry"]

T = TypeVar("T")


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "an agent", "a tool", "a hook". The rule
    is the first letter's (every kind of registry is named by a plain English noun)."""
    return f"{'an' if noun[:1].lower() in ('a', 'e', 'i', 'o', 'u') else 'a'} {noun}"


class Registry(Generic[T]):
    """Objects by unique name.

    Registration is all-or-nothing: callers validate before calling `add`,
    and `add` itself either stores the object or raises without a trace.

    ``weak(obj)``, when given, picks the objects held *weakly*: their entry
    disappears with the object, so the registry never keeps it alive. Hooks use it
    for instance hooks, which must live exactly as long as the objects they are
    attached to. Strongly held entries come first in `names` and `all`.
    """

    __slots__ = ("_error", "_items", "_kind", "_on_change", "_weak", "_weak_items")

    def __init__(
        self,
        kind: str,
        error: type[UnregisteredError],
        weak: Callable[[T], bool] | None = None,
    ) -> None:
        self._kind = kind
        self._error = error
        self._items: dict[str, T] = {}
        # Looked up only when ``_items`` misses, so strong-only registries (tools,
        # agents) pay nothing for it.
        self._weak_items: weakref.WeakValueDictionary[str, T] = weakref.WeakValueDictionary()
        self._weak = weak
        self._on_change: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"<{self._kind.capitalize()}Registry: {len(self)} registered>"

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._weak_items

    def __len__(self) -> int:
        return len(self._items) + len(self._weak_items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def add(self, name: str, obj: T, *, same: Callable[[T, T], bool] | None = None) -> None:
        """Store ``obj`` under ``name``; ``ValueError`` if another object holds the name.

        ``same(existing, obj)`` may declare the two equivalent, in which case the new
        object replaces the old one (re-decorating the same function, for instance).
        """
        existing = self.find(name)
        replaceable = existing is None or existing is obj or (same and same(existing, obj))
        if not replaceable:
            raise ValueError(
                f"{_a(self._kind)} named {brief(name, 50)} is already registered "
                f"({brief(existing, 60)}); "
                f"give the new {self._kind} another name, or unregister the old one first"
            )
        if self._weak is not None and self._weak(obj):
            self._weak_items[name] = obj
            if self._items.pop(name, None) is not None:
                self._changed()
        else:
            self._weak_items.pop(name, None)
            self._items[name] = obj
            self._changed()

    def get(self, name: str) -> T:
        """The object registered under ``name``."""
        try:
            return self._items[name]
        except KeyError:
            obj = self._weak_items.get(name)
            if obj is not None:
                return obj
            known = cut(", ".join(sorted(self.names())[:10]) or "none", 80)
            raise self._error(
                f"no {self._kind} is registered under {brief(name, 50)} (registered: {known}); "
                f"define or register the {self._kind} before it is looked up"
            ) from None
        except TypeError:
            raise TypeError(f"{self._kind} names are strings, got {type(name).__name__}") from None

    def find(self, name: str) -> T | None:
        """The object registered under ``name``, or ``None``."""
        obj = self._items.get(name)
        return self._weak_items.get(name) if obj is None else obj

    def all(self) -> list[T]:
        """Every registered object: strongly held ones first, each in registration order."""
        return [*self._items.values(), *self._weak_items.values()]

    def names(self) -> list[str]:
        """Every registered name, in the order of `all`."""
        return [*self._items, *self._weak_items]

    def unregister(self, name: str) -> T:
        """Remove and return the object registered under ``name``."""
        obj = self.get(name)
        self.discard(name, obj)
        return obj

    def discard(self, name: str, obj: T) -> None:
        """Remove ``name`` if, and only if, it still refers to ``obj``."""
        if self._items.get(name) is obj:
            del self._items[name]
            self._changed()
        elif self._weak_items.get(name) is obj:
            del self._weak_items[name]

    def clear(self) -> None:
        """Forget every registered object."""
        self._items.clear()
        self._weak_items.clear()
        self._changed()

    def snapshot(self) -> dict[str, T]:
        """A copy of the registry's contents, for `restore`."""
        contents = dict(self._items)
        contents.update(self._weak_items.items())
        return contents

    def restore(self, snapshot: dict[str, T]) -> None:
        """Put the registry back to the contents of an earlier `snapshot`."""
        weak = self._weak
        self._items = {n: o for n, o in snapshot.items() if weak is None or not weak(o)}
        self._weak_items = weakref.WeakValueDictionary(
            (n, o) for n, o in snapshot.items() if n not in self._items
        )
        self._changed()

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every change to the strongly held entries (used to
        refresh dispatch caches); weakly held ones come and go without notice."""
        self._on_change.append(callback)

    def _changed(self) -> None:
        for callback in self._on_change:
            callback()
