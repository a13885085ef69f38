"""What a snapshot lists of an agent: its waiting turns and its context items.

A listener in another process has no other way to see an agent's queue and context,
so each snapshot carries them, bounded: at most ``n.SNAPSHOT_ITEMS`` of each list,
plus a count of the ones left out, and every piece of text cut. OTLP attributes hold
arrays of one primitive type only, so a list goes out as parallel arrays, one per
field (``pygents.agent.queue.tools``, ``.uuids``, ``.timeouts``...), entry ``i`` of
each describing the same turn or item. Previews of what the user wrote (a turn's
arguments, an item's content) are sent only with content capture on.

Snapshots are built on the snapshot thread while the event loop keeps changing the
queue and the stores. Each list is therefore taken as one copy (``Agent.turns``,
``items``: a single ``list()`` of the underlying deque or dict) and that copy is all
that is read afterwards; a copy that fails because the container changed while it was
copied (``RuntimeError``, possible where the copy is not atomic) is retried a few
times, then the list is left out of this snapshot rather than half sent. Previews go
through ``dump``, which never raises, even when a value changes while it is written.

This costs nothing per turn: it runs once per agent per snapshot interval. Previews
are the expensive part (a few dozen microseconds each, 150 an agent), so each is made
once: a turn's arguments when it is first listed, an item's content when that item
is first listed, and the previews are kept while the turn or item stays listed. A
value changed in place after its preview was made keeps its first preview; the
turn's or item's own fields (tool, timeout, id, description) are read every time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from opentelemetry.util.types import AttributeValue

from pygents import Agent, ContextItem, Turn
from pygents_otel import _names as n
from pygents_otel import _spans as s
from pygents_otel._text import NAME_LIMIT, bounded

__all__ = ["PREVIEW_LIMIT", "Contents"]

PREVIEW_LIMIT: Final = 256
"""Characters kept of each description and preview in a snapshot's lists (with the
content limit, if lower): fifty of each per agent every second must stay small."""

_TRIES: Final = 3
"""Copies of a container attempted when it keeps changing while it is copied."""

T = TypeVar("T")
Attributes = dict[str, AttributeValue]


def _copy(read: Callable[[], list[T]]) -> list[T] | None:
    """``read()``, retried when the container changed under it; ``None`` if it kept
    changing (the next snapshot tries again)."""
    for _ in range(_TRIES):
        try:
            return read()
        except RuntimeError:  # "deque mutated" / "dictionary changed size" during the copy
            continue
    return None


class _Kept:
    """One agent's previews from its last snapshot: arguments by turn uuid, contents by
    the item's ``id()`` (the item is kept too, so that the id names it and no other)."""

    __slots__ = ("items", "turns")

    def __init__(self) -> None:
        self.turns: dict[str, str] = {}
        self.items: dict[int, tuple[ContextItem[Any], str]] = {}


class Contents:
    """Builds the snapshot lists of each agent (see the module docstring). Used by one
    thread at a time: `LiveSubscriber.snapshot` holds a lock around a round."""

    def __init__(self, content: s.Content) -> None:
        # None: no previews (capture off); else the budget they are cut to.
        self.previews = (
            dataclasses.replace(content, max_length=min(content.max_length, PREVIEW_LIMIT))
            if content.capture
            else None
        )
        self._kept: dict[str, _Kept] = {}
        self._next: dict[str, _Kept] = {}

    def of(self, agent: Agent) -> Attributes:
        """The attributes listing ``agent``'s waiting turns and context items; a list
        whose copy kept failing is left out."""
        kept = self._kept.get(agent.uuid) or _Kept()
        fresh = self._next[agent.uuid] = _Kept()
        attributes: Attributes = {}
        turns = _copy(lambda: agent.turns)
        if turns is not None:
            attributes.update(self._turns(turns, kept, fresh))
        queue, pool = agent.context_queue, agent.context_pool
        queued = _copy(lambda: queue.items)
        if queued is not None:
            attributes.update(self._items(queued, kept, fresh, _QUEUE_ITEMS))
        pooled = _copy(lambda: pool.items)
        if pooled is not None:
            attributes.update(self._items(pooled, kept, fresh, _POOL_ITEMS))
        return attributes

    def end_round(self) -> None:
        """Keep the previews of the agents snapshotted in this round only: an agent
        that is gone, or no longer snapshotted, takes its previews with it."""
        self._kept, self._next = self._next, {}

    def _turns(self, turns: Sequence[Turn[Any]], kept: _Kept, fresh: _Kept) -> Attributes:
        """The first waiting turns (next first), and how many more wait."""
        listed = turns[: n.SNAPSHOT_ITEMS]
        attributes: Attributes = {
            n.QUEUED_TOOLS: [bounded(turn.tool.name) for turn in listed],
            n.QUEUED_UUIDS: [turn.uuid for turn in listed],
            n.QUEUED_TIMEOUTS: [float(turn.timeout) for turn in listed],
            n.QUEUED_MORE: len(turns) - len(listed),
        }
        previews = self.previews
        if previews is not None:
            arguments = []
            for turn in listed:
                text = kept.turns.get(turn.uuid)
                if text is None:
                    text = s.call_arguments(turn.args, turn.kwargs, previews)
                arguments.append(fresh.turns.setdefault(turn.uuid, text))
            attributes[n.QUEUED_ARGUMENTS] = arguments
        return attributes

    def _items(
        self,
        items: Sequence[ContextItem[Any]],
        kept: _Kept,
        fresh: _Kept,
        names: tuple[str, str, str, str],
    ) -> Attributes:
        """A store's newest items (oldest of them first, as the store keeps them), and
        how many older ones are not listed. ``names``: the store's ids, descriptions,
        contents and more attributes."""
        ids, descriptions, contents, more = names
        listed = items[-n.SNAPSHOT_ITEMS :]
        attributes: Attributes = {
            ids: [bounded(item.id or "", NAME_LIMIT) for item in listed],
            descriptions: [bounded(item.description or "", PREVIEW_LIMIT) for item in listed],
            more: len(items) - len(listed),
        }
        previews = self.previews
        if previews is not None:
            texts = []
            for item in listed:
                found = kept.items.get(id(item))
                text = found[1] if found is not None and found[0] is item else None
                if text is None:
                    text = previews.dump(item.content)
                fresh.items[id(item)] = (item, text)
                texts.append(text)
            attributes[contents] = texts
        return attributes


_QUEUE_ITEMS: Final = (
    n.QUEUE_ITEM_IDS,
    n.QUEUE_ITEM_DESCRIPTIONS,
    n.QUEUE_ITEM_CONTENTS,
    n.QUEUE_ITEMS_MORE,
)
_POOL_ITEMS: Final = (
    n.POOL_ITEM_IDS,
    n.POOL_ITEM_DESCRIPTIONS,
    n.POOL_ITEM_CONTENTS,
    n.POOL_ITEMS_MORE,
)
