"""How pygents calls user functions: binding, dropped extras, thunks, injection, locks.

Tools and hooks share this one mechanism. A `CallShape` is computed once per
function; `CallShape.bind` turns the arguments a caller supplied into the
arguments the function accepts:

1. fixed keyword arguments are merged in (call-time ones win, with a warning);
2. fixed keyword arguments that are callables needing no arguments are called now
   (a turn's own arguments *by reference* are resolved by the turn beforehand:
   `resolve_arguments`);
3. arguments the function does not accept are dropped;
4. parameters annotated with an [`Injectable`][pygents.Injectable] type (``ContextQueue``,
   ``ContextPool``, or ``X | None``) receive the running agent's instance.
"""

from __future__ import annotations

import asyncio
import inspect
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pygents._errors import FixedKwargOverrideWarning, brief
from pygents._scope import Scope, current_scope
from pygents._signature import Injectable, Layout, layout

__all__ = [
    "CallShape",
    "Injectable",
    "LoopLock",
    "resolve_arguments",
]

_P = inspect.Parameter


def is_thunk(value: object) -> bool:
    """True for an argument *by reference*: a callable needing no arguments.

    Classes and pygents' own objects (tools, hooks) are values, never thunks.
    """
    if not callable(value) or isinstance(value, type) or getattr(value, "_pygents_value", False):
        return False
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not _P.empty or p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def resolve_value(value: Any) -> Any:
    """Call ``value`` if it is a thunk, else return it unchanged."""
    return value() if is_thunk(value) else value


def resolve_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Arguments *by reference* evaluated: each thunk among them is called now."""
    for value in kwargs.values():
        if callable(value):
            break
    else:
        for value in args:
            if callable(value):
                break
        else:
            return args, kwargs
    return (
        tuple(resolve_value(v) for v in args),
        {k: resolve_value(v) for k, v in kwargs.items()},
    )


class CallShape:
    """What a function accepts, computed once, and how to bind arguments to it."""

    __slots__ = (
        "_hints_pending",
        "fixed",
        "fn",
        "hints",
        "injectables",
        "kw_names",
        "n_positional",
        "n_posonly",
        "owner",
        "plain_positional",
        "pos_slots",
        "simple",
        "var_kw",
        "var_pos",
    )

    def __init__(
        self, fn: Callable[..., Any], owner: str, fixed: Mapping[str, Any] | None = None
    ) -> None:
        self.fn = fn
        self.owner = owner
        found = layout(fn)
        fixed = dict(fixed or {})
        unknown = [k for k in fixed if k not in found.kw_names]
        if unknown and not found.var_kw:
            raise TypeError(
                f"{owner} does not accept the fixed keyword argument(s) "
                f"{', '.join(map(repr, unknown))}; its parameters are "
                f"{', '.join(found.names) or '(none)'}: remove them or add them to the signature"
            )
        self.fixed = fixed
        self._apply(found)

    def _load_hints(self) -> None:
        self._apply(layout(self.fn))

    def _apply(self, found: Layout) -> None:
        self.var_pos = found.var_pos
        self.var_kw = found.var_kw
        self.kw_names = found.kw_names
        self.n_posonly = found.n_posonly
        # Retried at the first call (once the module has finished importing) if a
        # forward reference could not be resolved yet.
        self._hints_pending = not found.complete
        self.hints = found.hints
        self.injectables = found.injectables
        self.pos_slots = found.pos_slots
        self.simple = not (self.n_posonly or self.var_pos or self.injectables or self.fixed)
        # Positional-only calls (hooks receive their event this way) can be cut to size.
        self.plain_positional = not (self.injectables or self.fixed or self.var_pos)
        self.n_positional = len(self.pos_slots)

    def bind(
        self,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        scope: Scope | None = None,
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The ``(args, kwargs)`` to call the function with. See the module docstring."""
        if self._hints_pending:
            self._load_hints()
            self._hints_pending = False  # one retry; an undefined name stays unresolved
        if not kwargs and self.plain_positional:
            return tuple(args[: self.n_positional]), {}
        if self.simple and not args:
            if self.var_kw or kwargs.keys() <= self.kw_names:
                return (), kwargs  # type: ignore[return-value]  # read-only from here on
            return (), {k: v for k, v in kwargs.items() if k in self.kw_names}
        return self._bind_slow(args, kwargs, scope)

    def _bind_positional(self, values: Sequence[Any], bound: dict[str, Any]) -> None:
        """Map positional values onto parameter names, in order.

        A context parameter takes the value at its position only if that value is
        an instance of its type; otherwise the slot is left for injection and the
        value goes to the next parameter. So ``hook(queue: ContextQueue, items)``
        receives the event's queue, and ``tool(memory: ContextQueue, a, b)`` called
        with ``[1, 2]`` gets ``a=1, b=2`` and the agent's queue.
        """
        index = 0
        for name, cls in self.pos_slots[self.n_posonly :]:
            if index >= len(values):
                return
            value = values[index]
            if cls is not None and not isinstance(value, cls):
                continue
            if name in bound:
                raise TypeError(
                    f"{self.owner} got argument {brief(name, 60)} both positionally and by "
                    "keyword; pass it one way only"
                )
            bound[name] = value
            index += 1

    def _bind_slow(
        self, args: Sequence[Any], kwargs: Mapping[str, Any], scope: Scope | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        bound: dict[str, Any] = {}
        if self.fixed:
            overridden = sorted(self.fixed.keys() & kwargs.keys())
            if overridden:
                warnings.warn(
                    FixedKwargOverrideWarning(
                        f"{self.owner}: call-time argument(s) {', '.join(overridden)} "
                        "override the fixed keyword argument(s) given at decoration"
                    ),
                    stacklevel=3,
                )
            for key, value in self.fixed.items():
                if key not in kwargs:
                    bound[key] = resolve_value(value)
        bound.update(kwargs)
        values = list(args)

        positional: tuple[Any, ...]
        if self.var_pos:
            positional = tuple(values)
        else:
            positional = tuple(values[: self.n_posonly])
            self._bind_positional(values[self.n_posonly :], bound)
        if not self.var_kw:
            bound = {k: v for k, v in bound.items() if k in self.kw_names}

        if self.injectables:
            if scope is None:
                scope = current_scope()
            for name, cls, required in self.injectables:
                if name in bound:
                    continue
                value = scope.provide(cls) if scope is not None else None
                if value is not None:
                    bound[name] = value
                elif required:
                    raise TypeError(
                        f"{self.owner} needs a {cls.__name__} for parameter "
                        f"{brief(name, 60)}, but it is not running inside an agent; pass "
                        f"{name}=... explicitly, run it through an Agent, or annotate it "
                        f"'{cls.__name__} | None = None'"
                    )
        return positional, bound


class LoopLock:
    """An `asyncio.Lock` per event loop.

    A plain lock created at import time breaks when the same tool is used from a
    second event loop (each ``asyncio.run``, each test); this makes one per loop.
    """

    __slots__ = ("_lock", "_loop")

    def __init__(self) -> None:
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._lock = asyncio.Lock()

    def get(self) -> asyncio.Lock:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._lock
        if self._loop is None or self._loop() is not loop:
            if self._loop is not None:
                self._lock = asyncio.Lock()
            self._loop = weakref.ref(loop)
        return self._lock
