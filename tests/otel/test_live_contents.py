"""Live snapshots list an agent's waiting turns and context items (bounded: the first
fifty turns, the newest fifty items, a count of the rest, text cut), with argument
and content previews only under content capture, and stay whole while the event loop
changes the queue and the stores under the snapshot thread."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from pygents import Agent, ContextItem, ContextPool, ContextQueue, DecoratedTool, Turn, tool
from pygents_otel import PygentsInstrumentor
from pygents_otel import _names as n
from pygents_otel._contents import PREVIEW_LIMIT

Instrument = Callable[..., PygentsInstrumentor]
SECRET = "hunter2-top-secret"


@pytest.fixture
def logs() -> InMemoryLogRecordExporter:
    return InMemoryLogRecordExporter()


@pytest.fixture
def logger_provider(logs: InMemoryLogRecordExporter) -> Iterator[LoggerProvider]:
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    yield provider
    provider.shutdown()


@pytest.fixture
def live(instrument_with: Instrument, logger_provider: LoggerProvider) -> Instrument:
    """Live mode into ``logs``, snapshotting once at the start and then only when the
    test calls ``snapshot`` below: what a snapshot holds, not when it comes, is tested."""

    def instrument(**options: Any) -> PygentsInstrumentor:
        return instrument_with(
            live=True, logger_provider=logger_provider, snapshot_interval=3600, **options
        )

    return instrument


def snapshot(
    instrumentor: PygentsInstrumentor, logs: InMemoryLogRecordExporter, agent: Agent
) -> dict[str, Any]:
    """A snapshot taken now (on this thread), the attributes of ``agent``'s record."""
    live = instrumentor.live
    assert live is not None
    logs.clear()
    live.snapshot()
    found = [
        dict(record.log_record.attributes or {})
        for record in logs.get_finished_logs()
        if record.log_record.event_name == n.SNAPSHOT
    ]
    (mine,) = [a for a in found if a.get(n.AGENT_ID) == agent.uuid]
    return mine


@pytest.fixture
def greet() -> DecoratedTool[..., Any]:
    @tool
    async def greet(name: str, punctuation: str = "!") -> str:
        return f"hello {name}{punctuation}"

    return greet


async def test_a_snapshot_lists_the_first_fifty_waiting_turns_and_counts_the_other_150(
    live: Instrument, logs: InMemoryLogRecordExporter, greet: DecoratedTool[..., Any]
) -> None:
    instrumentor = live()
    agent = Agent("busy", "has a long queue", [greet])
    turns = [Turn(greet, args=[f"caller {i}"], timeout=5 + i) for i in range(200)]
    for turn in turns:
        await agent.put(turn)

    found = snapshot(instrumentor, logs, agent)

    assert found[n.QUEUED_TOOLS] == ("greet",) * 50
    assert found[n.QUEUED_UUIDS] == tuple(turn.uuid for turn in turns[:50]), "next first"
    assert found[n.QUEUED_TIMEOUTS] == tuple(5.0 + i for i in range(50))
    assert found[n.QUEUED_MORE] == 150
    assert found[n.QUEUE_DEPTH] == 200
    assert n.QUEUED_ARGUMENTS not in found, "arguments only with content capture on"


async def test_with_capture_on_each_waiting_turn_has_its_arguments_cut_to_the_preview_limit(
    live: Instrument, logs: InMemoryLogRecordExporter, greet: DecoratedTool[..., Any]
) -> None:
    instrumentor = live(capture_content=True)
    agent = Agent("chatty", "has long arguments", [greet])
    await agent.put(Turn(greet, args=["ada"], kwargs={"punctuation": "?"}))
    await agent.put(Turn(greet, args=["x" * 100_000]))

    found = snapshot(instrumentor, logs, agent)

    short, long = found[n.QUEUED_ARGUMENTS]
    assert short == '{"args": ["ada"], "punctuation": "?"}'
    assert len(long) == PREVIEW_LIMIT, "the budget, the ellipsis included"
    assert long.endswith("…")
    assert found[n.QUEUED_MORE] == 0


async def test_a_lower_content_limit_cuts_the_previews_further(
    live: Instrument, logs: InMemoryLogRecordExporter, greet: DecoratedTool[..., Any]
) -> None:
    instrumentor = live(capture_content=True, content_max_length=10)
    agent = Agent("terse", "keeps previews short", [greet])
    await agent.put(Turn(greet, args=["a long name indeed"]))

    (arguments,) = snapshot(instrumentor, logs, agent)[n.QUEUED_ARGUMENTS]
    assert arguments == '{"args": …'


