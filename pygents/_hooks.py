"""Hooks: async callbacks fired at named lifecycle points, and their one dispatcher.

* [`hook`][pygents.hook] declares a *global* hook (fires for every object, or only for
  objects sharing one of its ``tags``).
* `HookSlot` gives objects their instance decorators (``@tool.before_invoke``,
  ``@queue.after_append``, ...), which attach a hook to that object only.
* `dispatch` (and `fire`, which awaits it) runs the hooks for one event: the
  object's own hooks first, in list order, then the global ones not already in
  that list. Hooks run one after the other; an exception propagates and stops the
  rest. Subscribers see the event before any hook runs.

Every hook is registered in [`HookRegistry`][pygents.HookRegistry] by function name, because
serialization refers to hooks by name. Global hooks are held for the life of the
process. Instance hooks are held *weakly*: they live as long as the objects they
are attached to (or your own references), so a hook made per request never keeps
its request's objects alive, and the registry never grows with requests.
"""

from __future__ import annotations

import functools
import gc
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, ParamSpec, TypeVar, cast, overload

from pygents._calling import CallShape, LoopLock
from pygents._enums import HOOK_ENUMS, HookType, ToolHook, TurnHook, parse_hook_type
from pygents._errors import UnregisteredHookError, brief
from pygents._observe import BUS, Event
from pygents._registry import Registry
from pygents._scope import Scope, current_scope

__all__ = [
    "Hook",
    "HookMetadata",
    "HookRegistry",
    "HookSlot",
    "check_tags",
    "closing_hooks_bound",
    "dispatch",
    "fire",
    "hook",
    "label",
    "normalize_tags",
]

P = ParamSpec("P")
_EMPTY_TAGS: Final[frozenset[str]] = frozenset()
_SHORT: Final = 60  # characters of a user value quoted in a hook's message or repr


def label(value: object) -> str:
    """A short, bounded description of a user value for error messages: its type,
    then `brief` of it (a function by its name)."""
    if inspect.isroutine(value) and isinstance(getattr(value, "__name__", None), str):
        return f"the plain function {brief(value.__name__, _SHORT)}"
    return f"{type(value).__name__} {brief(value, _SHORT)}"


def normalize_tags(tags: Iterable[str] | None, owner: str) -> frozenset[str]:
    """``tags`` as a frozenset of strings; ``TypeError`` for anything else."""
    if tags is None:
        return _EMPTY_TAGS
    if isinstance(tags, str):
        raise TypeError(
            f"{owner}: tags must be a collection of strings, not the string {brief(tags)}; "
            f"write tags=[{brief(tags)}]"
        )
    try:
        result = frozenset(tags)
    except TypeError:
        raise TypeError(
            f"{owner}: tags must be a collection of strings, got {type(tags).__name__}"
        ) from None
    bad = [t for t in result if not isinstance(t, str)]
    if bad:
        raise TypeError(f"{owner}: every tag must be a string, got {brief(bad[0])}")
    return result


def check_tags(owner: object, value: object) -> frozenset[str]:
    """Validator for ``guarded`` tag attributes."""
    return normalize_tags(value, f"{type(owner).__name__}(tags=...)")  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class HookMetadata:
    """A hook's name (its registry key) and description (its docstring)."""

    name: str
    description: str | None


