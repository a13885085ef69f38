"""A served agent behaves like an agent: routing, hooks, context, send(), statistics."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

from redis_helpers import Serving, eventually

from pygents import (
    Agent,
    AgentHook,
    ContextItem,
    ContextPool,
    ScopeKind,
    StopReason,
    ToolType,
    Turn,
    current_scope,
    tool,
)
from pygents.redis import Mailboxes, Worker, current_delivery
from pygents.testing import RecordingSubscriber


async def test_values_are_routed_as_in_an_agent_and_yielded_turns_go_to_the_mailbox(
    mailboxes: Mailboxes, serving: Serving, recorder: RecordingSubscriber
) -> None:
    filed: list[str] = []
    done = asyncio.Event()

    @tool()
    async def plan(topic: str) -> AsyncIterator[Any]:
        """Plans: a note for the pool, a follow-up turn, and two lines for the caller."""
        yield ContextItem(content=f"notes on {topic}", description="notes", id="notes")
        yield Turn("file", args=[topic])
        yield f"planned {topic}"
        yield "done"

    @tool()
    async def file(topic: str) -> None:
        """Files the topic."""
        filed.append(topic)
        done.set()

    agent = Agent("planner", "Plans", [plan, file])
    completed: list[StopReason] = []

    @agent.on_complete
    async def note(turn: Turn, reason: StopReason) -> None:
        completed.append(reason)

    await serving.start(Worker(mailboxes, agent))
    handle = await mailboxes.put("planner", Turn("plan", args=["bees"]))

    assert [value async for value in handle] == ["planned bees", "done"]
    assert (await handle.outcome()).values == 2
    await done.wait()  # the yielded turn went through the mailbox, and ran
    assert filed == ["bees"]
    pool: ContextPool[Any] = agent.context_pool
    assert pool.get("notes").content == "notes on bees"
    await eventually(lambda: len(completed) == 2)
    assert completed == [StopReason.COMPLETED, StopReason.COMPLETED]
    # One agent run per delivered turn, each turn inside its agent's run.
    runs = recorder.ended(ScopeKind.AGENT_RUN)
    turns = recorder.ended(ScopeKind.TURN)
    assert [r.target for r in runs] == [agent, agent]
    assert {t.parent for t in turns} == set(runs)


async def test_a_worker_fires_the_agent_events_as_run_does_once_per_turn(
    mailboxes: Mailboxes, serving: Serving, recorder: RecordingSubscriber
) -> None:
    """BEFORE_TURN once per delivered turn; ON_TURN_VALUE for routed values too, once
    they are routed; a completion check's verdict is the caller's answer, not a value."""

    @tool()
    async def jot(text: str) -> ContextItem[str]:
        """Returns a note for the context queue."""
        return ContextItem(content=text, description="a note")

    @tool(type=ToolType.COMPLETION_CHECK)
    async def settled() -> bool:
        """Says whether the work is done."""
        return True

    agent = Agent("scribe", "Takes notes", [jot, settled])
    queued_when_seen: list[int] = []

    @agent.on_turn_value
    async def seen(agent: Agent, turn: Turn, value: object) -> None:
        queued_when_seen.append(len(agent.context_queue))

    await serving.start(Worker(mailboxes, agent, concurrency=1))
    note = await mailboxes.put("scribe", Turn(jot, args=["milk"]))
    verdict = await mailboxes.put("scribe", Turn(settled))

    assert await note.result() is None  # a routed value stays with the agent
    assert await verdict.result() is True
    assert queued_when_seen == [1]  # the note, seen after it was queued
    assert [e["value"].content for e in recorder.of(AgentHook.ON_TURN_VALUE)] == ["milk"]
    befores = recorder.of(AgentHook.BEFORE_TURN)
    afters = recorder.of(AgentHook.AFTER_TURN)
    assert (len(befores), len(afters)) == (2, 2)
    assert [e["turn"].tool.name for e in afters] == ["jot", "settled"]


async def test_send_from_a_served_agent_reaches_an_agent_served_elsewhere(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    got: list[tuple[str, int]] = []
    arrived = asyncio.Event()

    @tool()
    async def delegate(text: str) -> str:
        """Hands the text to the archivist."""
        scope = current_scope()
        assert scope is not None
        await scope.agent.send("archivist", Turn("archive", args=[text]))
        return "delegated"

    @tool()
    async def archive(text: str) -> None:
        """Archives the text."""
        delivery = current_delivery()
        assert delivery is not None
        got.append((text, delivery.attempt))
        arrived.set()

    front = Agent("front", "Takes requests", [delegate])
    archivist = Agent("archivist", "Keeps things", [archive])
    front_worker = await serving.start(Worker(mailboxes, front))
    await serving.start(Worker(mailboxes, archivist))

    assert await (await mailboxes.put("front", Turn("delegate", args=["memo"]))).result() == (
        "delegated"
    )
    await arrived.wait()
    assert got == [("memo", 1)]
    assert archivist.queue_depth == 0  # it went through Redis, not the local queue
    assert front_worker.counters.turns == 1


async def test_route_sends_turns_for_agents_not_in_this_process_to_their_mailboxes(
    mailboxes: Mailboxes,
) -> None:
    @tool()
    async def index(page: int) -> None:
        """Indexes a page."""

    local = Agent("local", "Here", [index])
    mailboxes.route()
    try:
        turn = Turn(index, args=[3])
        await local.send("indexer", turn)  # not registered here: goes to its mailbox
        await local.send("local", Turn(index, args=[4]))  # registered here: stays local
    finally:
        mailboxes.unroute()

    entries = await mailboxes.client.xrange(mailboxes.keys("indexer").mailbox)
    assert [json.loads(fields["turn"])["turn"]["uuid"] for _, fields in entries] == [turn.uuid]
    assert local.queue_depth == 1
    assert "indexer" in await mailboxes.agents()


async def test_stats_show_depth_pending_and_the_live_workers_of_a_mailbox(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    release = asyncio.Event()
    running = asyncio.Event()

    @tool()
    async def slow() -> str:
        """Waits for the test."""
        running.set()
        await release.wait()
        return "ok"

    agent = Agent("counter", "Counts", [slow])
    empty = await mailboxes.stats("counter")
    assert (empty.depth, empty.pending, empty.workers, empty.consumers) == (0, 0, 0, ())

    one = await serving.start(Worker(mailboxes, agent, concurrency=1, prefetch=0))
    two = await serving.start(Worker(mailboxes, agent, concurrency=1, prefetch=0))
    handles = await mailboxes.put_many("counter", [Turn("slow") for _ in range(3)])
    await running.wait()
    await eventually(lambda: _pending(mailboxes, 2))

    stats = await mailboxes.stats("counter")
    assert (stats.depth, stats.pending, stats.waiting, stats.workers) == (3, 2, 1, 2)
    assert {c.name for c in stats.consumers} == {one.name, two.name}
    assert all(c.live and c.pending == 1 for c in stats.consumers)

    release.set()
    assert [await h.result() for h in handles] == ["ok"] * 3
    await serving.stop(one)
    after = await mailboxes.stats("counter")
    assert (after.depth, after.pending, after.workers) == (0, 0, 1)
    assert {c.name: c.live for c in after.consumers}[one.name] is False


async def _pending(mailboxes: Mailboxes, count: int) -> bool:
    return (await mailboxes.stats("counter")).pending == count


def test_importing_pygents_redis_without_the_client_names_the_extra() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'redis' or name.startswith('redis.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import pygents\n"
        "assert 'redis' not in sys.modules\n"
        "import pygents.redis\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "pygents._extras.MissingExtraError: pygents.redis needs the 'redis' extra "
        "(redis is not installed): reinstall it from its checkout with the extra: "
    )
    assert "During handling" not in done.stderr  # raised from None: no chained traceback


def test_importing_pygents_does_not_import_redis() -> None:
    code = "import sys, pygents, pygents.testing; print('redis' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
