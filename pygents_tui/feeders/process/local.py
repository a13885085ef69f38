"""What the in-process feeder (`pygents_tui.feeders.process.model.DashboardModel`)
reads of this process besides its subscription: a process is a fleet of one.

Pure helpers over the runtime's own objects: what a registered agent is doing
(`phase_of`), the turns a worker runs outside an agent's loop (`detached_turns`), a
waiting turn's arguments in one line (`arguments`), the program's name (`program`),
control (`ThisProcess`, the process as a `Source`) and — when an OpenTelemetry SDK is
configured — where the spans of this process come from (`SpanSource`, loaded by
`spans_module`) and the store's traces read from them (`ProcessTraces`).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from pygents import Agent, AgentRegistry, Turn
from pygents_tui.state import (
    Action,
    Capabilities,
    Reply,
    TraceTree,
    TurnEntry,
)
from pygents_tui.text._preview import preview

if TYPE_CHECKING:
    from pygents_tui.listen.decode import ReceivedSpan

__all__ = [
    "NO_SDK",
    "ProcessTraces",
    "SpanSource",
    "ThisProcess",
    "arguments",
    "detached_turns",
    "phase_of",
    "program",
    "spans_module",
]

NO_SDK = "no OpenTelemetry SDK is configured in this process, so no spans to show"


class SpanSource(Protocol):
    """Where the spans of this process come from (`spans.SpanCapture`)."""

    @property
    def version(self) -> int: ...

    @property
    def dropped(self) -> int: ...

    def drain(self, sink: Callable[[ReceivedSpan], object] | None = None) -> bool: ...

    def trace_of(self, uuid: str) -> str | None: ...

    def tree(self, trace_id: str) -> TraceTree | None: ...

    def close(self) -> None: ...


def _spans_module() -> ModuleType | None:
    """``pygents_tui.feeders.process.spans``, or ``None`` without the OpenTelemetry SDK (or the OTLP
    message package) that it needs: the trace view is optional, the dashboard is not."""
    try:
        return importlib.import_module("pygents_tui.feeders.process.spans")
    except ImportError:
        return None


@functools.cache
def spans_module() -> ModuleType | None:
    """`_spans_module`, imported once, when the first in-process store is made: importing
    ``pygents_tui`` (or its state package) must not load the OpenTelemetry SDK."""
    return _spans_module()


class ThisProcess:
    """The control side of this process's runtime (a `Source`): a process is a fleet
    of one that the dashboard can reach into. It serves every agent it lists and
    offers everything: its agents can be paused, their queues and contexts read,
    and what the program prints is shown."""

    def serves(self, agent: str) -> bool:
        return True

    def capabilities(self, agent: str | None) -> Capabilities:
        return _EVERYTHING

    def act(self, action: Action, agent: str) -> Reply:
        """``pause``: pause the registered agent named ``agent``, or resume it."""
        found = AgentRegistry.find(agent)
        if found is None:
            return Reply(f"{agent} has finished", True)
        if found.is_paused:
            found.resume()
            return Reply(f"{agent} resumed")
        found.pause()
        return Reply(f"{agent} will pause before its next turn")


_EVERYTHING = Capabilities()


class _HasSpans(Protocol):
    @property
    def spans(self) -> SpanSource | None: ...


class ProcessTraces:
    """The store's traces: this process's spans, once found (`LiveProcess.spans`)."""

    evicted = 0
    dropped = 0

    def __init__(self, feeder: _HasSpans) -> None:
        self._feeder = feeder

    def tree(self, trace_id: str) -> TraceTree | None:
        spans = self._feeder.spans
        return spans.tree(trace_id) if spans is not None else None


def program() -> str:
    """This program's name, as a service of one instance is named."""
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"


def phase_of(agent: Agent, seen: str) -> str:
    """What a registered agent is doing: paused or running as it says, else what its
    last run left (``seen``), idle once a run has ended."""
    if agent.is_paused:
        return "paused"
    if agent.is_running:
        return "running"
    return seen if seen != "running" else "idle"


def detached_turns(running: Iterable[TurnEntry]) -> dict[str, list[TurnEntry]]:
    """The running turns by agent key, oldest first. An agent's own ``run()`` runs
    one turn at a time, its ``current_turn``; a ``pygents.redis`` Worker runs many
    of its turns at once, each in an agent run of its own that never takes the agent
    (``is_running`` stays false): these say what it is doing then."""
    found: dict[str, list[TurnEntry]] = {}
    for turn in running:
        if turn.agent is not None:
            found.setdefault(turn.agent, []).append(turn)
    for turns in found.values():
        turns.sort(key=lambda turn: turn.started)
    return found


def arguments(turn: Turn[Any]) -> str:
    """A waiting turn's arguments, in one bounded line."""
    arguments = ", ".join(f"{k}={preview(v, 24)}" for k, v in turn.kwargs.items())
    if turn.args:
        arguments = ", ".join(preview(a, 16) for a in turn.args) + (
            f", {arguments}" if arguments else ""
        )
    return preview(arguments, 40)