class Hook(Generic[P]):
    """An async callback bound to one or more hook events.

    Calling the hook runs the function with the fixed keyword arguments merged in,
    unaccepted arguments dropped, context injected and the lock (if any) held.
    """

    _pygents_value: Final = True

    def __init__(
        self,
        fn: Callable[P, Awaitable[Any]],
        types: frozenset[HookType],
        *,
        lock: bool = False,
        tags: frozenset[str] = _EMPTY_TAGS,
        fixed_kwargs: Mapping[str, Any] | None = None,
        is_global: bool = False,
    ) -> None:
        name = _function_name(fn)
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.types = types
        self.tags = tags
        self.is_global = is_global
        self._lock = LoopLock() if lock else None
        self._shape = CallShape(fn, f"hook {name!r}", fixed_kwargs)
        self.metadata = HookMetadata(name, inspect.getdoc(fn))

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def lock(self) -> bool:
        """Whether concurrent runs of this hook are serialized."""
        return self._lock is not None

    @property
    def fixed_kwargs(self) -> Mapping[str, Any]:
        return self._shape.fixed

    def __repr__(self) -> str:
        kinds = ", ".join(sorted(t.qualified for t in self.types))
        return f"<Hook {brief(self.metadata.name, _SHORT)} [{kinds}]>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, Any]:
        # A coroutine indeed: the function is checked to be an 'async def' when the
        # hook is made, and _locked is one.
        return cast("Coroutine[Any, Any, Any]", self.invoke(args, kwargs, None))

    def invoke(
        self, args: Sequence[Any], kwargs: Mapping[str, Any] | None, scope: Scope | None
    ) -> Awaitable[Any]:
        """The call, to await: the function's own awaitable when the hook has no
        lock (no wrapper coroutine), else one that holds the lock around it.
        Arguments are bound now, so a binding error raises here."""
        call_args, call_kwargs = self._shape.bind(args, kwargs or {}, scope)
        if self._lock is None:
            return self.fn(*call_args, **call_kwargs)
        return self._locked(call_args, call_kwargs)

    async def _locked(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self._lock is not None
        async with self._lock.get():
            return await self.fn(*args, **kwargs)


def _function_name(fn: object) -> str:
    """The name ``fn`` registers under; ``TypeError`` (saying what to do) if it cannot
    be a hook."""
    if isinstance(fn, Hook):
        raise TypeError(
            f"{brief(fn)} is already a hook; attach it as it is with an instance decorator "
            "(obj.after_run(h)) or obj.hooks.append(h), rather than making a hook of it again"
        )
    if isinstance(fn, functools.partial):
        raise TypeError(
            f"a hook cannot be a functools.partial ({brief(fn, _SHORT)}): hooks are registered "
            "and serialized by function name. Give the fixed values as keyword arguments "
            "instead (@hook(event, key=value) or @obj.after_run(key=value)), or wrap the call "
            "in a named 'async def'"
        )
    name = getattr(fn, "__name__", None)
    if not callable(fn) or not isinstance(name, str):
        raise TypeError(
            f"a hook must be a named 'async def' function, got {label(fn)}; "
            "define one with 'async def' and decorate it"
        )
    if not inspect.iscoroutinefunction(fn):
        kind = "an async generator" if inspect.isasyncgenfunction(fn) else "not async"
        raise TypeError(
            f"hook {brief(name, _SHORT)} is {kind}; hooks must be 'async def' functions "
            "that return (not yield)"
        )
    return name


def _same_definition(existing: Hook[Any], new: Hook[Any]) -> bool:
    """Whether ``new`` may replace ``existing`` under their shared name.

    The same function always may. An *instance* hook may also replace an instance
    hook made from the same code (a closure re-created per call): that is a helper
    attaching "its" hook again, not a clash. A global hook never replaces an
    instance hook, nor the other way round.
    """
    if existing.is_global is not new.is_global:
        return False
    if existing.fn is new.fn:
        return True
    code = getattr(new.fn, "__code__", None)
    return not new.is_global and code is not None and getattr(existing.fn, "__code__", None) is code


def _held_weakly(h: Hook[Any]) -> bool:
    return not h.is_global


HookRegistry: Final = Registry[Hook[Any]]("hook", UnregisteredHookError, weak=_held_weakly)
"""Every named hook, by function name; ``from_dict`` resolves here. Global hooks are
held for good; instance hooks only as long as something else holds them."""

GLOBAL_HOOKS: dict[HookType, tuple[Hook[Any], ...]] = {}
"""Global hooks by event, rebuilt whenever [`HookRegistry`][pygents.HookRegistry] changes."""


def _rebuild_global_index() -> None:
    index: dict[HookType, list[Hook[Any]]] = {}
    for h in HookRegistry.all():
        if h.is_global:
            for t in h.types:
                index.setdefault(t, []).append(h)
    GLOBAL_HOOKS.clear()
    GLOBAL_HOOKS.update({t: tuple(hs) for t, hs in index.items()})
    BUS.set_global_hooks(bool(GLOBAL_HOOKS))


HookRegistry.on_change(_rebuild_global_index)


def register(h: Hook[Any]) -> None:
    name = h.metadata.name
    existing = HookRegistry.find(name)
    if existing is not None and not existing.is_global and not _same_definition(existing, h):
        # An instance hook whose object is gone lingers until the cycle collector
        # runs when it sits in a reference cycle (a closure over its own turn, say).
        # Collect once, so that whether the name is free never depends on timing.
        del existing
        gc.collect()
    HookRegistry.add(name, h, same=_same_definition)


def _type_hint(item: object) -> str:
    """What to write instead of ``item`` where a hook type was expected."""
    if isinstance(item, str):
        try:
            member = parse_hook_type(item)
        except ValueError:
            members = [m for e in HOOK_ENUMS for m in e if m.value == item.lower()]
            if members:
                return f"; write the enum member instead: {' or '.join(map(str, members))}"
        else:
            return f"; write the enum member {member}, not the string"
    if callable(item) and not isinstance(item, type):
        return "; write the event(s) first: @hook(TurnHook.AFTER_RUN) above the function"
    return ", e.g. @hook(TurnHook.AFTER_RUN) or @hook([TurnHook.ON_ERROR, TurnHook.ON_TIMEOUT])"


def _check_types(types: object) -> frozenset[HookType]:
    if isinstance(types, HOOK_ENUMS):
        return frozenset((types,))  # type: ignore[arg-type]  # HOOK_ENUMS are HookType
    if isinstance(types, (str, bytes)) or not isinstance(types, Iterable):
        raise TypeError(
            "hook() takes a member of TurnHook, AgentHook, ToolHook, ContextQueueHook or "
            f"ContextPoolHook, or a list of them; got {label(types)}{_type_hint(types)}"
        )
    items = list(types)
    if not items:
        raise ValueError("hook() needs at least one hook type, e.g. @hook(TurnHook.AFTER_RUN)")
    for item in items:
        if not isinstance(item, HOOK_ENUMS):
            raise TypeError(
                "hook() takes members of TurnHook, AgentHook, ToolHook, ContextQueueHook "
                f"or ContextPoolHook; the list holds {label(item)}{_type_hint(item)}"
            )
    return frozenset(items)


def hook(
    types: HookType | Iterable[HookType],
    *,
    lock: bool = False,
    tags: Iterable[str] | None = None,
    **fixed_kwargs: Any,
) -> Callable[[Callable[P, Awaitable[Any]]], Hook[P]]:
    """Declare a global hook for one event or a list of events.

    Without ``tags`` it fires for every object; with ``tags`` only for objects that
    share at least one of them. ``lock=True`` serializes concurrent runs.
    Remaining keyword arguments are passed to every call (callables needing no
    arguments are called first).
    """
    checked = _check_types(types)
    tag_set = normalize_tags(tags, "hook()")

    def decorate(fn: Callable[P, Awaitable[Any]]) -> Hook[P]:
        if isinstance(fn, Hook):
            kind = "a global" if fn.is_global else "an instance"
            raise TypeError(
                f"{brief(fn)} is already {kind} hook; @hook(...) makes a global hook from a "
                "plain async function, so put it directly above the function, below any "
                "instance decorators (they then attach the global hook as it is)"
            )
        h = Hook(fn, checked, lock=lock, tags=tag_set, fixed_kwargs=fixed_kwargs, is_global=True)
        register(h)
        return h

    return decorate


def dispatch(
    event: HookType,
    source: Any,
    hooks: Sequence[Hook[Any]],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None = None,
    scope: Scope | None = None,
) -> Awaitable[Any] | None:
    """Tell subscribers about ``event`` now; return the run of its hooks to await, or
    ``None`` when no hook is bound to ``event``.

    Why two halves: subscribers are synchronous, hooks are not. An event that only
    subscribers follow (telemetry, the dashboard) then costs no coroutine, and a
    caller with nothing to await stays on its synchronous path. Callers skip the
    call entirely when ``not hooks and not BUS.hot``; see the module docstring for
    the order hooks run in. This is the one place subscribers are told of an event
    (their loop is written here rather than in a bus method: a turn fires eight
    events, and a call frame less for each is measurable).
    """
    listeners = BUS.listeners_for.get(event)
    if listeners:
        told = Event(event, source, args, kwargs, scope if scope is not None else current_scope())
        for subscriber, on_event in listeners:
            try:
                on_event(told)
            except Exception as exc:
                BUS.contain(subscriber, "on_event", exc)
    for h in hooks:
        if event in h.types:
            return _run_hooks(event, source, hooks, args, kwargs, scope)
    global_hooks = GLOBAL_HOOKS.get(event)
    if global_hooks is None:
        return None
    if len(global_hooks) == 1:  # the common case, one coroutine less
        h = global_hooks[0]
        if h.tags and h.tags.isdisjoint(source.tags):
            return None
        return h.invoke(args, kwargs, scope)
    return _run_hooks(event, source, hooks, args, kwargs, scope)


async def fire(
    event: HookType,
    source: Any,
    hooks: Sequence[Hook[Any]],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None = None,
    scope: Scope | None = None,
) -> None:
    """`dispatch` and await its hooks: for the events off the per-turn path."""
    pending = dispatch(event, source, hooks, args, kwargs, scope)
    if pending is not None:
        await pending


def closing_hooks_bound() -> bool:
    """Whether a global hook waits at the end of a successful turn (``AFTER_INVOKE``,
    ``AFTER_RUN`` or ``ON_COMPLETE``): if not, and the turn and its tool have no
    hooks, the turn can end without awaiting anything."""
    return bool(GLOBAL_HOOKS) and not _CLOSING.isdisjoint(GLOBAL_HOOKS)


_CLOSING: Final[frozenset[HookType]] = frozenset(
    {ToolHook.AFTER_INVOKE, TurnHook.AFTER_RUN, TurnHook.ON_COMPLETE}
)


async def _run_hooks(
    event: HookType,
    source: Any,
    hooks: Sequence[Hook[Any]],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None,
    scope: Scope | None,
) -> None:
    for h in hooks:
        if event in h.types:
            await h.invoke(args, kwargs, scope)
    global_hooks = GLOBAL_HOOKS.get(event)
    if global_hooks:
        tags = source.tags
        for h in global_hooks:
            if (not h.tags or h.tags & tags) and h not in hooks:
                await h.invoke(args, kwargs, scope)


R = TypeVar("R")


class _BoundSlot:
    """``obj.before_invoke`` and friends: usable bare, with options, or called."""

    __slots__ = ("_obj", "_slot")

    def __init__(self, slot: HookSlot, obj: Any) -> None:
        self._slot = slot
        self._obj = obj

    @overload
    def __call__(self, fn: Callable[P, Awaitable[Any]], /) -> Hook[P]: ...
    @overload
    def __call__(
        self, /, *, lock: bool = ..., **fixed_kwargs: Any
    ) -> Callable[[Callable[P, Awaitable[Any]]], Hook[P]]: ...
    def __call__(
        self, fn: Callable[P, Awaitable[Any]] | None = None, /, *, lock: bool = False, **fixed: Any
    ) -> Hook[P] | Callable[[Callable[P, Awaitable[Any]]], Hook[P]]:
        if fn is None:
            return lambda f: self._attach(f, lock, fixed)
        return self._attach(fn, lock, fixed)

    def _attach(
        self, fn: Callable[P, Awaitable[Any]], lock: bool, fixed: dict[str, Any]
    ) -> Hook[P]:
        slot = self._slot
        if slot.check is not None:
            slot.check(self._obj, slot.event)
        hooks = getattr(self._obj, slot.attr)
        if isinstance(fn, Hook):
            _check_reuse(fn, slot.event, lock, fixed)
            if fn not in hooks:
                hooks.append(fn)
            return fn
        h = Hook(fn, frozenset((slot.event,)), lock=lock, fixed_kwargs=fixed)
        register(h)
        hooks.append(h)
        return h


def _check_reuse(h: Hook[Any], event: HookType, lock: bool, fixed: Mapping[str, Any]) -> None:
    """An existing hook is attached as it is: global or instance, its events, lock and
    fixed arguments stay what they were, so it must already handle ``event``."""
    if event not in h.types:
        raise TypeError(
            f"{brief(h)} does not handle {event}, so it cannot be attached with that event's "
            "decorator; attach it with the decorator of one of its own events, or make a "
            f"hook for {event} from a separate function"
        )
    if lock or fixed:
        raise TypeError(
            f"{brief(h)} already exists, with the lock and fixed keyword arguments it was made "
            "with; attach it without options, or make a new hook from a separate function"
        )


class HookSlot:
    """Class attribute giving instances a decorator that attaches a hook for ``event``.

    ``attr`` names the instance's list the hook is appended to; ``check`` may refuse
    the attachment (``on_yield`` on a coroutine tool, for instance).
    """

    __slots__ = ("attr", "check", "event")

    def __init__(
        self,
        event: HookType,
        attr: str = "hooks",
        check: Callable[[Any, HookType], None] | None = None,
    ) -> None:
        self.event = event
        self.attr = attr
        self.check = check

    @overload
    def __get__(self, obj: None, owner: type) -> HookSlot: ...
    @overload
    def __get__(self, obj: object, owner: type) -> _BoundSlot: ...
    def __get__(self, obj: object | None, owner: type) -> HookSlot | _BoundSlot:
        if obj is None:
            return self
        return _BoundSlot(self, obj)
