"""The listener reads an agent's waiting turns and context items out of a live snapshot
into the rows the Queue and Context panels show, whatever shape arrives: mismatched,
mistyped, huge or missing arrays give a partial result or ``None``, never an error;
and end to end, a snapshot pygents_otel sends over OTLP to the real receiver reads
back as the agent's queue and context."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from pygents import Agent, ContextItem, ContextPool, ContextQueue, Turn, tool
from pygents_otel import PygentsInstrumentor
from pygents_otel import _names as k
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.otlp.contents import (
    MAX_COUNT,
    NOT_SENT,
    QueuedTurns,
    context_contents,
    queued_turns,
)
from pygents_tui.listen import Receiver
from pygents_tui.listen.decode import Batch, ReceivedRecord
from pygents_tui.listen.values import Limits, Value
from pygents_tui.state import Capacity, ContextContents

Attributes = dict[str, Value]


def turns(count: int, **extra: Value) -> Attributes:
    return {
        k.QUEUED_TOOLS: tuple(f"tool{i}" for i in range(count)),
        k.QUEUED_UUIDS: tuple(f"uuid{i}" for i in range(count)),
        k.QUEUED_TIMEOUTS: tuple(float(i + 1) for i in range(count)),
        k.QUEUED_MORE: 0,
        **extra,
    }


# -- the queue ---------------------------------------------------------------------------------


def test_waiting_turns_read_as_the_queue_panels_rows_with_the_rest_counted() -> None:
    found = queued_turns(
        turns(
            2,
            **{k.QUEUED_ARGUMENTS: ('{"args": [1]}', "{}"), k.QUEUED_MORE: 150},
        )
    )
    assert found == QueuedTurns(
        (("1", "tool0", '{"args": [1]}', "1s"), ("2", "tool1", "{}", "2s")), 150
    )


def test_without_capture_the_arguments_column_says_they_were_not_captured() -> None:
    found = queued_turns(turns(1))
    assert found is not None
    assert found.rows == (("1", "tool0", NOT_SENT, "1s"),)


def test_a_snapshot_without_a_list_of_turns_gives_none() -> None:
    assert queued_turns({k.QUEUE_DEPTH: 3}) is None
    assert queued_turns({k.QUEUED_TOOLS: "not an array"}) is None
    assert queued_turns({}) is None


def test_arrays_of_different_lengths_give_a_row_per_tool_and_mark_what_is_missing() -> None:
    found = queued_turns(
        {
            k.QUEUED_TOOLS: ("a", "b", "c"),
            k.QUEUED_TIMEOUTS: (5.0,),
            k.QUEUED_ARGUMENTS: ("x", "y", "z", "extra", "more"),
        }
    )
    assert found is not None
    assert found.rows == (("1", "a", "x", "5s"), ("2", "b", "y", "?"), ("3", "c", "z", "?"))
    assert found.more == 0


def test_entries_of_the_wrong_type_show_as_unknown() -> None:
    found = queued_turns(
        {
            k.QUEUED_TOOLS: (7, True, "ok"),
            k.QUEUED_TIMEOUTS: ("soon", 2, True),
            k.QUEUED_ARGUMENTS: (1.5, "fine", False),
            k.QUEUED_MORE: "many",
        }
    )
    assert found is not None
    assert found.rows == (("1", "?", "?", "?"), ("2", "?", "fine", "2s"), ("3", "ok", "?", "?"))
    assert found.more == 0, "a count that is not a number counts nothing"


def test_a_huge_array_gives_fifty_rows_and_counts_the_rest() -> None:
    found = queued_turns(turns(100_000, **{k.QUEUED_MORE: 5}))
    assert found is not None
    assert len(found.rows) == k.SNAPSHOT_ITEMS == 50
    assert found.more == 5 + 100_000 - 50


def test_turns_a_receiver_left_out_of_an_array_are_still_counted_from_the_depth() -> None:
    """A receiver keeps fewer entries of an array than a sender sends: the queue depth
    says how many wait, so none goes uncounted."""
    found = queued_turns(turns(32, **{k.QUEUED_MORE: 150, k.QUEUE_DEPTH: 200}))
    assert found is not None
    assert (len(found.rows), found.more) == (32, 168)


def test_huge_strings_are_cut_and_control_characters_kept_as_data() -> None:
    found = queued_turns(
        {
            k.QUEUED_TOOLS: ("\x1b[31mred\x07" + "t" * 10_000,),
            k.QUEUED_ARGUMENTS: ("a\nb" * 100_000,),
            k.QUEUED_MORE: -5,
            k.QUEUE_DEPTH: 10**300,
        }
    )
    assert found is not None
    ((_, tool_, arguments, _),) = found.rows
    assert tool_.startswith("\x1b[31mred\x07"), "kept as data: the panels make it visible"
    assert len(tool_) <= 64
    assert len(arguments) <= 200
    assert "…" in arguments
    assert found.more == MAX_COUNT - 1, "a depth too big to show is capped, less the row"


# -- the context ---------------------------------------------------------------------------------


def context(**extra: Value) -> Attributes:
    return {
        k.QUEUE_SIZE: 2,
        k.QUEUE_LIMIT: 10,
        k.QUEUE_ITEM_IDS: ("", ""),
        k.QUEUE_ITEM_DESCRIPTIONS: ("first note", ""),
        k.POOL_SIZE: 70,
        k.POOL_ITEM_IDS: ("doc-1",),
        k.POOL_ITEM_DESCRIPTIONS: ("a document",),
        **extra,
    }


def test_context_items_read_as_the_context_panels_contents() -> None:
    found = context_contents(
        context(
            **{
                k.QUEUE_ITEM_CONTENTS: ('"hello"', '"world"'),
                k.POOL_ITEM_CONTENTS: ('{"text": "doc"}',),
            }
        )
    )
    assert found == ContextContents(
        queue=Capacity(2, 10),
        queue_items=('"hello"', '"world"'),
        pool=Capacity(70, None),
        pool_items=(("doc-1", "a document", '{"text": "doc"}'),),
    )


def test_without_capture_queue_items_show_their_description_and_pool_items_say_so() -> None:
    found = context_contents(context())
    assert found is not None
    assert found.queue_items == ("first note", NOT_SENT)
    assert found.pool_items == (("doc-1", "a document", NOT_SENT),)


def test_a_snapshot_without_item_lists_gives_none_and_one_store_alone_is_enough() -> None:
    assert context_contents({k.QUEUE_SIZE: 3, k.POOL_SIZE: 1}) is None
    assert context_contents({k.QUEUE_ITEM_DESCRIPTIONS: 3}) is None
    found = context_contents({k.POOL_ITEM_DESCRIPTIONS: ("only the pool",)})
    assert found is not None
    assert found.queue == Capacity(0, None)
    assert found.queue_items == ()
    assert found.pool == Capacity(1, None), "no size sent: the items listed"
    assert found.pool_items == (("", "only the pool", NOT_SENT),)


def test_hostile_context_arrays_give_bounded_partial_contents() -> None:
    found = context_contents(
        {
            k.QUEUE_SIZE: "big",
            k.QUEUE_LIMIT: -3,
            k.QUEUE_ITEM_DESCRIPTIONS: tuple("d" * 100_000 for _ in range(10_000)),
            k.QUEUE_ITEM_CONTENTS: (1, 2),
            k.POOL_ITEM_IDS: (3.5, "\x00id"),
            k.POOL_ITEM_DESCRIPTIONS: (False, "x\r\ny"),
        }
    )
    assert found is not None
    assert len(found.queue_items) == 50
    assert all(len(item) <= 70 for item in found.queue_items)
    assert found.queue == Capacity(50, None), "no usable size or limit"
    assert found.pool_items == (("", "?", NOT_SENT), ("\x00id", "x\r\ny", NOT_SENT))


# -- end to end --------------------------------------------------------------------------------


class Keeping(FleetModel):
    """The fleet model, keeping every record the receiver hands it."""

    def __init__(self) -> None:
        super().__init__(stale_after=3600.0)
        self.records: list[ReceivedRecord] = []

    def ingest(self, batch: Batch) -> None:
        self.records.extend(batch.records)
        super().ingest(batch)


@pytest.fixture
def fleet() -> FleetModel:
    return Keeping()


@pytest.fixture
async def exporting(
    receiver: Receiver,
) -> AsyncIterator[tuple[PygentsInstrumentor, LoggerProvider]]:
    """This process in live mode with capture on, sending to the receiver over gRPC
    (shut down off the event loop, where the receiver answers the last export)."""
    resource = Resource({"service.name": "inproc", "service.instance.id": "one"})
    logger_provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(endpoint=receiver.grpc_endpoint, insecure=True))
    )
    tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(
        tracer_provider=tracer_provider,
        logger_provider=logger_provider,
        live=True,
        capture_content=True,
        snapshot_interval=3600,  # one at the start; the test takes the one it reads
    )
    yield instrumentor, logger_provider
    await asyncio.to_thread(instrumentor.uninstrument)
    await asyncio.to_thread(logger_provider.shutdown)
    tracer_provider.shutdown()


async def test_a_snapshot_sent_over_otlp_reads_back_as_the_agents_queue_and_context(
    fleet: Keeping, exporting: tuple[PygentsInstrumentor, LoggerProvider]
) -> None:
    instrumentor, logger_provider = exporting

    @tool
    async def fetch(url: str) -> str:
        return url

    queue: ContextQueue[str] = ContextQueue(limit=5)
    pool: ContextPool[Any] = ContextPool()
    agent = Agent("remote", "is watched from afar", [fetch], queue, pool)
    for i in range(200):
        await agent.put(Turn(fetch, args=[f"https://example.invalid/{i}"], timeout=30))
    await queue.append(ContextItem("a note", description="note"))
    await pool.add(ContextItem({"k": 1}, description="a doc\x1b[2J", id="doc-1"))

    live = instrumentor.live
    assert live is not None
    await asyncio.to_thread(live.snapshot)
    assert await asyncio.to_thread(logger_provider.force_flush, 10_000)

    snapshots = [
        r
        for r in fleet.records
        if r.event_name == k.SNAPSHOT and r.attributes.get(k.AGENT_ID) == agent.uuid
    ]
    attributes = snapshots[-1].attributes
    found = queued_turns(attributes)
    assert found is not None
    assert found.rows[0] == ("1", "fetch", '{"args": ["https://example.invalid/0"]}', "30s")
    # The receiver may keep fewer entries of an array than the 50 sent: every turn
    # left out is still counted.
    assert len(found.rows) == min(k.SNAPSHOT_ITEMS, Limits().max_items)
    assert len(found.rows) + found.more == 200

    items = context_contents(attributes)
    assert items is not None
    assert items.queue == Capacity(1, 5)
    assert items.queue_items == ('"a note"',)
    assert items.pool_items == (("doc-1", "a doc\x1b[2J", '{"k": 1}'),), (
        "control characters as data"
    )
