"""The agent's memory: [`ContextItem`][pygents.ContextItem],
[`ContextQueue`][pygents.ContextQueue], [`ContextPool`][pygents.ContextPool].

Both stores share one base (`_Store`): tags, an instance hook list, limits,
``branch()`` and ``to_dict()``/``from_dict()``. Both are [`Injectable`][pygents.Injectable]: a tool
or hook parameter annotated ``ContextQueue`` / ``ContextPool`` (or ``X | None``)
receives the running agent's instance.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, ClassVar, Generic, TypeVar

from pygents._calling import Injectable
from pygents._enums import ContextPoolHook, ContextQueueHook, HookType
from pygents._errors import brief
from pygents._guard import validated
from pygents._hooklist import INHERIT, HookList, branch_hooks
from pygents._hooks import Hook, HookSlot, fire, normalize_tags
from pygents._observe import BUS
from pygents._serial import Reader, hooks_to_data, json_value

__all__ = ["ContextItem", "ContextPool", "ContextQueue"]

T = TypeVar("T")
S = TypeVar("S", bound="_Store[Any]")


@dataclass(frozen=True)
class ContextItem(Generic[T]):
    """An immutable piece of context. ``id`` set → it belongs in a pool.

    ``id`` and ``description`` are strings (or ``None``), checked here: a pool keys
    items by id and serializes them, so a number as id would be accepted now and
    refused by ``from_dict`` later.
    """

    content: T
    description: str | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if not (self.id is None or isinstance(self.id, str)):
            raise TypeError(
                f"ContextItem(id=...) must be a string or None, got {brief(self.id)}; "
                "convert it, e.g. id=str(n)"
            )
        if not (self.description is None or isinstance(self.description, str)):
            raise TypeError(
                f"ContextItem(description=...) must be a string or None, got "
                f"{brief(self.description)}"
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``TypeError`` if the content is not JSON-representable."""
        return {
            "content": json_value(self.content, f"ContextItem(id={brief(self.id, 40)}).content"),
            "description": self.description,
            "id": self.id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ContextItem[Any]:
        return cls._read(Reader(data, "ContextItem"))

    @classmethod
    def _read(cls, r: Reader) -> ContextItem[Any]:
        return cls(
            content=r.json("content"),
            description=r.text("description", optional=True),
            id=r.text("id", optional=True),
        )


def _check_limit(owner: str, limit: object, optional: bool) -> int | None:
    if limit is None and optional:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        allowed = "an int >= 1 or None" if optional else "an int >= 1"
        raise TypeError(f"{owner}(limit=...) must be {allowed}, got {brief(limit)}")
    if limit < 1:
        raise ValueError(f"{owner}(limit=...) must be at least 1, got {brief(limit)}")
    return limit


class _Store(Injectable, Generic[T]):
    """What queues and pools share."""

    _kind: ClassVar[str]
    _optional_limit: ClassVar[bool]

    def __init__(self, limit: int | None, tags: Iterable[str] | None) -> None:
        self._limit = _check_limit(type(self).__name__, limit, self._optional_limit)
        self.tags = normalize_tags(tags, f"{type(self).__name__}(tags=...)")
        self._hooks = HookList(type(self), "hooks")

    @property
    def limit(self) -> int | None:
        return self._limit

    hooks = validated(HookList.validator("hooks"))
    """This store's own hooks, fired before global ones; only hooks may go in."""

    @property
    def items(self) -> list[ContextItem[T]]:
        """A copy of the stored items, oldest first."""
        return list(self._values())

    def _values(self) -> Iterable[ContextItem[T]]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[ContextItem[T]]:
        return iter(self.items)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self)}/{self._limit or '∞'}>"

    async def _fire(self, event: HookType, *args: Any) -> None:
        if self._hooks or BUS.any:
            await fire(event, self, self._hooks, args)

    def branch(self: S, limit: int | None = None, hooks: Iterable[Hook[Any]] | None = INHERIT) -> S:
        """An independent copy with the same tags; no hooks fire while copying.

        ``hooks`` omitted: the copy inherits this store's hooks; ``None`` or ``[]``:
        it has none; a list: exactly those. A smaller ``limit`` keeps the most
        recent items.
        """
        own_hooks = branch_hooks(self, "hooks", self._hooks, hooks)
        child = type(self)(limit=self._limit if limit is None else limit, tags=self.tags)
        child._hooks = own_hooks
        items = list(self._values())
        child._restore(items if child._limit is None else items[-child._limit :])
        return child

    def _check_item(self, item: object) -> ContextItem[T]:
        if not isinstance(item, ContextItem):
            raise TypeError(
                f"{type(self).__name__} stores ContextItem objects, got "
                f"{type(item).__name__}; wrap it: ContextItem(content=...)"
            )
        return item

    def to_dict(self) -> dict[str, Any]:
        """``{"limit", "items", "hooks", "tags"}``, JSON-ready."""
        return {
            "limit": self._limit,
            "items": [item.to_dict() for item in self._values()],
            "hooks": hooks_to_data(self._hooks),
            "tags": sorted(self.tags),
        }

    @classmethod
    def from_dict(cls: type[S], data: Mapping[str, Any]) -> S:
        """Rebuild from `to_dict` output; hooks resolve from ``HookRegistry``.

        Items are restored as they were: no hooks fire and nothing is evicted.
        """
        return cls._read(Reader(data, cls.__name__))

    @classmethod
    def _read(cls: type[S], r: Reader) -> S:
        """The store ``r`` holds (an agent reads its two stores with this too)."""
        store = r.build(cls, limit=r.raw("limit"), tags=r.strings("tags"))
        r.json("limit")  # an int too long for JSON text
        items = [
            c.build(store._check_item, ContextItem._read(c))
            for c in r.children("items", "ContextItem")
        ]
        if store._limit is not None and len(items) > store._limit:
            raise r.fail(
                "items",
                f"holds {len(items)} items, more than the limit of {store._limit}; "
                f"pass data produced by {r.owner}.to_dict()",
            )
        r.build(store._restore, items)
        store.hooks = r.hooks()
        return store

    def _restore(self, items: list[ContextItem[T]]) -> None:
        raise NotImplementedError


