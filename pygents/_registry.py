"""A small generic name → object registry, shared by tools, hooks and agents."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from pygents._errors import UnregisteredError, brief

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Objects by unique name.

    Registration is all-or-nothing: callers validate before calling :meth:`add`,
    and :meth:`add` itself either stores the object or raises without a trace.
    """

    __slots__ = ("_error", "_items", "_kind", "_on_change")

    def __init__(self, kind: str, error: type[UnregisteredError]) -> None:
        self._kind = kind
        self._error = error
        self._items: dict[str, T] = {}
        self._on_change: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"<{self._kind.capitalize()}Registry: {len(self._items)} registered>"

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def add(self, name: str, obj: T, *, same: Callable[[T, T], bool] | None = None) -> None:
        """Store ``obj`` under ``name``; ``ValueError`` if another object holds the name.

        ``same(existing, obj)`` may declare the two equivalent, in which case the new
        object replaces the old one (re-decorating the same function, for instance).
        """
        existing = self._items.get(name)
        replaceable = existing is None or existing is obj or (same and same(existing, obj))
        if not replaceable:
            raise ValueError(
                f"a {self._kind} named {brief(name, 50)} is already registered "
                f"({brief(existing, 60)}); "
                f"give the new {self._kind} another name, or unregister the old one first"
            )
        self._items[name] = obj
        self._changed()

    def get(self, name: str) -> T:
        """The object registered under ``name``."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)[:10]) or "none"
            if len(known) > 80:
                known = known[:77] + "..."
            raise self._error(
                f"no {self._kind} is registered under {brief(name, 50)} (registered: {known}); "
                f"define or register the {self._kind} before it is looked up"
            ) from None
        except TypeError:
            raise TypeError(f"{self._kind} names are strings, got {type(name).__name__}") from None

    def find(self, name: str) -> T | None:
        """The object registered under ``name``, or ``None``."""
        return self._items.get(name)

    def all(self) -> list[T]:
        """Every registered object, in registration order."""
        return list(self._items.values())

    def names(self) -> list[str]:
        """Every registered name, in registration order."""
        return list(self._items)

    def unregister(self, name: str) -> T:
        """Remove and return the object registered under ``name``."""
        obj = self.get(name)
        del self._items[name]
        self._changed()
        return obj

    def discard(self, name: str, obj: T) -> None:
        """Remove ``name`` if, and only if, it still refers to ``obj``."""
        if name in self._items and self._items[name] is obj:
            del self._items[name]
            self._changed()

    def clear(self) -> None:
        """Forget every registered object."""
        self._items.clear()
        self._changed()

    def snapshot(self) -> dict[str, T]:
        """A copy of the registry's contents, for :meth:`restore`."""
        return dict(self._items)

    def restore(self, snapshot: dict[str, T]) -> None:
        """Put the registry back to the contents of an earlier :meth:`snapshot`."""
        self._items = dict(snapshot)
        self._changed()

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every change (used to refresh dispatch caches)."""
        self._on_change.append(callback)

    def _changed(self) -> None:
        for callback in self._on_change:
            callback()
