"""The subscription seam: one public way to observe every hook event and scope.

A [`Subscriber`][pygents.Subscriber] sees

* every hook event of every object
  ([`Subscriber.on_event`][pygents.Subscriber.on_event]), with the object
  that fired it and the enclosing agent and turn, and
* every *scope* — an agent run, a turn, a tool invocation — as it starts and ends
  ([`Subscriber.on_start`][pygents.Subscriber.on_start] /
  [`Subscriber.on_end`][pygents.Subscriber.on_end]) and each time code
  inside it is about to run ([`Subscriber.on_enter`][pygents.Subscriber.on_enter] /
  [`Subscriber.on_exit`][pygents.Subscriber.on_exit]),
  which is how a tracer makes its span *current* while a tool body runs.

Subscribers are telemetry: an exception they raise is logged once per subscriber
and method and otherwise ignored. With nobody subscribed and no global hooks the
runtime pays a single attribute check per event (`Bus.hot` or `Bus.any`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextvars import Token
from types import MappingProxyType
from typing import Any, ClassVar, Final, TypeAlias

from pygents._enums import COLD_EVENTS, HOT_EVENTS, HookType
from pygents._errors import brief
from pygents._scope import CURRENT, Frame, Scope, ScopeKind

__all__ = [
    "BUS",
    "Event",
    "Subscriber",
    "Subscription",
    "subscribe",
    "unsubscribe",
]

_log = logging.getLogger("pygents")
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


class Event:
    """One hook event, as subscribers receive it.

    Attributes:
        type: the hook enum member (``TurnHook.ON_VALUE``, ...).
        source: the object that fired it (turn, agent, tool, context queue or pool).
        args: the positional arguments hooks receive for this event.
        kwargs: the keyword arguments hooks receive (only ``ToolHook`` events use them).
        scope: the innermost scope running when the event fired, if any.
        agent: the enclosing agent, if any.
        turn: the enclosing turn, if any.

    Read an argument by the name its event declares (``type.arg_names``):
    ``event["output"]`` for ``TurnHook.AFTER_RUN``, ``event["exc"]`` for
    ``ToolHook.ON_ERROR``. Names, unlike positions, say what an observer means and
    cannot silently shift; the lookup is one dictionary access on the member.
    """

    __slots__ = ("args", "kwargs", "scope", "source", "type")

    def __init__(
        self,
        type: HookType,
        source: object,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any] | None = None,
        scope: Scope | None = None,
    ) -> None:
        self.type = type
        self.source = source
        self.args = args
        self.kwargs: Mapping[str, Any] = kwargs if kwargs is not None else _EMPTY
        self.scope = scope

    @property
    def agent(self) -> Any:
        """The enclosing agent, if any."""
        return None if self.scope is None else self.scope.agent

    @property
    def turn(self) -> Any:
        """The enclosing turn, if any."""
        return None if self.scope is None else self.scope.turn

    def __getitem__(self, name: str) -> Any:
        """The argument called ``name``; ``KeyError`` naming the event's arguments if none is.

        ``ToolHook.BEFORE_INVOKE`` declares no names (its arguments are the tool's
        own): there, names read the tool's keyword arguments.
        """
        index = self.type._positions.get(name)
        if index is not None:
            return self.args[index]
        if name in self.kwargs:
            return self.kwargs[name]
        raise KeyError(self._no_argument(name))

    def get(self, name: str, default: Any = None) -> Any:
        """The argument called ``name``, or ``default`` when this event has none.

        For code that handles several events at once, some of which carry the
        argument: ``event.get("turn")`` is the turn for ``AgentHook.AFTER_TURN``
        and ``None`` for ``AgentHook.BEFORE_TURN``.
        """
        index = self.type._positions.get(name)
        if index is not None:
            return self.args[index]
        return self.kwargs.get(name, default)

    def _no_argument(self, name: str) -> str:
        event = self.type.qualified
        if self.type.arg_names is None:
            return (
                f"{event} has no keyword argument {brief(name, 40)}: it passes the tool's "
                f"own arguments, here {brief(list(self.kwargs), 120)} by keyword and "
                f"{len(self.args)} by position in event.args"
            )
        names = ", ".join(self.type.arg_names)
        return (
            f"{event} has no argument {brief(name, 40)}: its arguments are ({names}); "
            f"read one of those, e.g. event[{self.type.arg_names[0]!r}]"
        )

    def __repr__(self) -> str:
        return f"<Event {self.type.qualified} from {type(self.source).__name__}>"


class Subscriber:
    """Base class for observers of the runtime. Override only what you need.

    Every method is called synchronously on the event loop, in the task that runs
    the observed code, so it must be quick and must not block.

    ``event_types`` limits `on_event` to some event types (``None``: all), and
    ``scope_kinds`` limits `on_start`/`on_end` to some kinds of scope.
    Listening only to [`COLD_EVENTS`][pygents.COLD_EVENTS] keeps every per-turn path of the
    runtime on its fast track.
    """

    event_types: ClassVar[frozenset[HookType] | None] = None
    scope_kinds: ClassVar[frozenset[ScopeKind] | None] = None
    """The scope kinds `on_start`/`on_end` are called for (``None``: all)."""

    def on_event(self, event: Event) -> None:
        """A hook event fired (before the hooks for it run)."""

    def on_start(self, scope: Scope) -> None:
        """A scope started (an agent run, a turn, or a tool invocation)."""

    def on_end(self, scope: Scope) -> None:
        """A scope ended; ``scope.stop_reason`` and ``scope.error`` say how."""

    def on_enter(self, scope: Scope) -> None:
        """Code inside ``scope`` (a tool body) is about to run in the current task."""

    def on_exit(self, scope: Scope) -> None:
        """The code announced by the matching `on_enter` stopped running."""

    def on_turn_created(self, turn: Any) -> None:
        """A [`Turn`][pygents.Turn] was constructed (telemetry remembers where)."""


_EnterToken: TypeAlias = "tuple[Token[Scope | Frame | None], tuple[Subscriber, ...]]"
_Scoper: TypeAlias = "tuple[Subscriber, Callable[[Scope], None], Callable[[Scope], None]]"
"""A subscriber following scopes, with its bound ``on_start`` and ``on_end``."""


def _overrides(subscriber: Subscriber, method: str) -> bool:
    return getattr(type(subscriber), method, None) is not getattr(Subscriber, method)


class Bus:
    """Holds the subscribers and the flag the runtime checks before doing any work.

    There is one instance, `BUS`. The runtime guards every event with one of
    two flags, so that an event nobody needs costs a single attribute check:

    ``hot``
        someone needs the per-turn events ([`HOT_EVENTS`][pygents.HOT_EVENTS]): a
        subscriber listens to at least one of them, or a global hook exists. It
        guards the events fired for every turn and every streamed value.
    ``any``
        someone needs events at all: any event listener, or a global hook. It
        guards the cold events (puts, pauses, errors, timeouts, context changes).

    Both are kept up to date as subscribers come and go and global hooks are
    registered (by the hook module); an object's own hooks are checked next to the
    flag (``if hooks or BUS.hot``). Subscribers that only follow scopes, steps or
    turn creation are reached through ``scopers``, ``enterers`` and ``creators``, and
    leave the event paths as fast as with nobody subscribed.
    """

    __slots__ = (
        "_reported",
        "any",
        "creators",
        "enterers",
        "global_hooks",
        "hot",
        "listeners",
        "listeners_for",
        "scopers",
        "scopers_by_kind",
        "subscribers",
    )

    def __init__(self) -> None:
        self.subscribers: tuple[Subscriber, ...] = ()
        self.listeners: tuple[Subscriber, ...] = ()
        self.scopers: tuple[Subscriber, ...] = ()
        self.enterers: tuple[Subscriber, ...] = ()
        self.creators: tuple[Subscriber, ...] = ()
        # Bound methods, looked up once: an event reaches its listeners with one call each.
        self.listeners_for: dict[HookType, tuple[tuple[Subscriber, Callable[[Event], None]], ...]]
        self.listeners_for = {}
        self.scopers_by_kind: dict[ScopeKind, tuple[_Scoper, ...]] = dict.fromkeys(ScopeKind, ())
        self.global_hooks = False
        self.hot = False
        self.any = False
        self._reported: set[tuple[int, str]] = set()

    def _rebuild(self) -> None:
        subs = self.subscribers
        self.listeners = tuple(s for s in subs if _overrides(s, "on_event"))
        self.scopers = tuple(
            s for s in subs if _overrides(s, "on_start") or _overrides(s, "on_end")
        )
        self.enterers = tuple(
            s for s in subs if _overrides(s, "on_enter") or _overrides(s, "on_exit")
        )
        self.creators = tuple(s for s in subs if _overrides(s, "on_turn_created"))
        self.listeners_for = {
            member: wanted
            for member in HOT_EVENTS | COLD_EVENTS
            if (
                wanted := tuple(
                    (s, s.on_event)
                    for s in self.listeners
                    if s.event_types is None or member in s.event_types
                )
            )
        }
        self.scopers_by_kind = {
            kind: tuple(
                (s, s.on_start, s.on_end)
                for s in self.scopers
                if s.scope_kinds is None or kind in s.scope_kinds
            )
            for kind in ScopeKind
        }
        self._refresh_flags()

    def _refresh_flags(self) -> None:
        hot = any(
            s.event_types is None or not s.event_types.isdisjoint(HOT_EVENTS)
            for s in self.listeners
        )
        self.hot = hot or self.global_hooks
        self.any = bool(self.listeners) or self.global_hooks

    def set_global_hooks(self, present: bool) -> None:
        self.global_hooks = present
        self._refresh_flags()

    def add(self, subscriber: Subscriber) -> None:
        if not isinstance(subscriber, Subscriber):
            raise TypeError(
                f"subscribe() takes a pygents.Subscriber, got {type(subscriber).__name__}; "
                "subclass pygents.Subscriber and override the methods you need"
            )
        if subscriber not in self.subscribers:
            self.subscribers = (*self.subscribers, subscriber)
            self._rebuild()

    def remove(self, subscriber: Subscriber) -> None:
        if subscriber in self.subscribers:
            self.subscribers = tuple(s for s in self.subscribers if s is not subscriber)
            self._reported = {key for key in self._reported if key[0] != id(subscriber)}
            self._rebuild()

    def contain(self, subscriber: Subscriber, method: str, exc: Exception) -> None:
        """Log a subscriber's exception once per subscriber and method."""
        key = (id(subscriber), method)
        if key not in self._reported:
            self._reported.add(key)
            _log.error(
                "pygents subscriber %r raised in %s (further errors from it there are "
                "not logged); the runtime carries on",
                subscriber,
                method,
                exc_info=exc,
            )

    # -- the calls the runtime makes -------------------------------------------------

    def created(self, turn: Any) -> None:
        for subscriber in self.creators:
            try:
                subscriber.on_turn_created(turn)
            except Exception as exc:
                self.contain(subscriber, "on_turn_created", exc)

    def start(self, scope: Scope, observers: tuple[_Scoper, ...]) -> None:
        """Tell ``observers`` (``scopers_by_kind[scope.kind]``, which the caller looked
        up to skip this call when empty) that ``scope`` starts; `end` tells the same."""
        scope._observers = observers
        for subscriber, on_start, _ in observers:
            try:
                on_start(scope)
            except Exception as exc:
                self.contain(subscriber, "on_start", exc)

    def end(self, scope: Scope) -> None:
        for subscriber, _, on_end in scope._observers:
            try:
                on_end(scope)
            except Exception as exc:
                self.contain(subscriber, "on_end", exc)

    def enter(self, scope: Scope) -> _EnterToken:
        """Make ``scope`` current in this task and tell subscribers; see `exit`."""
        token = CURRENT.set(scope)
        return token, self.announce_enter(scope)

    def exit(self, scope: Scope, entered: _EnterToken) -> None:
        token, enterers = entered
        self.announce_exit(scope, enterers)
        try:
            CURRENT.reset(token)
        except ValueError:
            # Finalised from another context (an abandoned generator): nothing to restore.
            pass

    def announce_enter(self, scope: Scope) -> tuple[Subscriber, ...]:
        enterers = self.enterers
        for subscriber in enterers:
            try:
                subscriber.on_enter(scope)
            except Exception as exc:
                self.contain(subscriber, "on_enter", exc)
        return enterers

    def announce_exit(self, scope: Scope, enterers: tuple[Subscriber, ...]) -> None:
        for subscriber in reversed(enterers):
            try:
                subscriber.on_exit(scope)
            except Exception as exc:
                self.contain(subscriber, "on_exit", exc)


BUS: Final = Bus()


class Subscription:
    """Returned by [`subscribe`][pygents.subscribe]; unsubscribes on `close` or on leaving
    ``with``."""

    __slots__ = ("subscriber",)

    def __init__(self, subscriber: Subscriber) -> None:
        self.subscriber = subscriber

    def close(self) -> None:
        BUS.remove(self.subscriber)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def subscribe(subscriber: Subscriber) -> Subscription:
    """Start delivering every event and scope to ``subscriber``. Safe at any time."""
    BUS.add(subscriber)
    return Subscription(subscriber)


def unsubscribe(subscriber: Subscriber) -> None:
    """Stop delivering to ``subscriber`` (no error if it was not subscribed)."""
    BUS.remove(subscriber)
