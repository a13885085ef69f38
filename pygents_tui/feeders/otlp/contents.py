"""An agent's waiting turns and context items, read out of one received snapshot.

Live snapshots (``pygents_otel``'s ``_contents``) list them as parallel arrays: entry
``i`` of ``pygents.agent.queue.tools``, ``.uuids``, ``.timeouts`` and (with content
capture) ``.arguments`` describe the same turn, and ``.more`` counts the turns not
listed; the context queue and pool send ids, descriptions and (with capture) contents
the same way. These functions turn the decoded attributes of one snapshot record into
what the Queue and Context panels show, exactly the shapes the in-process dashboard
gives them.

Anything may arrive under these names, so nothing here trusts the shape: arrays of
different lengths give as many rows as the array of names (a missing field shows as
``?``), entries of the wrong type show as ``?``, at most ``SNAPSHOT_ITEMS`` rows are
taken however long an array is, every string is cut, and control characters are kept
as they are (the panels make them visible). A snapshot that sent no list at all gives
``None``; none of this raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from pygents_otel import _names as k
from pygents_tui.feeders.otlp.coerce import as_float, as_int
from pygents_tui.listen.values import Value
from pygents_tui.state import Capacity, ContextContents
from pygents_tui.text._cut import cut_middle

__all__ = ["QueuedTurns", "context_contents", "queued_turns"]

Attributes = Mapping[str, Value]

ROWS: Final = k.SNAPSHOT_ITEMS
"""Rows taken of each list, whatever a sender sends."""
MAX_COUNT: Final = 10**12
"""Counts (sizes, limits, turns not listed) are shown up to this: a sender's number
is only a number, but a 300-digit one would not fit a panel."""
UNKNOWN: Final = "?"
NOT_SENT: Final = "(not captured)"  # a preview the sender keeps without content capture
# The widths the in-process feeder (``feeders.process.local``) cuts to: both modes look alike.
_TOOL: Final = 64
_ARGUMENTS: Final = 200
_QUEUE_ITEM: Final = (70, 70, 70)  # id, description, content: whichever is shown
_POOL_ITEM: Final = (14, 40, 40)


class QueuedTurns(NamedTuple):
    """The queue panel's rows ``(position, tool, arguments, timeout)``, next first, and
    how many more turns wait than are listed."""

    rows: tuple[tuple[str, str, str, str], ...]
    more: int


def _array(attributes: Attributes, key: str) -> tuple[Value, ...] | None:
    """The array sent under ``key``, at most ``ROWS`` entries of it; ``None`` if what
    was sent is not an array."""
    found = attributes.get(key)
    return found[:ROWS] if isinstance(found, tuple) else None


def _entry(array: tuple[Value, ...] | None, index: int) -> Value | None:
    return array[index] if array is not None and index < len(array) else None


def _text(value: Value | None, width: int, missing: str = UNKNOWN) -> str:
    return cut_middle(value, width) if isinstance(value, str) else missing


def _count(value: Value | None) -> int | None:
    """A count within ``0..MAX_COUNT``; ``None`` for anything but a number."""
    found = as_int(value)
    return None if found is None else min(max(found, 0), MAX_COUNT)


def _more(attributes: Attributes, key: str, sent: int, listed: int, total: str) -> int:
    """The entries not listed: the sender's count plus those sent past ``ROWS``, or, if
    more, the store's size minus what is listed (a receiver may keep fewer entries of
    an array than the sender sent, and those left out must still be counted)."""
    more = (_count(attributes.get(key)) or 0) + max(0, sent - listed)
    size = _count(attributes.get(total))
    return min(MAX_COUNT, max(more, size - listed) if size is not None else more)


def _timeout(value: Value | None) -> str:
    seconds = as_float(value)
    return UNKNOWN if seconds is None else f"{seconds:g}s"


def queued_turns(attributes: Attributes) -> QueuedTurns | None:
    """The waiting turns one snapshot lists; ``None`` if it lists none (a sender that
    does not send them, or a tools entry that is not an array)."""
    sent = attributes.get(k.QUEUED_TOOLS)
    tools = _array(attributes, k.QUEUED_TOOLS)
    if not isinstance(sent, tuple) or tools is None:
        return None
    timeouts = _array(attributes, k.QUEUED_TIMEOUTS)
    arguments = _array(attributes, k.QUEUED_ARGUMENTS)
    missing = NOT_SENT if arguments is None else UNKNOWN
    rows = tuple(
        (
            str(index + 1),
            _text(tool, _TOOL),
            _text(_entry(arguments, index), _ARGUMENTS, missing),
            _timeout(_entry(timeouts, index)),
        )
        for index, tool in enumerate(tools)
    )
    return QueuedTurns(rows, _more(attributes, k.QUEUED_MORE, len(sent), len(rows), k.QUEUE_DEPTH))


def _listed(
    attributes: Attributes, names: tuple[str, str, str], widths: tuple[int, int, int]
) -> list[tuple[str, str, str]] | None:
    """A store's items as ``(id, description, content)``, one per description sent
    (the sender sends one for every item, empty when it has none), or ``None``."""
    ids, descriptions, contents = names
    described = _array(attributes, descriptions)
    if described is None:
        return None
    named, previews = _array(attributes, ids), _array(attributes, contents)
    missing = NOT_SENT if previews is None else UNKNOWN
    id_width, description_width, content_width = widths
    return [
        (
            _text(_entry(named, index), id_width, ""),
            _text(description, description_width),
            _text(_entry(previews, index), content_width, missing),
        )
        for index, description in enumerate(described)
    ]


def _capacity(attributes: Attributes, size: str, limit: str, listed: int) -> Capacity:
    """The store's size and limit as sent; the items listed if no size was."""
    found = _count(attributes.get(size))
    return Capacity(listed if found is None else found, _count(attributes.get(limit)) or None)


def _shown(item: tuple[str, str, str]) -> str:
    """A queue window's entry: its content preview, else its description, else its id."""
    item_id, description, content = item
    if content not in (NOT_SENT, UNKNOWN):
        return content
    return description if description not in ("", UNKNOWN) else item_id or content


def context_contents(attributes: Attributes) -> ContextContents | None:
    """The context items one snapshot lists, as the context panel shows them; ``None``
    if it lists neither store's items."""
    queue_names = (k.QUEUE_ITEM_IDS, k.QUEUE_ITEM_DESCRIPTIONS, k.QUEUE_ITEM_CONTENTS)
    pool_names = (k.POOL_ITEM_IDS, k.POOL_ITEM_DESCRIPTIONS, k.POOL_ITEM_CONTENTS)
    queued = _listed(attributes, queue_names, _QUEUE_ITEM)
    pooled = _listed(attributes, pool_names, _POOL_ITEM)
    if queued is None and pooled is None:
        return None
    queued, pooled = queued or [], pooled or []
    return ContextContents(
        queue=_capacity(attributes, k.QUEUE_SIZE, k.QUEUE_LIMIT, len(queued)),
        queue_items=tuple(map(_shown, queued)),
        pool=_capacity(attributes, k.POOL_SIZE, k.POOL_LIMIT, len(pooled)),
        pool_items=tuple(pooled),
    )