class ContextQueue(_Store[T]):
    """A bounded window of recent items; the oldest is evicted when full."""

    _kind = "queue"
    _optional_limit = False

    before_append = HookSlot(ContextQueueHook.BEFORE_APPEND)
    after_append = HookSlot(ContextQueueHook.AFTER_APPEND)
    before_clear = HookSlot(ContextQueueHook.BEFORE_CLEAR)
    after_clear = HookSlot(ContextQueueHook.AFTER_CLEAR)
    on_evict = HookSlot(ContextQueueHook.ON_EVICT)

    def __init__(self, limit: int = 10, tags: Iterable[str] | None = None) -> None:
        super().__init__(limit, tags)
        self._items: deque[ContextItem[T]] = deque()

    def _values(self) -> Iterable[ContextItem[T]]:
        return self._items

    def __len__(self) -> int:
        return len(self._items)

    async def append(self, *items: ContextItem[T]) -> None:
        """Add items at the end, evicting the oldest beyond the limit."""
        incoming = [self._check_item(item) for item in items]
        await self._fire(ContextQueueHook.BEFORE_APPEND, self, incoming, list(self._items))
        # Evict and insert in one synchronous step, so the limit holds even when
        # concurrent appends interleave at hook awaits; then report the evictions.
        limit = self._limit or 1
        evicted: list[ContextItem[T]] = []
        for item in incoming:
            while len(self._items) >= limit:
                evicted.append(self._items.popleft())
            self._items.append(item)
        for item in evicted:
            await self._fire(ContextQueueHook.ON_EVICT, self, item)
        await self._fire(ContextQueueHook.AFTER_APPEND, incoming, list(self._items))

    async def clear(self) -> None:
        """Remove every item."""
        await self._fire(ContextQueueHook.BEFORE_CLEAR, self, list(self._items))
        self._items.clear()
        await self._fire(ContextQueueHook.AFTER_CLEAR, self)

    def _restore(self, items: list[ContextItem[T]]) -> None:
        self._items.extend(items)


