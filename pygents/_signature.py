"""What binding needs to know of a function, inspected once per code object.

`CallShape` (in `pygents._calling`) binds arguments for tools and hooks; the
`Layout` it binds by (parameter kinds, resolved type hints, the parameters that
receive an [`Injectable`][pygents.Injectable]) is computed here and cached, so
that a function re-made per request (a closure turned into a hook each time) is
inspected once rather than on every request.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Injectable", "Layout", "layout", "resolve_hints"]

_P = inspect.Parameter
_UNION_TYPES: Final = (typing.Union, types.UnionType)


class Injectable:
    """Marker base class: a tool or hook parameter annotated with a subclass of this
    receives the instance the running agent provides (see
    [`Scope.provide`][pygents.Scope.provide])."""

    __slots__ = ()


def resolve_hints(fn: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    """``fn``'s type hints and whether all of them resolved.

    One annotation naming something not defined yet (a forward reference) does not
    cost the others: they are evaluated one by one, as ``typing`` would.
    """
    try:
        return typing.get_type_hints(fn), True
    except Exception:
        pass
    hints: dict[str, Any] = {}
    namespace = getattr(fn, "__globals__", {})
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # what typing.get_type_hints does
            except Exception:
                continue
        hints[name] = annotation
    return hints, False


def _injectable_in(annotation: Any) -> type[Injectable] | None:
    origin = typing.get_origin(annotation)
    if origin in _UNION_TYPES:
        for arg in typing.get_args(annotation):
            found = _injectable_in(arg)
            if found is not None:
                return found
        return None
    candidate = origin if origin is not None else annotation
    if isinstance(candidate, type) and issubclass(candidate, Injectable):
        return candidate
    return None


@dataclass(frozen=True, slots=True)
class Layout:
    """What binding needs from a function's signature and type hints.

    All of it follows from the function's code object (parameter names and kinds),
    its annotations and globals (the hints) and which parameters have a default, so
    functions sharing those share one layout: a closure re-made per request, say.
    """

    names: tuple[str, ...]
    var_pos: bool
    var_kw: bool
    kw_names: frozenset[str]
    n_posonly: int
    hints: dict[str, Any]  # shared between the functions of one layout: never changed
    complete: bool
    injectables: tuple[tuple[str, type[Injectable], bool], ...]
    pos_slots: tuple[tuple[str, type[Injectable] | None], ...]


def _inspect(fn: Callable[..., Any]) -> Layout:
    params = inspect.signature(fn).parameters
    hints, complete = resolve_hints(fn)
    found: list[tuple[str, type[Injectable], bool]] = []
    for name, p in params.items():
        cls = _injectable_in(hints.get(name))
        if cls is not None and p.kind not in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD):
            found.append((name, cls, p.default is _P.empty))
    by_name = {name: cls for name, cls, _ in found}
    return Layout(
        names=tuple(params),
        var_pos=any(p.kind is _P.VAR_POSITIONAL for p in params.values()),
        var_kw=any(p.kind is _P.VAR_KEYWORD for p in params.values()),
        kw_names=frozenset(
            n for n, p in params.items() if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)
        ),
        n_posonly=sum(p.kind is _P.POSITIONAL_ONLY for p in params.values()),
        hints=hints,
        complete=complete,
        injectables=tuple(found),
        pos_slots=tuple(
            (n, by_name.get(n))
            for n, p in params.items()
            if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
        ),
    )


# Inspecting a signature and resolving hints costs tens of microseconds; a hook made
# per request would pay it every time. Layouts are cached by code object, each with
# what else it was computed from, checked on every hit. Bounded: past the size the
# oldest entry goes (first in, first out; a miss only costs one inspection).
_LAYOUTS_MAX: Final = 1024
_LAYOUTS: dict[types.CodeType, tuple[tuple[Any, ...], Layout]] = {}


def _source(fn: Callable[..., Any]) -> tuple[Any, ...] | None:
    """What a plain function's layout depends on besides its code; ``None`` for
    anything else (a ``__signature__`` or ``__wrapped__`` changes what
    ``inspect.signature`` reports, so those are never cached)."""
    if type(fn) is not types.FunctionType or "__wrapped__" in fn.__dict__:
        return None
    if "__signature__" in fn.__dict__:
        return None
    return (
        fn.__globals__,
        dict(fn.__annotations__),
        len(fn.__defaults__ or ()),
        frozenset(fn.__kwdefaults__ or ()),
    )


def _same_source(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    try:
        return a[0] is b[0] and bool(a[1:] == b[1:])
    except Exception:  # an annotation whose __eq__ fails: not worth a cache hit
        return False


def layout(fn: Callable[..., Any]) -> Layout:
    """``fn``'s layout, from the cache when a function of the same code had it."""
    source = _source(fn)
    if source is None:
        return _inspect(fn)
    code = fn.__code__
    cached = _LAYOUTS.get(code)
    if cached is not None and _same_source(cached[0], source):
        return cached[1]
    found = _inspect(fn)
    if found.complete:  # an unresolved forward reference is retried later, not kept
        if len(_LAYOUTS) >= _LAYOUTS_MAX and code not in _LAYOUTS:
            _LAYOUTS.pop(next(iter(_LAYOUTS)), None)
        _LAYOUTS[code] = (source, found)
    return found
