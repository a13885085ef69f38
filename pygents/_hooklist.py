"""The lists objects keep their own hooks in, and how branching copies them.

Every ``.hooks`` list (tools, turns, agents and their ``turn_hooks``, context
queues and pools) is a `HookList`: a ``list`` that refuses anything but a
[`Hook`][pygents.Hook] at the moment it is added, with a ``TypeError`` saying how
to make one. Dispatch then iterates it as the plain list it is, with no checks on
the hot path. Assigning a plain list to a ``.hooks`` attribute goes through
`HookList.coerce`, so the stored list is always a checked one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Self, SupportsIndex, overload

from pygents._enums import HOOK_ENUMS
from pygents._hooks import Hook, HookSlot, label

__all__ = ["INHERIT", "HookList", "branch_hooks"]


class _Inherit:
    """The default of ``branch(hooks=...)``: keep the parent's hooks."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INHERIT"


INHERIT: Final[Any] = _Inherit()
"""``branch(hooks=INHERIT)``, the default: the child starts with the parent's hooks."""


_VARIABLE: Final = {"DecoratedTool": "my_tool", "ContextQueue": "queue", "ContextPool": "pool"}


def _variable(owner: type) -> str:
    return _VARIABLE.get(owner.__name__, owner.__name__.lower())


def _example(owner: type, attr: str) -> str:
    """``"@queue.before_append"``: an instance decorator that fills ``owner.attr``."""
    for name in dir(owner):
        slot = getattr(owner, name, None)
        if isinstance(slot, HookSlot) and slot.attr == attr:
            return f"@{_variable(owner)}.{name}"
    return "an instance decorator"


class HookList(list[Hook[Any]]):
    """A list of hooks that refuses anything else when it is added.

    ``append``, ``extend``, ``insert``, item and slice assignment and ``+=`` check
    every new element first, so a bad one leaves the list as it was.
    """

    __slots__ = ("_attr", "_owner")

    def __init__(
        self, owner: type = object, attr: str = "hooks", hooks: Iterable[Any] = ()
    ) -> None:
        self._owner = owner
        self._attr = attr
        super().__init__(hooks if isinstance(hooks, HookList) else self._check_all(hooks))

    @classmethod
    def coerce(cls, owner: object, attr: str, value: object) -> HookList:
        """``value`` (any iterable of hooks) as a new checked list for ``owner.attr``."""
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise TypeError(
                f"{type(owner).__name__}.{attr} takes a list of hooks, got {label(value)}; "
                f"assign a list, e.g. {_variable(type(owner))}.{attr} = [my_hook]"
            )
        return cls(type(owner), attr, value)

    @classmethod
    def validator(cls, attr: str) -> Callable[[object, object], HookList]:
        """The ``guarded`` validator of the hook-list attribute ``attr``."""
        return lambda owner, value: cls.coerce(owner, attr, value)

    def _check(self, value: object) -> Hook[Any]:
        if isinstance(value, Hook):
            return value
        owner = self._owner.__name__
        raise TypeError(
            f"{owner}.{self._attr} holds hooks, not {label(value)}; make it a hook first: "
            f"attach it with {_example(self._owner, self._attr)} (or another event "
            "decorator of that object), or declare a global one with @hook(<event>)"
        )

    def _check_all(self, values: Iterable[object]) -> list[Hook[Any]]:
        return [self._check(v) for v in values]

    def append(self, value: Hook[Any], /) -> None:
        super().append(self._check(value))

    def extend(self, values: Iterable[Hook[Any]], /) -> None:
        super().extend(self._check_all(values))

    def insert(self, index: SupportsIndex, value: Hook[Any], /) -> None:
        super().insert(index, self._check(value))

    # The same signature as ``list.__iadd__`` in typeshed; mypy compares it with
    # ``__add__`` only for subclasses, hence the ignore.
    def __iadd__(self, values: Iterable[Hook[Any]], /) -> Self:  # type: ignore[override,misc]
        return super().__iadd__(self._check_all(values))

    @overload
    def __setitem__(self, index: SupportsIndex, value: Hook[Any], /) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[Hook[Any]], /) -> None: ...
    def __setitem__(self, index: SupportsIndex | slice, value: Any, /) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, self._check_all(value))
        elif isinstance(index, HOOK_ENUMS):
            raise TypeError(
                f"{self._owner.__name__}.{self._attr} is a list, not a mapping by event; "
                f"attach the hook with its event decorator instead "
                f"({_example(self._owner, self._attr)}) or append a Hook"
            )
        else:
            super().__setitem__(index, self._check(value))


def branch_hooks(
    owner: object, attr: str, inherited: Iterable[Hook[Any]], given: object
) -> HookList:
    """The hook list of a branched copy: ``given`` omitted (`INHERIT`) → a copy
    of ``inherited``; ``None`` or ``[]`` → no hooks; otherwise exactly ``given``."""
    if given is INHERIT:
        return HookList(type(owner), attr, inherited)
    return HookList.coerce(owner, attr, () if given is None else given)
