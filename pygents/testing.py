"""Helpers for testing code built on pygents (no pytest needed to import this).

* [`isolated_registries`][pygents.testing.isolated_registries] — tools, hooks and
  agents defined inside the block are forgotten when it ends, so tests can reuse
  names; what existed before stays.
* [`RecordingSubscriber`][pygents.testing.RecordingSubscriber] — records every event
  and scope, and lets a test *wait* for one (no sleeps).
* [`collect`][pygents.testing.collect] and [`drain`][pygents.testing.drain] — consume
  a stream or an agent's run into a list, so tests do not each write the same
  ``async for`` comprehension.

For pytest, add ``pytest_plugins = ["pygents.pytest_plugin"]`` to ``conftest.py``
to get the ``pygents_isolated`` (autouse) and ``recorder`` fixtures.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from pygents._agent import Agent, AgentRegistry
from pygents._enums import HookType
from pygents._hooks import HookRegistry
from pygents._observe import Event, Subscriber, subscribe
from pygents._registry import Registry
from pygents._scope import Scope, ScopeKind
from pygents._tool import ToolRegistry

__all__ = [
    "RecordingSubscriber",
    "ScopeRecord",
    "collect",
    "drain",
    "isolated_registries",
    "registries",
]

T = TypeVar("T")


def registries() -> list[Registry[Any]]:
    """Every global registry pygents keeps."""
    return [ToolRegistry, HookRegistry, AgentRegistry]


@contextmanager
def isolated_registries() -> Iterator[None]:
    """Restore every registry to its current contents when the block exits."""
    snapshots = [(r, r.snapshot()) for r in registries()]
    try:
        yield
    finally:
        for registry, snapshot in snapshots:
            registry.restore(snapshot)


@dataclass(frozen=True, slots=True)
class ScopeRecord:
    """One scope transition seen by a
    [`RecordingSubscriber`][pygents.testing.RecordingSubscriber]."""

    action: str  # "start", "end", "enter" or "exit"
    scope: Scope


class RecordingSubscriber(Subscriber):
    """Keeps everything it is told, and wakes waiters when something new arrives."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.scopes: list[ScopeRecord] = []
        self._changed: asyncio.Event | None = None

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def on_event(self, event: Event) -> None:
        self.events.append(event)
        self._notify()

    def on_start(self, scope: Scope) -> None:
        self.scopes.append(ScopeRecord("start", scope))
        self._notify()

    def on_end(self, scope: Scope) -> None:
        self.scopes.append(ScopeRecord("end", scope))
        self._notify()

    def on_enter(self, scope: Scope) -> None:
        self.scopes.append(ScopeRecord("enter", scope))

    def on_exit(self, scope: Scope) -> None:
        self.scopes.append(ScopeRecord("exit", scope))

    def types(self) -> list[HookType]:
        """The types of the recorded events, in order."""
        return [e.type for e in self.events]

    def of(self, *types: HookType) -> list[Event]:
        """The recorded events of the given types."""
        return [e for e in self.events if e.type in types]

    def started(self, kind: ScopeKind | None = None) -> list[Scope]:
        return [
            r.scope for r in self.scopes if r.action == "start" and kind in (None, r.scope.kind)
        ]

    def ended(self, kind: ScopeKind | None = None) -> list[Scope]:
        return [r.scope for r in self.scopes if r.action == "end" and kind in (None, r.scope.kind)]

    def clear(self) -> None:
        self.events.clear()
        self.scopes.clear()

    async def wait_for(self, predicate: Callable[[RecordingSubscriber], bool]) -> None:
        """Return once ``predicate(self)`` is true, re-checking on every new record.

        Bound it with ``asyncio.timeout`` in tests if the condition may never hold.
        """
        if self._changed is None:
            self._changed = asyncio.Event()
        while not predicate(self):
            self._changed.clear()
            await self._changed.wait()

    @contextmanager
    def subscribed(self) -> Iterator[RecordingSubscriber]:
        """Subscribe for the duration of a ``with`` block."""
        with subscribe(self):
            yield self


async def collect(stream: AsyncIterable[T]) -> list[T]:
    """Every item of ``stream``, in order: ``await collect(agent.run())`` keeps the turns.

    Written once here because nearly every test of a streaming tool or an agent needs it,
    and a hand-rolled loop per test module drifts (one swallows errors, one does not).
    Errors from the stream propagate; nothing is swallowed.
    """
    return [item async for item in stream]


async def drain(agent: Agent) -> list[Any]:
    """Run ``agent`` until its queue is empty and return the values it yielded, in order.

    The turns are dropped, which is what most tests want; use
    [`collect`][pygents.testing.collect] on ``agent.run()`` when the ``(turn, value)``
    pairs matter. A failing turn's error propagates, as it does from ``agent.run()``.
    """
    return [value async for _, value in agent.run()]
