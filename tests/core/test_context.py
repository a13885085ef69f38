"""The agent's memory: ContextItem, ContextQueue and ContextPool.

Contract: SPEC §1.5 (seed 004, including its error tables) and the ContextQueueHook /
ContextPoolHook rows of §1.6.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import pygents
from pygents import (
    ContextPoolHook,
    ContextQueueHook,
    Hook,
    HookRegistry,
    UnregisteredHookError,
    hook,
)
from pygents.context import ContextItem, ContextPool, ContextQueue
from pygents.testing import isolated_registries

Log = list[tuple[str, tuple[Any, ...]]]
Store = ContextQueue[Any] | ContextPool[Any]

QUEUE_SLOTS = ("before_append", "after_append", "before_clear", "after_clear", "on_evict")
POOL_SLOTS = (
    "before_add",
    "after_add",
    "before_remove",
    "after_remove",
    "before_clear",
    "after_clear",
    "on_evict",
)


# -------------------- helpers


def msg(content: Any) -> ContextItem[Any]:
    """A queue item (no id)."""
    return ContextItem(content=content)


def doc(item_id: str, content: Any = None, description: str | None = None) -> ContextItem[Any]:
    """A pool item: id, description and content all set."""
    return ContextItem(
        content=item_id if content is None else content,
        description=description or f"about {item_id}",
        id=item_id,
    )


def recording(log: Log, name: str, *, yield_first: bool = False) -> Callable[..., Awaitable[None]]:
    """An async hook function named ``name`` that appends ``(name, args)`` to ``log``.

    Hooks register under their function name, so every recorder gets its own name.
    With ``yield_first`` it gives the event loop a turn before recording.
    """

    async def record(*args: Any) -> None:
        if yield_first:
            await asyncio.sleep(0)
        log.append((name, args))

    record.__name__ = record.__qualname__ = name
    return record


def attach_all(store: Store, slots: tuple[str, ...], log: Log, prefix: str = "") -> None:
    """Attach a recorder to every instance hook slot of ``store``."""
    for slot in slots:
        getattr(store, slot)(recording(log, prefix + slot))


async def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    result = fn(*args)
    return await result if asyncio.iscoroutine(result) else result


def names(log: Log) -> list[str]:
    return [name for name, _ in log]


def contents(store: Store) -> list[Any]:
    return [item.content for item in store.items]


def ids(pool: ContextPool[Any]) -> list[str | None]:
    return [item.id for item in pool.items]


async def filled_queue(limit: int, *values: Any) -> ContextQueue[Any]:
    queue: ContextQueue[Any] = ContextQueue(limit=limit)
    await queue.append(*(msg(v) for v in values))
    return queue


async def filled_pool(limit: int | None, *item_ids: str) -> ContextPool[Any]:
    pool: ContextPool[Any] = ContextPool(limit=limit)
    for item_id in item_ids:
        await pool.add(doc(item_id))
    return pool


# -------------------- public names


def test_context_types_are_public_from_both_modules() -> None:
    assert pygents.ContextItem is ContextItem
    assert pygents.ContextQueue is ContextQueue
    assert pygents.ContextPool is ContextPool
    assert {"ContextItem", "ContextQueue", "ContextPool"} <= set(pygents.context.__all__)


# -------------------- ContextItem


def test_item_needs_only_content_and_defaults_the_rest_to_none() -> None:
    item = ContextItem(content={"text": "hello"})
    assert (item.content, item.description, item.id) == ({"text": "hello"}, None, None)
    with pytest.raises(TypeError):
        ContextItem()  # type: ignore[call-arg]


@pytest.mark.parametrize("field", ["content", "description", "id"])
def test_item_is_frozen(field: str) -> None:
    item = ContextItem(content="c", description="d", id="i")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(item, field, "changed")
    assert (item.content, item.description, item.id) == ("c", "d", "i")


def test_items_with_the_same_fields_are_equal_and_hash_alike() -> None:
    a = ContextItem(content="c", description="d", id="i")
    b = ContextItem(content="c", description="d", id="i")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


@pytest.mark.parametrize(
    "other",
    [
        ContextItem(content="other", description="d", id="i"),
        ContextItem(content="c", description="other", id="i"),
        ContextItem(content="c", description="d", id="other"),
        ContextItem(content="c"),
    ],
)
def test_items_differing_in_any_field_are_not_equal(other: ContextItem[str]) -> None:
    assert ContextItem(content="c", description="d", id="i") != other


async def test_generic_annotations_work_as_documented() -> None:
    queue: ContextQueue[str] = ContextQueue(limit=3)
    await queue.append(ContextItem(content="hello"))
    assert contents(queue) == ["hello"]

    pool: ContextPool[int] = ContextPool(limit=2)
    await pool.add(ContextItem(content=1, description="one", id="n1"))
    assert pool.get("n1").content == 1


async def test_parameterised_classes_can_be_instantiated() -> None:
    queue = ContextQueue[str](limit=3)
    pool = ContextPool[int]()
    assert (type(queue), queue.limit) == (ContextQueue, 3)
    assert (type(pool), pool.limit) == (ContextPool, None)

    item = ContextItem[str](content="hello")
    assert item == ContextItem(content="hello")
    await queue.append(item)
    assert queue.items == [item]


@pytest.mark.parametrize(
    "item",
    [
        ContextItem(content="plain"),
        ContextItem(content={"text": "...", "n": [1, 2.5, None, True]}, description="d", id="i"),
        ContextItem(content=None, description="empty", id="e"),
        ContextItem(content=[{"nested": {"deep": "yes"}}]),
    ],
)
def test_item_to_dict_is_json_ready_and_round_trips(item: ContextItem[Any]) -> None:
    data = item.to_dict()
    assert data == {"content": item.content, "description": item.description, "id": item.id}
    assert ContextItem.from_dict(json.loads(json.dumps(data))) == item


@pytest.mark.parametrize("content", [object(), {1, 2}, float("nan"), {1: "int key"}])
def test_item_to_dict_refuses_content_json_cannot_represent(content: object) -> None:
    with pytest.raises(TypeError):
        ContextItem(content=content).to_dict()


@pytest.mark.parametrize(
    "data",
    [
        "not a dict",
        None,
        {"description": "no content", "id": "x"},
        {"content": "c", "description": 3, "id": None},
        {"content": "c", "description": None, "id": ["not", "a", "string"]},
    ],
)
def test_item_from_dict_rejects_malformed_data(data: Any) -> None:
    with pytest.raises(ValueError):
        ContextItem.from_dict(data)


# -------------------- ContextQueue: construction


async def test_queue_default_limit_is_ten() -> None:
    queue: ContextQueue[Any] = ContextQueue()
    assert queue.limit == 10
    await queue.append(*(msg(i) for i in range(11)))
    assert contents(queue) == list(range(1, 11))


@pytest.mark.parametrize("limit", [0, -1, -100])
def test_queue_limit_below_one_is_a_value_error(limit: int) -> None:
    with pytest.raises(ValueError):
        ContextQueue(limit=limit)


@pytest.mark.parametrize("limit", ["10", 2.5, None, True, False])
def test_queue_limit_that_is_not_an_int_is_a_type_error(limit: Any) -> None:
    with pytest.raises(TypeError):
        ContextQueue(limit=limit)


def test_queue_limit_of_one_is_allowed() -> None:
    assert ContextQueue(limit=1).limit == 1


# -------------------- ContextQueue: append


async def test_append_is_variadic_and_keeps_order() -> None:
    queue: ContextQueue[str] = ContextQueue(limit=5)
    await queue.append(msg("a"))
    await queue.append(msg("b"), msg("c"))
    assert queue.items == [msg("a"), msg("b"), msg("c")]


@pytest.mark.parametrize("bad", ["raw string", {"content": "x"}, None, 42])
@pytest.mark.parametrize("position", [0, 1, 2])
async def test_append_refuses_non_items_atomically(bad: Any, position: int) -> None:
    queue: ContextQueue[Any] = ContextQueue(limit=2)
    await queue.append(msg("kept"))
    log: Log = []
    attach_all(queue, QUEUE_SLOTS, log)
    batch: list[Any] = [msg("x"), msg("y")]
    batch.insert(position, bad)

    with pytest.raises(TypeError):
        await queue.append(*batch)

    assert queue.items == [msg("kept")]
    assert log == []


async def test_full_queue_evicts_the_oldest_and_fires_on_evict_per_item() -> None:
    queue = await filled_queue(3, "a", "b", "c")
    log: Log = []
    queue.on_evict(recording(log, "on_evict"))

    await queue.append(msg("d"), msg("e"))

    assert contents(queue) == ["c", "d", "e"]
    assert log == [("on_evict", (queue, msg("a"))), ("on_evict", (queue, msg("b")))]


async def test_appending_more_than_the_limit_at_once_keeps_only_the_newest() -> None:
    queue = await filled_queue(2, "a")
    log: Log = []
    queue.on_evict(recording(log, "on_evict"))

    await queue.append(msg("b"), msg("c"), msg("d"))

    assert contents(queue) == ["c", "d"]
    assert [args[1].content for _, args in log] == ["a", "b"]


async def test_append_that_evicts_fires_every_event_in_order_with_exact_args() -> None:
    queue = await filled_queue(2, "a", "b")
    log: Log = []
    attach_all(queue, QUEUE_SLOTS, log)

    await queue.append(msg("c"), msg("d"))

    assert names(log) == ["before_append", "on_evict", "on_evict", "after_append"]
    (_, before), (_, evict_a), (_, evict_b), (_, after) = log
    assert before[0] is queue
    assert list(before[1]) == [msg("c"), msg("d")]
    assert list(before[2]) == [msg("a"), msg("b")]
    assert evict_a == (queue, msg("a"))
    assert evict_b == (queue, msg("b"))
    assert list(after[0]) == [msg("c"), msg("d")]
    assert list(after[1]) == [msg("c"), msg("d")]
    assert len(before) == len(after) + 1 == 3


async def test_append_hooks_see_the_queue_before_and_after_the_append() -> None:
    queue = await filled_queue(5, "a")
    seen: list[tuple[str, int, int]] = []

    @queue.before_append
    async def count_before(q: Any, incoming: Any, current: Any) -> None:
        seen.append(("before", len(q), len(current)))

    @queue.after_append
    async def count_after(appended: Any, current: Any) -> None:
        seen.append(("after", len(queue), len(current)))

    await queue.append(msg("b"), msg("c"))
    assert seen == [("before", 1, 1), ("after", 3, 3)]


# -------------------- ContextQueue: reading and clearing


async def test_queue_items_is_a_copy() -> None:
    queue = await filled_queue(5, "a", "b")
    snapshot = queue.items
    snapshot.append(msg("intruder"))
    snapshot.clear()
    assert contents(queue) == ["a", "b"]
    assert queue.items is not queue.items


async def test_queue_len_iter_and_bool() -> None:
    queue: ContextQueue[str] = ContextQueue(limit=3)
    assert (len(queue), list(queue), bool(queue)) == (0, [], False)
    await queue.append(msg("a"), msg("b"))
    assert (len(queue), list(queue), bool(queue)) == (2, [msg("a"), msg("b")], True)


async def test_queue_clear_empties_it_and_fires_clear_hooks() -> None:
    queue = await filled_queue(5, "a", "b")
    log: Log = []
    attach_all(queue, QUEUE_SLOTS, log)
    sizes: list[int] = []

    @queue.before_clear
    async def size_before_clear(q: Any, items: Any) -> None:
        sizes.append(len(q))

    @queue.after_clear
    async def size_after_clear(q: Any) -> None:
        sizes.append(len(q))

    await queue.clear()

    assert (len(queue), bool(queue), queue.items) == (0, False, [])
    assert names(log) == ["before_clear", "after_clear"]
    assert log[0][1][0] is queue
    assert list(log[0][1][1]) == [msg("a"), msg("b")]
    assert log[1][1] == (queue,)
    assert sizes == [2, 0]


async def test_queue_is_usable_after_clear() -> None:
    queue = await filled_queue(2, "a", "b")
    await queue.clear()
    await queue.append(msg("c"))
    assert contents(queue) == ["c"]


# -------------------- ContextQueue: hooks


async def test_queue_hook_list_accepts_a_global_hook_and_fires_it_once() -> None:
    calls: list[tuple[Any, Any]] = []

    @hook(ContextQueueHook.AFTER_APPEND, tags=["somewhere-else"])
    async def listed_after_append(appended: Any, current: Any) -> None:
        calls.append((list(appended), list(current)))

    queue: ContextQueue[str] = ContextQueue(limit=3)
    other: ContextQueue[str] = ContextQueue(limit=3)
    queue.hooks.append(listed_after_append)

    await queue.append(msg("a"))
    await other.append(msg("z"))

    # an instance hook ignores its tags; it fires once although it is also global
    assert calls == [([msg("a")], [msg("a")])]


async def test_instance_hooks_run_before_global_hooks() -> None:
    order: list[str] = []

    @hook(ContextQueueHook.BEFORE_APPEND)
    async def global_first_declared(queue: Any, incoming: Any, current: Any) -> None:
        order.append("global")

    queue: ContextQueue[str] = ContextQueue(limit=3)

    @queue.before_append
    async def instance_declared_later(queue: Any, incoming: Any, current: Any) -> None:
        order.append("instance")

    await queue.append(msg("a"))
    assert order == ["instance", "global"]


async def test_untagged_global_queue_hook_fires_for_every_queue() -> None:
    seen: list[Any] = []

    @hook(ContextQueueHook.ON_EVICT)
    async def any_queue_evicts(queue: Any, item: ContextItem[Any]) -> None:
        seen.append((queue, item.content))

    first = await filled_queue(1, "a")
    second = await filled_queue(1, "x", "y")
    await first.append(msg("b"))

    assert seen == [(second, "x"), (first, "a")]


async def test_tagged_global_queue_hook_fires_only_for_queues_sharing_a_tag() -> None:
    seen: list[frozenset[str]] = []

    @hook(ContextQueueHook.BEFORE_APPEND, tags=["monitored"])
    async def monitored_only(queue: Any, incoming: Any, current: Any) -> None:
        seen.append(queue.tags)

    for tags in (["session", "monitored"], ["session"], None):
        await ContextQueue(limit=2, tags=tags).append(msg("x"))

    assert seen == [frozenset({"session", "monitored"})]


@pytest.mark.parametrize("tags", [["a", "b"], ("a", "b", "a"), {"a", "b"}, frozenset({"a", "b"})])
def test_queue_tags_are_stored_as_a_frozenset(tags: Any) -> None:
    assert ContextQueue(limit=1, tags=tags).tags == frozenset({"a", "b"})


def test_queue_without_tags_has_an_empty_frozenset() -> None:
    assert ContextQueue(limit=1).tags == frozenset()


@pytest.mark.parametrize("tags", ["session", ["ok", 3]])
def test_queue_refuses_tags_that_are_not_strings(tags: Any) -> None:
    with pytest.raises(TypeError):
        ContextQueue(limit=1, tags=tags)


async def test_queue_hooks_annotated_with_context_types_still_get_the_event_arguments() -> None:
    queue: ContextQueue[str] = ContextQueue(limit=1)
    seen: list[Any] = []

    @queue.before_append
    async def typed_before_append(
        q: ContextQueue[str], incoming: list[ContextItem[str]], current: list[ContextItem[str]]
    ) -> None:
        seen.append((q, list(incoming), list(current)))

    await queue.append(msg("a"))
    assert seen == [(queue, [msg("a")], [])]


# -------------------- ContextQueue: branch


async def test_queue_branch_is_an_independent_copy() -> None:
    parent = await filled_queue(20, "system", "user")
    child = parent.branch()
    assert child is not parent
    assert child.limit == 20
    assert child.items == parent.items

    await child.append(msg("tool result"))
    await parent.append(msg("parent only"))

    assert contents(parent) == ["system", "user", "parent only"]
    assert contents(child) == ["system", "user", "tool result"]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [(2, ["d", "e"]), (1, ["e"]), (5, ["a", "b", "c", "d", "e"]), (50, ["a", "b", "c", "d", "e"])],
)
async def test_queue_branch_with_a_limit_keeps_the_most_recent(
    limit: int, expected: list[str]
) -> None:
    parent = await filled_queue(10, "a", "b", "c", "d", "e")
    child = parent.branch(limit=limit)
    assert child.limit == limit
    assert contents(child) == expected
    assert contents(parent) == ["a", "b", "c", "d", "e"]


async def test_queue_branch_with_a_limit_below_one_is_a_value_error() -> None:
    parent = await filled_queue(3, "a")
    with pytest.raises(ValueError):
        parent.branch(limit=0)


async def test_queue_branch_inherits_hooks_by_default() -> None:
    parent: ContextQueue[str] = ContextQueue(limit=5)
    log: Log = []
    parent.after_append(recording(log, "parent_after_append"))

    child = parent.branch()
    await child.append(msg("from child"))

    assert log == [("parent_after_append", ([msg("from child")], [msg("from child")]))]
    assert child.hooks == parent.hooks


async def test_queue_branch_hook_list_is_its_own() -> None:
    parent: ContextQueue[str] = ContextQueue(limit=5)
    log: Log = []
    child = parent.branch()
    child.after_append(recording(log, "child_only_after_append"))

    await parent.append(msg("p"))
    await child.append(msg("c"))

    assert parent.hooks == []
    assert names(log) == ["child_only_after_append"]


async def test_queue_branch_with_empty_hooks_drops_them() -> None:
    parent: ContextQueue[str] = ContextQueue(limit=5)
    log: Log = []
    parent.before_append(recording(log, "parent_before_append"))

    child = parent.branch(hooks=[])
    await child.append(msg("quiet"))
    assert log == []
    assert child.hooks == []

    await parent.append(msg("loud"))
    assert names(log) == ["parent_before_append"]


async def test_queue_branch_with_other_hooks_replaces_them() -> None:
    parent: ContextQueue[str] = ContextQueue(limit=5)
    log: Log = []
    parent.before_append(recording(log, "parent_hook"))

    @hook(ContextQueueHook.BEFORE_APPEND, tags=["unrelated"])
    async def other_hook(queue: Any, incoming: Any, current: Any) -> None:
        log.append(("other_hook", (queue,)))

    child = parent.branch(hooks=[other_hook])
    await child.append(msg("x"))

    assert log == [("other_hook", (child,))]
    assert child.hooks == [other_hook]


async def test_queue_branch_copies_tags() -> None:
    parent: ContextQueue[str] = ContextQueue(limit=3, tags=["session", "monitored"])
    assert parent.branch().tags == frozenset({"session", "monitored"})
    assert parent.branch(limit=1, hooks=[]).tags == frozenset({"session", "monitored"})


# -------------------- ContextQueue: serialization


async def test_queue_to_dict_shape_is_json_ready() -> None:
    queue: ContextQueue[Any] = ContextQueue(limit=4, tags=["b", "a"])
    await queue.append(msg("text"), ContextItem(content={"k": [1, 2]}, description="d", id="i"))

    @queue.on_evict
    async def serialized_on_evict(queue: Any, item: Any) -> None:
        return None

    data = queue.to_dict()

    assert set(data) == {"limit", "items", "hooks", "tags"}
    assert data["limit"] == 4
    assert data["items"] == [item.to_dict() for item in queue.items]
    assert set(data["tags"]) == {"a", "b"}
    assert "serialized_on_evict" in json.dumps(data["hooks"])
    json.dumps(data)


async def test_queue_round_trips_through_json_with_hooks_by_name() -> None:
    queue: ContextQueue[Any] = ContextQueue(limit=3, tags=["session"])
    log: Log = []
    attach_all(queue, QUEUE_SLOTS, log)
    await queue.append(msg("a"), ContextItem(content=[1, 2], description="pair", id="p"))
    log.clear()

    restored = ContextQueue.from_dict(json.loads(json.dumps(queue.to_dict())))

    assert restored is not queue
    assert restored.limit == 3
    assert restored.tags == frozenset({"session"})
    assert restored.items == queue.items
    assert restored.hooks == queue.hooks
    assert all(h is HookRegistry.get(h.metadata.name) for h in restored.hooks)
    assert log == []  # restoring fires nothing

    await restored.append(msg("b"), msg("c"))
    assert names(log) == ["before_append", "on_evict", "after_append"]
    assert log[1][1] == (restored, msg("a"))


@pytest.mark.parametrize(
    "data",
    [
        pytest.param("not a dict", id="string"),
        pytest.param(None, id="none"),
        pytest.param([("limit", 2)], id="list"),
        pytest.param({"items": [], "hooks": [], "tags": []}, id="missing-limit"),
        pytest.param({"limit": 0, "items": []}, id="limit-zero"),
        pytest.param({"limit": "2", "items": []}, id="limit-string"),
        pytest.param({"limit": 2, "items": "abc"}, id="items-not-a-list"),
        pytest.param({"limit": 2, "items": ["raw"]}, id="item-not-a-dict"),
        pytest.param({"limit": 2, "items": [{"id": None}]}, id="item-without-content"),
        pytest.param(
            {"limit": 2, "items": [{"content": "c", "description": 5, "id": None}]},
            id="item-bad-description",
        ),
        pytest.param(
            {"limit": 2, "items": [{"content": i, "description": None, "id": None} for i in "abc"]},
            id="more-items-than-limit",
        ),
        pytest.param({"limit": 2, "items": [], "tags": "session"}, id="tags-a-string"),
    ],
)
def test_queue_from_dict_rejects_malformed_data(data: Any) -> None:
    with pytest.raises(ValueError):
        ContextQueue.from_dict(data)


@pytest.mark.parametrize("content", [object(), {"when": {1, 2}}, float("inf")])
async def test_queue_to_dict_refuses_content_json_cannot_represent(content: object) -> None:
    queue: ContextQueue[Any] = ContextQueue(limit=2)
    await queue.append(msg("fine"), msg(content))
    with pytest.raises(TypeError):
        queue.to_dict()


# -------------------- ContextPool: construction and add


async def test_pool_is_unbounded_by_default() -> None:
    pool: ContextPool[Any] = ContextPool()
    assert pool.limit is None
    log: Log = []
    pool.on_evict(recording(log, "pool_on_evict"))
    for i in range(150):
        await pool.add(doc(f"d{i}"))
    assert len(pool) == 150
    assert log == []


@pytest.mark.parametrize("limit", [0, -1])
def test_pool_limit_below_one_is_a_value_error(limit: int) -> None:
    with pytest.raises(ValueError):
        ContextPool(limit=limit)


@pytest.mark.parametrize("limit", ["10", 1.5])
def test_pool_limit_that_is_not_an_int_is_refused(limit: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        ContextPool(limit=limit)


@pytest.mark.parametrize(
    ("item", "missing"),
    [
        (ContextItem(content=1, description="has no id"), "id"),
        (ContextItem(content=1, id="no-description"), "description"),
    ],
)
async def test_pool_add_requires_id_and_description(item: ContextItem[int], missing: str) -> None:
    pool: ContextPool[int] = ContextPool()
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)

    with pytest.raises(ValueError, match=missing) as info:
        await pool.add(item)

    assert len(pool) == 0
    assert log == []
    assert missing in str(info.value)


async def test_pool_add_errors_say_which_field_is_missing() -> None:
    pool: ContextPool[int] = ContextPool()
    messages = []
    for item in (ContextItem(content=1, description="d"), ContextItem(content=1, id="i")):
        with pytest.raises(ValueError) as info:
            await pool.add(item)
        messages.append(str(info.value))
    assert messages[0] != messages[1]


async def test_pool_add_without_id_or_description_is_a_value_error() -> None:
    pool: ContextPool[int] = ContextPool()
    with pytest.raises(ValueError):
        await pool.add(ContextItem(content=1))
    assert not pool


@pytest.mark.parametrize("bad", [{"id": "a", "description": "d", "content": 1}, "a", None])
async def test_pool_add_refuses_non_items(bad: Any) -> None:
    pool: ContextPool[Any] = ContextPool()
    with pytest.raises(TypeError):
        await pool.add(bad)
    assert len(pool) == 0


async def test_pool_get_and_membership() -> None:
    pool = await filled_pool(None, "a", "b")
    assert pool.get("a") == doc("a")
    assert "a" in pool
    assert "missing" not in pool


@pytest.mark.parametrize("operation", ["get", "remove"])
async def test_pool_get_or_remove_of_an_unknown_id_is_a_key_error(operation: str) -> None:
    pool = await filled_pool(None, "a")
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)

    with pytest.raises(KeyError, match="nope"):
        await call_maybe_async(getattr(pool, operation), "nope")

    assert ids(pool) == ["a"]
    assert log == []


async def test_pool_add_with_an_existing_id_replaces_in_place() -> None:
    pool = await filled_pool(3, "a", "b", "c")
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)
    replacement = doc("b", content="new b", description="Updated b")

    await pool.add(replacement)

    assert ids(pool) == ["a", "b", "c"]
    assert pool.get("b") is replacement
    assert len(pool) == 3
    assert log == [("before_add", (pool, replacement)), ("after_add", (pool, replacement))]
    assert pool.catalogue().splitlines()[1] == "- [b] Updated b"


async def test_pool_add_hooks_see_the_pool_before_and_after_insertion() -> None:
    pool: ContextPool[Any] = ContextPool()
    seen: list[tuple[str, bool, int]] = []

    @pool.before_add
    async def state_before_add(p: Any, item: ContextItem[Any]) -> None:
        seen.append(("before", item.id in p, len(p)))

    @pool.after_add
    async def state_after_add(p: Any, item: ContextItem[Any]) -> None:
        seen.append(("after", p.get(item.id) is item, len(p)))

    await pool.add(doc("a"))
    assert seen == [("before", False, 0), ("after", True, 1)]


async def test_full_pool_evicts_the_oldest_before_before_add() -> None:
    pool = await filled_pool(2, "a", "b")
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)
    sizes: list[int] = []

    @pool.before_add
    async def size_at_before_add(p: Any, item: Any) -> None:
        sizes.append(len(p))

    new = doc("c")
    await pool.add(new)

    assert ids(pool) == ["b", "c"]
    assert log == [
        ("on_evict", (pool, doc("a"))),
        ("before_add", (pool, new)),
        ("after_add", (pool, new)),
    ]
    assert sizes == [1]  # the room was made before BEFORE_ADD ran


async def test_pool_eviction_follows_insertion_order_not_replacement() -> None:
    pool = await filled_pool(2, "a", "b")
    await pool.add(doc("a", content="refreshed a"))  # keeps its first position

    evicted: Log = []
    pool.on_evict(recording(evicted, "pool_evicts"))
    await pool.add(doc("c"))

    assert ids(pool) == ["b", "c"]
    assert evicted == [("pool_evicts", (pool, doc("a", content="refreshed a")))]


# -------------------- ContextPool: reading


async def test_pool_catalogue_lists_id_and_description_one_line_per_item() -> None:
    pool: ContextPool[int] = ContextPool()
    assert pool.catalogue().splitlines() == []
    await pool.add(ContextItem(id="a", description="First", content=1))
    await pool.add(ContextItem(id="doc-2", description="Q3 earnings — revenue", content=2))
    assert pool.catalogue().splitlines() == ["- [a] First", "- [doc-2] Q3 earnings — revenue"]
    assert pool.catalogue().rstrip("\n") == "- [a] First\n- [doc-2] Q3 earnings — revenue"


async def test_pool_items_is_a_copy() -> None:
    pool = await filled_pool(None, "a", "b")
    snapshot = pool.items
    snapshot.clear()
    assert ids(pool) == ["a", "b"]


async def test_pool_len_iter_bool_and_limit() -> None:
    pool: ContextPool[Any] = ContextPool(limit=5)
    assert (len(pool), list(pool), bool(pool), pool.limit) == (0, [], False, 5)
    await pool.add(doc("a"))
    await pool.add(doc("b"))
    assert (len(pool), list(pool), bool(pool)) == (2, [doc("a"), doc("b")], True)


# -------------------- ContextPool: remove and clear


async def test_pool_remove_fires_before_and_after_remove() -> None:
    pool = await filled_pool(None, "a", "b")
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)
    presence: list[bool] = []

    @pool.before_remove
    async def present_before_remove(p: Any, item: Any) -> None:
        presence.append(item.id in p)

    @pool.after_remove
    async def present_after_remove(p: Any, item: Any) -> None:
        presence.append(item.id in p)

    await pool.remove("a")

    assert ids(pool) == ["b"]
    assert log == [("before_remove", (pool, doc("a"))), ("after_remove", (pool, doc("a")))]
    assert presence == [True, False]
    with pytest.raises(KeyError):
        pool.get("a")


async def test_pool_clear_fires_with_a_snapshot_dict() -> None:
    pool = await filled_pool(None, "a", "b")
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)

    await pool.clear()

    assert (len(pool), bool(pool), pool.items) == (0, False, [])
    assert names(log) == ["before_clear", "after_clear"]
    cleared_pool, snapshot = log[0][1]
    assert cleared_pool is pool
    assert isinstance(snapshot, dict)
    assert snapshot == {"a": doc("a"), "b": doc("b")}  # still full: a copy, not the store
    assert log[1][1] == (pool,)


# -------------------- ContextPool: branch


async def test_pool_branch_copies_items_without_firing_hooks() -> None:
    parent = await filled_pool(20, "x", "y")
    log: Log = []
    attach_all(parent, POOL_SLOTS, log)
    hook(list(ContextPoolHook))(recording(log, "global_pool_watcher"))

    child = parent.branch()
    smaller = parent.branch(limit=1)

    assert log == []
    assert child.items == parent.items
    assert child.limit == 20
    assert ids(smaller) == ["y"]
    assert smaller.limit == 1


@pytest.mark.parametrize(
    ("limit", "expected"),
    [(2, ["c", "d"]), (1, ["d"]), (4, ["a", "b", "c", "d"]), (9, ["a", "b", "c", "d"])],
)
async def test_pool_branch_with_a_limit_keeps_the_newest(limit: int, expected: list[str]) -> None:
    parent = await filled_pool(None, "a", "b", "c", "d")
    child = parent.branch(limit=limit)
    assert ids(child) == expected
    assert child.limit == limit
    assert ids(parent) == ["a", "b", "c", "d"]


async def test_pool_branch_is_independent() -> None:
    parent = await filled_pool(None, "x")
    child = parent.branch()

    await child.add(doc("child-only"))
    await child.add(doc("x", content="child x"))
    await parent.remove("x")
    await parent.add(doc("parent-only"))

    assert ids(parent) == ["parent-only"]
    assert ids(child) == ["x", "child-only"]
    assert child.get("x").content == "child x"


async def test_pool_branch_inherits_hooks_and_tags() -> None:
    parent: ContextPool[Any] = ContextPool(tags=["documents"])
    log: Log = []
    parent.after_add(recording(log, "inherited_after_add"))

    child = parent.branch()
    await child.add(doc("a"))

    assert log == [("inherited_after_add", (child, doc("a")))]
    assert child.tags == frozenset({"documents"})
    assert parent.branch(limit=3).tags == frozenset({"documents"})


async def test_branched_pool_enforces_its_own_limit() -> None:
    parent = await filled_pool(None, "a", "b", "c")
    child = parent.branch(limit=2)
    log: Log = []
    child.on_evict(recording(log, "child_pool_evicts"))

    await child.add(doc("d"))

    assert ids(child) == ["c", "d"]
    assert log == [("child_pool_evicts", (child, doc("b")))]


# -------------------- ContextPool: tags


@pytest.mark.parametrize("tags", [["documents"], frozenset({"documents"})])
def test_pool_tags_are_stored_as_a_frozenset(tags: Any) -> None:
    assert ContextPool(tags=tags).tags == frozenset({"documents"})
    assert ContextPool().tags == frozenset()


def test_pool_refuses_a_string_as_tags() -> None:
    with pytest.raises(TypeError):
        ContextPool(tags="documents")


async def test_tagged_global_pool_hook_fires_only_for_pools_sharing_a_tag() -> None:
    seen: list[str | None] = []

    @hook(ContextPoolHook.AFTER_ADD, tags=["documents"])
    async def documents_only(pool: Any, item: ContextItem[Any]) -> None:
        seen.append(item.id)

    await ContextPool(tags=["documents", "x"]).add(doc("tagged"))
    await ContextPool(tags=["other"]).add(doc("other"))
    await ContextPool().add(doc("untagged"))

    assert seen == ["tagged"]


async def test_pool_hooks_annotated_with_context_types_still_get_the_event_arguments() -> None:
    pool: ContextPool[int] = ContextPool()
    seen: list[Any] = []

    @pool.after_add
    async def typed_after_add(p: ContextPool[int], item: ContextItem[int]) -> None:
        seen.append((p, item))

    await pool.add(doc("a", content=1))
    assert seen == [(pool, doc("a", content=1))]


# -------------------- ContextPool: serialization


async def test_pool_round_trips_through_json() -> None:
    pool: ContextPool[Any] = ContextPool(limit=3, tags=["documents"])
    log: Log = []
    attach_all(pool, POOL_SLOTS, log)
    for item in (doc("a", content={"n": 1}), doc("b", content=[1, "two"]), doc("c")):
        await pool.add(item)
    log.clear()

    data = pool.to_dict()
    assert set(data) == {"limit", "items", "hooks", "tags"}
    assert data["limit"] == 3
    restored = ContextPool.from_dict(json.loads(json.dumps(data)))

    assert log == []
    assert restored.limit == 3
    assert restored.tags == frozenset({"documents"})
    assert restored.items == pool.items
    assert restored.catalogue() == pool.catalogue()
    assert restored.hooks == pool.hooks

    await restored.add(doc("d"))
    assert names(log) == ["on_evict", "before_add", "after_add"]
    assert ids(restored) == ["b", "c", "d"]


async def test_unbounded_pool_round_trips_its_limit() -> None:
    pool = await filled_pool(None, "a")
    data = pool.to_dict()
    assert data["limit"] is None
    assert ContextPool.from_dict(json.loads(json.dumps(data))).limit is None


def _pool_data(*items: dict[str, Any], limit: int | None = None) -> dict[str, Any]:
    return {"limit": limit, "items": list(items), "hooks": [], "tags": []}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param("not a dict", id="string"),
        pytest.param({"items": [], "hooks": [], "tags": []}, id="missing-limit"),
        pytest.param(_pool_data(doc("a").to_dict(), doc("a").to_dict()), id="duplicate-ids"),
        pytest.param(
            _pool_data(doc("a").to_dict(), doc("b").to_dict(), limit=1), id="more-than-limit"
        ),
        pytest.param(_pool_data({"content": 1, "description": "d", "id": None}), id="no-id"),
        pytest.param(_pool_data({"content": 1, "description": None, "id": "x"}), id="no-desc"),
        pytest.param(_pool_data("raw"), id="item-not-a-dict"),
        pytest.param({"limit": 0, "items": []}, id="limit-zero"),
        pytest.param({"limit": None, "items": {}}, id="items-not-a-list"),
    ],
)
def test_pool_from_dict_rejects_malformed_data(data: Any) -> None:
    with pytest.raises(ValueError):
        ContextPool.from_dict(data)


async def test_pool_to_dict_refuses_content_json_cannot_represent() -> None:
    pool: ContextPool[Any] = ContextPool()
    await pool.add(doc("bad", content=object()))
    with pytest.raises(TypeError):
        pool.to_dict()


# -------------------- ContextQueue and ContextPool: restoring, alike


@pytest.mark.parametrize(
    ("store", "events", "item"),
    [(ContextQueue, ContextQueueHook, msg), (ContextPool, ContextPoolHook, doc)],
    ids=["queue", "pool"],
)
async def test_from_dict_restores_the_items_and_fires_no_hooks(
    store: type[Store], events: type[ContextQueueHook | ContextPoolHook], item: Any
) -> None:
    """Not even an eviction, nor a global hook watching every event of the store."""
    log: Log = []
    hook(list(events))(recording(log, f"global_{store.__name__}_watcher"))
    data = {
        "limit": 2,
        "items": [item("a").to_dict(), item("b").to_dict()],
        "hooks": [],
        "tags": [],
    }
    log.clear()

    restored = store.from_dict(data)

    assert restored.items == [item("a"), item("b")]
    assert contents(restored) == ["a", "b"]
    assert log == []


@pytest.mark.parametrize(
    ("store", "slot"),
    [(ContextQueue, "after_append"), (ContextPool, "before_remove")],
    ids=["queue", "pool"],
)
async def test_from_dict_with_an_unknown_hook_is_an_unregistered_hook_error(
    store: type[Store], slot: str
) -> None:
    with isolated_registries():
        original = store(limit=2)
        forgotten = getattr(original, slot)(recording([], f"forgotten_{slot}"))
        data = original.to_dict()
        assert store.from_dict(data).hooks == [forgotten]

    with pytest.raises(UnregisteredHookError, match=f"forgotten_{slot}"):
        store.from_dict(data)


# -------------------- concurrency


@pytest.mark.parametrize("hooks_yield", [False, True], ids=["plain-hooks", "yielding-hooks"])
async def test_concurrent_appends_respect_the_limit(hooks_yield: bool) -> None:
    queue: ContextQueue[int] = ContextQueue(limit=50)
    evicted: Log = []
    other: Log = []
    queue.on_evict(recording(evicted, "concurrent_on_evict", yield_first=hooks_yield))
    queue.before_append(recording(other, "concurrent_before_append", yield_first=hooks_yield))
    queue.after_append(recording(other, "concurrent_after_append", yield_first=hooks_yield))

    await asyncio.gather(*(queue.append(msg(i)) for i in range(200)))

    assert len(queue) == 50
    assert len(evicted) == 150
    kept = set(contents(queue))
    gone = {args[1].content for _, args in evicted}
    assert kept | gone == set(range(200))
    assert not kept & gone


@pytest.mark.parametrize("hooks_yield", [False, True], ids=["plain-hooks", "yielding-hooks"])
async def test_concurrent_adds_respect_the_pool_limit(hooks_yield: bool) -> None:
    pool: ContextPool[int] = ContextPool(limit=50)
    evicted: Log = []
    other: Log = []
    pool.on_evict(recording(evicted, "pool_concurrent_on_evict", yield_first=hooks_yield))
    pool.before_add(recording(other, "pool_concurrent_before_add", yield_first=hooks_yield))

    await asyncio.gather(*(pool.add(doc(f"d{i}", content=i)) for i in range(200)))

    assert len(pool) == 50
    assert len(evicted) == 150
    kept = set(contents(pool))
    gone = {args[1].content for _, args in evicted}
    assert kept | gone == set(range(200))
    assert not kept & gone


def test_hook_helper_registers_under_its_own_name() -> None:
    """Guards the helper the tests above rely on."""
    queue: ContextQueue[str] = ContextQueue(limit=1)
    attached = queue.after_clear(recording([], "helper_named_hook"))
    assert isinstance(attached, Hook)
    assert HookRegistry.get("helper_named_hook") is attached