async def test_a_snapshot_lists_the_newest_context_items_with_content_only_under_capture(
    live: Instrument, logs: InMemoryLogRecordExporter
) -> None:
    queue: ContextQueue[str] = ContextQueue(limit=3)
    pool: ContextPool[str] = ContextPool()
    agent = Agent("keeper", "remembers", [], context_queue=queue, context_pool=pool)
    for i in range(5):
        await queue.append(ContextItem(f"note {i} {SECRET}", description=f"note {i}"))
    for i in range(70):
        await pool.add(ContextItem(f"doc {i} {SECRET}", description="d" * 1000, id=f"doc-{i}"))

    instrumentor = live()
    found = snapshot(instrumentor, logs, agent)
    assert found[n.QUEUE_ITEM_IDS] == ("", "", ""), "queue items have no id: empty"
    assert found[n.QUEUE_ITEM_DESCRIPTIONS] == ("note 2", "note 3", "note 4"), "oldest first"
    assert found[n.QUEUE_ITEMS_MORE] == 0
    assert found[n.POOL_ITEM_IDS] == tuple(f"doc-{i}" for i in range(20, 70)), "the newest 50"
    assert found[n.POOL_ITEMS_MORE] == 20
    assert {len(d) for d in found[n.POOL_ITEM_DESCRIPTIONS]} == {PREVIEW_LIMIT}
    assert SECRET not in repr(found), "no content without capture"
    assert n.QUEUE_ITEM_CONTENTS not in found
    assert n.POOL_ITEM_CONTENTS not in found

    instrumentor.uninstrument()
    instrumentor = live(capture_content=True)
    found = snapshot(instrumentor, logs, agent)
    assert found[n.QUEUE_ITEM_CONTENTS] == tuple(f'"note {i} {SECRET}"' for i in (2, 3, 4))
    assert found[n.POOL_ITEM_CONTENTS][-1] == f'"doc 69 {SECRET}"'
    assert len(found[n.POOL_ITEM_CONTENTS]) == 50


async def test_an_agent_with_nothing_waiting_sends_empty_lists_and_no_more(
    live: Instrument, logs: InMemoryLogRecordExporter
) -> None:
    instrumentor = live()
    agent = Agent("idle", "has nothing", [])
    found = snapshot(instrumentor, logs, agent)
    assert found[n.QUEUED_TOOLS] == found[n.QUEUED_UUIDS] == found[n.QUEUED_TIMEOUTS] == ()
    assert found[n.QUEUED_MORE] == found[n.QUEUE_ITEMS_MORE] == found[n.POOL_ITEMS_MORE] == 0


async def test_snapshots_stay_whole_while_the_event_loop_changes_the_queue_and_the_stores(
    live: Instrument, logs: InMemoryLogRecordExporter, greet: DecoratedTool[..., Any]
) -> None:
    """The snapshot thread's reads race the loop's puts, appends, adds and removes: every
    snapshot taken meanwhile is whole (parallel arrays of one length, counts that add
    up), and the thread never fails."""
    instrumentor = live(capture_content=True)
    live_mode = instrumentor.live
    assert live_mode is not None
    queue: ContextQueue[dict[str, int]] = ContextQueue(limit=64)
    pool: ContextPool[dict[str, int]] = ContextPool(limit=64)
    agent = Agent("churning", "changes all the time", [greet], queue, pool)
    stop = threading.Event()
    failures: list[BaseException] = []
    taken = [0]

    def snapshots() -> None:
        while not stop.is_set() and taken[0] < 2000:  # bounded, whatever happens
            try:
                live_mode.snapshot()
            except BaseException as error:  # the test's failure, reported below
                failures.append(error)
                return
            taken[0] += 1

    thread = threading.Thread(target=snapshots)
    thread.start()
    shared = {"n": 0}  # one dict, changed while snapshots write its preview
    try:
        for i in range(800):
            shared[f"k{i % 50}"] = i
            await agent.put(Turn(greet, args=[f"n{i}"], kwargs={"punctuation": shared}))
            await queue.append(ContextItem(shared, description=f"q{i}"))
            await pool.add(ContextItem(shared, description=f"p{i}", id=f"id-{i % 80}"))
            if i % 3 == 0:
                await pool.remove(f"id-{i % 80}")
            if i % 7 == 0:
                async for _ in agent.run():  # drain the queue now and then
                    pass
            if i % 50 == 0:
                await asyncio.sleep(0)
    finally:
        stop.set()
        await asyncio.to_thread(thread.join, 30)
    assert not thread.is_alive()
    assert failures == []
    assert taken[0] > 0
    found = [
        dict(record.log_record.attributes or {})
        for record in logs.get_finished_logs()
        if record.log_record.event_name == n.SNAPSHOT
    ]
    mine = [a for a in found if a.get(n.AGENT_ID) == agent.uuid]
    assert mine
    for record in mine:
        turns = {len(record[key]) for key in (n.QUEUED_TOOLS, n.QUEUED_UUIDS, n.QUEUED_TIMEOUTS)}
        assert turns == {len(record[n.QUEUED_ARGUMENTS])}
        for ids, descriptions, contents in (
            (n.QUEUE_ITEM_IDS, n.QUEUE_ITEM_DESCRIPTIONS, n.QUEUE_ITEM_CONTENTS),
            (n.POOL_ITEM_IDS, n.POOL_ITEM_DESCRIPTIONS, n.POOL_ITEM_CONTENTS),
        ):
            assert len(record[ids]) == len(record[descriptions]) == len(record[contents])
            assert len(record[ids]) <= n.SNAPSHOT_ITEMS