class ContextPool(_Store[T]):
    """Items by id, optionally bounded (the oldest is evicted when full)."""

    _kind = "pool"
    _optional_limit = True

    before_add = HookSlot(ContextPoolHook.BEFORE_ADD)
    after_add = HookSlot(ContextPoolHook.AFTER_ADD)
    before_remove = HookSlot(ContextPoolHook.BEFORE_REMOVE)
    after_remove = HookSlot(ContextPoolHook.AFTER_REMOVE)
    before_clear = HookSlot(ContextPoolHook.BEFORE_CLEAR)
    after_clear = HookSlot(ContextPoolHook.AFTER_CLEAR)
    on_evict = HookSlot(ContextPoolHook.ON_EVICT)

    def __init__(self, limit: int | None = None, tags: Iterable[str] | None = None) -> None:
        super().__init__(limit, tags)
        self._items: dict[str, ContextItem[T]] = {}

    def _values(self) -> Iterable[ContextItem[T]]:
        return self._items.values()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def _check_item(self, item: object) -> ContextItem[T]:
        checked = super()._check_item(item)
        if checked.id is None or checked.description is None:
            missing = "id" if checked.id is None else "description"
            raise ValueError(
                f"ContextPool.add() needs an item with an id and a description; this one "
                f"has no {missing}: ContextItem(id=..., description=..., content=...)"
            )
        return checked

    async def add(self, item: ContextItem[T]) -> None:
        """Store ``item`` under its id: replace in place, or evict the oldest if full."""
        item = self._check_item(item)
        item_id = item.id
        assert item_id is not None  # _check_item guarantees it
        for evicted in self._make_room(item_id):
            await self._fire(ContextPoolHook.ON_EVICT, self, evicted)
        await self._fire(ContextPoolHook.BEFORE_ADD, self, item)
        # Concurrent adds may have filled the pool while BEFORE_ADD ran: make room
        # again in the same synchronous step as the insertion.
        late = self._make_room(item_id)
        self._items[item_id] = item
        for evicted in late:
            await self._fire(ContextPoolHook.ON_EVICT, self, evicted)
        await self._fire(ContextPoolHook.AFTER_ADD, self, item)

    def _make_room(self, item_id: str) -> list[ContextItem[T]]:
        """Evict the oldest items so that ``item_id`` fits; a replacement needs no room."""
        evicted: list[ContextItem[T]] = []
        if self._limit is None or item_id in self._items:
            return evicted
        while len(self._items) >= self._limit:
            evicted.append(self._items.pop(next(iter(self._items))))
        return evicted

    def get(self, item_id: str) -> ContextItem[T]:
        """The item stored under ``item_id``; ``KeyError`` if there is none."""
        try:
            return self._items[item_id]
        except KeyError:
            raise KeyError(
                f"no item with id {brief(item_id, 50)} in the pool (ids: "
                f"{brief(list(islice(self._items, 10)), 100) if self._items else 'none'}); "
                "check catalogue() first"
            ) from None

    async def remove(self, item_id: str) -> None:
        """Remove the item stored under ``item_id``; ``KeyError`` if there is none."""
        item = self.get(item_id)
        await self._fire(ContextPoolHook.BEFORE_REMOVE, self, item)
        self._items.pop(item_id, None)
        await self._fire(ContextPoolHook.AFTER_REMOVE, self, item)

    async def clear(self) -> None:
        """Remove every item."""
        await self._fire(ContextPoolHook.BEFORE_CLEAR, self, dict(self._items))
        self._items.clear()
        await self._fire(ContextPoolHook.AFTER_CLEAR, self)

    def catalogue(self) -> str:
        """One ``- [id] description`` line per item, for selection by a model."""
        return "\n".join(f"- [{i.id}] {i.description}" for i in self._items.values())

    def _restore(self, items: list[ContextItem[T]]) -> None:
        for item in items:
            assert item.id is not None
            if item.id in self._items:
                raise ValueError(f"two items have the id {brief(item.id, 50)}; ids are unique")
            self._items[item.id] = item
