"""Attributes that refuse to change while their owner is busy (running or paused)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, overload

from pygents._errors import SafeExecutionError

__all__ = ["guarded"]

T = TypeVar("T")


class Guarded(Protocol):
    """An owner that can say why it is busy (``None`` when it is not)."""

    def _busy(self) -> str | None: ...


class guarded(Generic[T]):
    """A data descriptor over ``_<name>`` whose setter checks ``owner._busy()``.

    The optional ``validate`` turns the assigned value into the stored one (and
    raises on bad input), so construction and assignment share one check.
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
    def __get__(self, obj: None, owner: type) -> guarded[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object | None, owner: type) -> T | guarded[T]:
        if obj is None:
            return self
        value: T = getattr(obj, self.private)
        return value

    def __set__(self, obj: Guarded, value: Any) -> None:
        reason = obj._busy()
        if reason is not None:
            raise SafeExecutionError(
                f"cannot set {type(obj).__name__}.{self.name} on {obj!r} while it is {reason}; "
                "wait until it has finished (or resume and let it finish) first"
            )
        setattr(obj, self.private, self.validate(obj, value) if self.validate else value)