class Counted:
    """A value whose ``repr`` (what a preview of an unknown object uses) is counted."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.previews = 0

    def __repr__(self) -> str:
        self.previews += 1
        return f"<{self.name}>"


async def test_each_preview_is_made_once_while_its_turn_or_item_stays_listed(
    live: Instrument, logs: InMemoryLogRecordExporter, greet: DecoratedTool[..., Any]
) -> None:
    """Previews are the costly part of a snapshot: one made for a turn or an item is
    reused by the next snapshots for as long as it is listed."""
    instrumentor = live(capture_content=True)
    argument, note, doc = Counted("argument"), Counted("note"), Counted("doc")
    agent = Agent("steady", "changes nothing", [greet])
    await agent.put(Turn(greet, args=[argument]))
    await agent.context_queue.append(ContextItem(note))
    await agent.context_pool.add(ContextItem(doc, description="a doc", id="doc"))

    for _ in range(3):
        found = snapshot(instrumentor, logs, agent)
        assert found[n.QUEUED_ARGUMENTS] == ('{"args": ["<argument>"]}',)
        assert found[n.QUEUE_ITEM_CONTENTS] == ('"<note>"',)
        assert found[n.POOL_ITEM_CONTENTS] == ('"<doc>"',)
    assert (argument.previews, note.previews, doc.previews) == (1, 1, 1)

    replacement = Counted("replacement")
    await agent.context_pool.add(ContextItem(replacement, description="new", id="doc"))
    assert snapshot(instrumentor, logs, agent)[n.POOL_ITEM_CONTENTS] == ('"<replacement>"',)
    assert replacement.previews == 1


async def test_the_previews_kept_let_go_of_items_no_longer_listed(
    live: Instrument, logs: InMemoryLogRecordExporter
) -> None:
    instrumentor = live(capture_content=True)
    agent = Agent("forgetful", "drops its notes", [])
    item = ContextItem(Counted("note"), description="note", id="note")
    await agent.context_pool.add(item)
    snapshot(instrumentor, logs, agent)
    gone = weakref.ref(item)
    await agent.context_pool.remove("note")
    del item
    snapshot(instrumentor, logs, agent)
    gc.collect()
    assert gone() is None, "the next snapshot let go of it"


class Changing(ContextPool[str]):
    """A pool whose copy fails as if another thread changed it meanwhile, ``failures``
    times (where a copy is not atomic, e.g. without the GIL)."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    @property
    def items(self) -> list[ContextItem[str]]:
        if self.failures > 0:
            self.failures -= 1
            raise RuntimeError("dictionary changed size during iteration")
        return super().items


async def test_a_list_changed_during_its_copy_is_copied_again_or_left_out_of_that_snapshot(
    live: Instrument, logs: InMemoryLogRecordExporter
) -> None:
    instrumentor = live()
    pool = Changing(failures=2)
    agent = Agent("racing", "changes while copied", [], context_pool=pool)
    await pool.add(ContextItem("x", description="kept", id="x"))

    assert snapshot(instrumentor, logs, agent)[n.POOL_ITEM_IDS] == ("x",), "the third copy"

    pool.failures = 100
    found = snapshot(instrumentor, logs, agent)
    assert n.POOL_ITEM_IDS not in found, "left out rather than half sent"
    assert found[n.POOL_SIZE] == 1
    assert found[n.QUEUED_TOOLS] == (), "the other lists are still sent"
    assert pool.failures == 97, "three tries, then the next snapshot"
