"""Who can act on an agent, and what each agent is offered.

One dashboard state can be fed by several sources at once: a process's runtime
(everything), the OTLP receiver (what services send, no control), and later a
Redis source that reaches agents served from ``pygents.redis`` mailboxes (pause,
cancel) whose telemetry arrives over OTLP. So what is offered is asked per agent,
of every source that serves it, never of one global mode: an agent heard over OTLP
that a Redis source also serves can be paused; its neighbour heard over OTLP only
answers the OTLP source's one line.

A new source implements `Source` and is attached to the state's `Sources`; the app
and the panels need no change.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, Protocol, TypeVar, runtime_checkable

from pygents_tui.state._capabilities import OPT_IN, Capabilities, Capability, Reply

__all__ = ["ACTION_NEEDS", "Action", "Source", "Sources", "TargetedSource"]

Action = Literal["pause", "cancel", "retry", "drop", "drain"]
"""What a key asks a source to do to an agent: ``pause`` (pause it, or resume it if it
is paused) and, on one thing of the agent's (a *target*), ``cancel`` (a running
turn), ``retry`` and ``drop`` (a dead letter), ``drain`` (a worker)."""

ACTION_NEEDS: Final[Mapping[Action, Capability]] = MappingProxyType(
    {
        "pause": "pause",
        "cancel": "cancel",
        "retry": "dead_letters",
        "drop": "dead_letters",
        "drain": "drain",
    }
)
"""The capability each action needs."""

_S = TypeVar("_S")


class Source(Protocol):
    """One feeder's side of control: which agents it serves, what it offers for
    each, and how it acts on them.

    ``capabilities(None)`` is what it offers to the agents it serves in general (the
    help lists the keys from it); ``capabilities(key)`` what it offers for that agent
    (a source may know more of some agents than of others). ``act`` is called only
    for an agent it serves, with an action its capabilities offer for it; it answers
    in one line (a warning when nothing was done: the agent has gone, say)."""

    def serves(self, agent: str) -> bool: ...

    def capabilities(self, agent: str | None) -> Capabilities: ...

    def act(self, action: Action, agent: str) -> Reply: ...


@runtime_checkable
class TargetedSource(Source, Protocol):
    """A source whose actions can aim at one thing of an agent's (a turn, a dead
    letter, a worker: ``target``, as the source listed it). Only such a source is
    asked an action with a target; it offers the capabilities those need
    (`pygents_tui.state.OPT_IN`), which the others never do."""

    def act_on(self, action: Action, agent: str, target: str) -> Reply: ...


class Sources:
    """The sources of one dashboard state, the first of them its main feeder (the one
    whose lines explain what no source offers)."""

    def __init__(self, main: Source) -> None:
        self._sources: list[Source] = [main]

    def attach(self, source: Source) -> None:
        """Add a source that serves some agents besides the main feeder."""
        self._sources.append(source)

    def _serving(self, agent: str | None) -> list[Source]:
        main, *others = self._sources
        if agent is None:
            return self._sources
        return [main, *(source for source in others if source.serves(agent))]

    def of(self, agent: str | None) -> Capabilities:
        """What ``agent`` is offered by any source serving it (``None``: what is offered
        to some agent, for the help); for what none offers, the main feeder's line."""
        found = [source.capabilities(agent) for source in self._serving(agent)]
        main, *others = found
        if not others:
            return main
        # What none offers keeps a line: the most specific source's (the last attached
        # that says why), else the main feeder's.
        named = {*main.lacking, *OPT_IN, *(w for other in others for w in other.lacking)}
        lacking: dict[Capability, str] = {}
        for what in named:
            if any(capabilities.offers(what) for capabilities in found):
                continue
            lines = [o.lacking[what] for o in reversed(others) if what in o.lacking]
            line = lines[0] if lines else main.lacking.get(what)
            if line is not None:
                lacking[what] = line
        granted = frozenset(w for c in found for w in c.granted if c.offers(w))
        return Capabilities(MappingProxyType(lacking), granted)

    def act(self, action: Action, agent: str | None, target: str | None = None) -> Reply:
        """Do ``action`` to ``agent`` (on its ``target``, for an action that takes one)
        through the first source serving it that offers it; else say, in one line,
        that it is not offered."""
        need = ACTION_NEEDS[action]
        if agent is None:
            offered = self.of(None).offers(need)
            return Reply("select an agent first" if offered else self._why(None, need), True)
        for source in self._serving(agent):
            if not source.capabilities(agent).offers(need):
                continue
            if target is None:
                return source.act(action, agent)
            if isinstance(source, TargetedSource):
                return source.act_on(action, agent, target)
        return Reply(self._why(agent, need), True)

    def find(self, kind: type[_S]) -> _S | None:
        """The first attached source that is a ``kind`` (a panel that shows what only
        one kind of source has, the Redis mailboxes, reads it there)."""
        for source in self._sources:
            if isinstance(source, kind):
                return source
        return None

    def _why(self, agent: str | None, need: Capability) -> str:
        return self.of(agent).why_not(need) or f"{need} is not offered here"
