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

This costs nothing per turn: it runs once per agent per snapshot interval.
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

__all__ = ["PREVIEW_LIMIT", "contents"]

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


def _turns(turns: Sequence[Turn[Any]], content: s.Content | None) -> Attributes:
    """The first waiting turns (next first), and how many more wait."""
    listed = turns[: n.SNAPSHOT_ITEMS]
    attributes: Attributes = {
        n.QUEUED_TOOLS: [bounded(turn.tool.name) for turn in listed],
        n.QUEUED_UUIDS: [turn.uuid for turn in listed],
        n.QUEUED_TIMEOUTS: [float(turn.timeout) for turn in listed],
        n.QUEUED_MORE: len(turns) - len(listed),
    }
    if content is not None:
        attributes[n.QUEUED_ARGUMENTS] = [
            s.call_arguments(turn.args, turn.kwargs, content) for turn in listed
        ]
    return attributes


def _items(
    items: Sequence[ContextItem[Any]],
    content: s.Content | None,
    names: tuple[str, str, str, str],
) -> Attributes:
    """A store's newest items (oldest of them first, as the store keeps them), and how
    many older ones are not listed. ``names``: the ids, descriptions, contents and
    more attributes of the store."""
    ids, descriptions, contents_, more = names
    listed = items[-n.SNAPSHOT_ITEMS :]
    attributes: Attributes = {
        ids: [bounded(item.id or "", NAME_LIMIT) for item in listed],
        descriptions: [bounded(item.description or "", PREVIEW_LIMIT) for item in listed],
        more: len(items) - len(listed),
    }
    if content is not None:
        attributes[contents_] = [content.dump(item.content) for item in listed]
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


def contents(agent: Agent, content: s.Content) -> Attributes:
    """The snapshot attributes listing ``agent``'s waiting turns and context items;
    a list whose copy kept failing is left out (see the module docstring)."""
    previews = (
        dataclasses.replace(content, max_length=min(content.max_length, PREVIEW_LIMIT))
        if content.capture
        else None
    )
    attributes: Attributes = {}
    turns = _copy(lambda: agent.turns)
    if turns is not None:
        attributes.update(_turns(turns, previews))
    queue, pool = agent.context_queue, agent.context_pool
    queued = _copy(lambda: queue.items)
    if queued is not None:
        attributes.update(_items(queued, previews, _QUEUE_ITEMS))
    pooled = _copy(lambda: pool.items)
    if pooled is not None:
        attributes.update(_items(pooled, previews, _POOL_ITEMS))
    return attributes
