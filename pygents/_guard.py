"""Attributes that check what is assigned to them, and those that also refuse to change
while their owner is busy (running or paused)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, Self, TypeVar, overload

from pygents._errors import SafeExecutionError

__all__ = ["guarded", "validated"]

T = TypeVar("T")


class Guarded(Protocol):
    """An owner that can say why it is busy (``None`` when it is not)."""

    def _busy(self) -> str | None: ...


class validated(Generic[T]):
    """A data descriptor over ``_<name>``: the optional ``validate`` turns the assigned
    value into the stored one (and raises on bad input), so construction and
    assignment share one check.

    For an attribute that may change at any time (a tool's or a context store's hooks:
    dispatch reads the list as it is at each event); `guarded` also waits for its
    owner to be idle.
    """

    __slots__ = ("name", "private", "validate")

    def __init__(self, validate: Callable[[Any, Any], T] | None = None) -> None:
        self.validate = validate
        self.name = ""
        self.private = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.private = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type) -> Self: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object | None, owner: type) -> T | Self:
        if obj is None:
            return self
        value: T = getattr(obj, self.private)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj, self.private, self.validate(obj, value) if self.validate else value)


class guarded(validated[T]):
    """A `validated` attribute whose setter first checks ``owner._busy()``."""

    __slots__ = ()

    def __set__(self, obj: Guarded, value: Any) -> None:
        reason = obj._busy()
        if reason is not None:
            raise SafeExecutionError(
                f"cannot set {type(obj).__name__}.{self.name} on {obj!r} while it is {reason}; "
                "wait until it has finished (or resume and let it finish) first"
            )
        super().__set__(obj, value)
