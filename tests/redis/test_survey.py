"""The survey on a real ``redis-server``: a populated keyspace read back exactly, a
hostile keyspace (keys of the wrong type, garbage entries) read without an exception
and counted as malformed, its cost in Redis commands, and its counts the same as
``Mailboxes.stats`` gives for the same mailbox."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis_helpers import Serving, eventually

from pygents import Agent, Tool, Turn, tool
from pygents._errors import ELLIPSIS
from pygents.redis import Mailboxes, MailboxStats, Worker

WORKER = "box-4242-abc123"


@pytest.fixture
def listed() -> Tool:
    """Stands for a worker's tool; declared per test (declared at import, it would
    stay registered for the rest of the run)."""

    @tool()
    async def listed(text: str) -> str:
        return text

    return listed


def _envelope(listed: Tool, turn_uuid: str, tool_name: str = "listed") -> str:
    turn = dict(Turn(listed, args=["x"]).to_dict(), uuid=turn_uuid, tool_name=tool_name)
    return json.dumps({"reply": None, "turn": turn})


async def test_a_survey_reads_back_every_part_of_a_populated_mailbox(
    listed: Tool,
    mailboxes: Mailboxes,
) -> None:
    client, keys = mailboxes.client, mailboxes.keys("desk")
    turns = [Turn(listed, args=[str(n)]) for n in range(4)]
    await mailboxes.put_many("desk", turns, reply=False)
    await client.xgroup_create(keys.mailbox, "pygents", id="0")
    await client.xreadgroup("pygents", "ghost", {keys.mailbox: ">"}, count=1)
    for n in range(2):
        await client.xadd(
            keys.dead,
            {"message_id": f"1-{n}", "reason": f"reason {n}", "error": f"error {n}",
             "deliveries": "6", "worker": "w", "payload": _envelope(listed, f"dead-{n}")},
        )  # fmt: skip
    now_ms = int(time.time() * 1000)
    await client.zadd(keys.workers, {WORKER: now_ms + 30_000, "expired": 1})
    await client.hset(keys.control, mapping={"paused": "1", f"draining:{WORKER}": "1"})

    survey = await mailboxes.survey(rows=2)

    desk = survey["desk"]
    assert (desk.stats.depth, desk.stats.pending, desk.stats.dead_letters) == (4, 1, 2)
    assert desk.stats.workers == 1
    assert desk.stats.waiting == 3
    assert desk.paused
    assert desk.malformed == 0
    assert desk.problems == ()
    (pending,) = desk.pending
    assert (pending.consumer, pending.turn_uuid, pending.tool) == ("ghost", turns[0].uuid, "listed")
    assert pending.deliveries == 1
    assert pending.idle >= 0
    assert [(q.position, q.turn_uuid) for q in desk.queued] == [
        (1, turns[1].uuid),
        (2, turns[2].uuid),
    ]  # bounded by rows, in the order workers take them
    assert desk.queued[0].arguments == '[["1"]]'
    assert desk.queued[0].tool == "listed"
    assert [d.turn_uuid for d in desk.dead_letters] == ["dead-1", "dead-0"]  # newest first
    assert (desk.dead_letters[0].error, desk.dead_letters[0].deliveries) == ("error 1", 6)
    (worker,) = desk.workers
    assert (worker.name, worker.host, worker.pid, worker.draining) == (WORKER, "box", 4242, True)
    assert 0 < worker.expires_in <= 30
    assert [c.name for c in desk.stats.consumers] == ["ghost"]
    assert survey.time == pytest.approx(time.time(), abs=60)

    queued = (await mailboxes.survey(["desk"], rows=5))["desk"].queued
    assert [q.turn_uuid for q in queued] == [t.uuid for t in turns[1:]]


async def test_a_long_argument_is_previewed_cut_by_the_projects_rule(
    listed: Tool,
    mailboxes: Mailboxes,
) -> None:
    turn = Turn(listed, args=["a" * 1000], timeout=9.5)
    await mailboxes.put("desk", turn, reply=False)
    (queued,) = (await mailboxes.survey(["desk"]))["desk"].queued
    assert queued.timeout == 9.5
    assert queued.tool == "listed"
    assert len(queued.arguments) == 200
    assert queued.arguments.endswith(ELLIPSIS)
    assert queued.arguments.startswith('[["aaa')


async def test_a_hostile_keyspace_is_surveyed_without_an_exception_and_counted(
    mailboxes: Mailboxes,
) -> None:
    client = mailboxes.client
    wrong = mailboxes.keys("wrong")
    await client.set(wrong.mailbox, "not a stream")
    await client.hset(wrong.dead, "not", "a stream")
    await client.rpush(wrong.workers, "not a zset")
    await client.set(wrong.control, "not a hash")

    garbage = mailboxes.keys("garbage")
    entries = [
        {"turn": "{oops"},
        {"junk": "1"},
        {"turn": "[" * 5000 + "]" * 5000},
        {"turn": json.dumps({"reply": None, "turn": "not an object"})},
        {"turn": b"\xff\xfe not utf-8"},
        {"turn": json.dumps({"reply": 5, "turn": {"uuid": ["x"], "tool_name": {"a": 1}}})},
    ]
    for fields in entries:
        await client.xadd(garbage.mailbox, fields)  # type: ignore[arg-type]
    await client.xgroup_create(garbage.mailbox, "pygents", id="0")
    await client.xreadgroup("pygents", "ghost", {garbage.mailbox: ">"}, count=2)
    await client.xadd(garbage.dead, {"deliveries": "many", "payload": "{"})
    await client.hset(garbage.control, mapping={f"f{n}": "x" for n in range(500)})
    await client.sadd(f"{mailboxes.prefix}:agents", "wrong", "garbage", "", b"\xff\xfe")

    survey = await mailboxes.survey(rows=10)

    assert [m.agent for m in survey.mailboxes] == ["garbage", "wrong"]  # not "", not bytes
    bad = survey["wrong"]
    assert bad.malformed == 4
    assert len(bad.problems) == 4
    assert "is a string, not a stream" in bad.problems[0]
    assert bad.stats.depth == 0
    assert bad.workers == ()
    assert not bad.paused
    junk = survey["garbage"]
    assert junk.stats.depth == 6
    assert junk.stats.pending == 2
    assert len(junk.pending) == 2
    assert len(junk.queued) == 4
    assert junk.malformed == 6 + 1  # the entries, and the control hash too big to list
    assert junk.dead_letters[0].deliveries == 0
    assert junk.dead_letters[0].turn_uuid == ""
    assert {(q.turn_uuid, q.tool) for q in junk.queued} == {("", "")}


@pytest.mark.single_server  # it reads one server's command statistics
async def test_a_survey_of_100_mailboxes_is_one_read_only_script_call_each(
    listed: Tool,
    mailboxes: Mailboxes,
) -> None:
    for n in range(100):
        await mailboxes.put(f"agent-{n}", Turn(listed, args=[str(n)]), reply=False)
    await mailboxes.survey()  # loads the script into Redis's cache
    await mailboxes.client.config_resetstat()
    survey = await mailboxes.survey()
    stats = await mailboxes.client.info("commandstats")
    assert len(survey.mailboxes) == 100
    assert stats["cmdstat_evalsha_ro"]["calls"] == 100
    assert "cmdstat_eval" not in stats
    assert "cmdstat_evalsha" not in stats
    assert stats["cmdstat_smembers"]["calls"] == 1
    for n in range(100):
        assert survey[f"agent-{n}"].queued[0].arguments == f'[["{n}"]]'


def _shared(stats: MailboxStats) -> tuple[Any, ...]:
    """What ``stats()`` and the survey both report of a mailbox. A consumer's idle time
    is left out: it grows between the two reads (and a heartbeat resets it)."""
    consumers = sorted((c.name, c.pending, c.live) for c in stats.consumers)
    return (stats.agent, stats.depth, stats.pending, stats.waiting, stats.dead_letters,
            stats.workers, consumers)  # fmt: skip


async def test_stats_and_the_survey_agree_on_a_mailbox_in_every_state(
    mailboxes: Mailboxes,
    serving: Serving,
) -> None:
    release = asyncio.Event()
    started = asyncio.Event()

    @tool()
    async def tick(n: int) -> int:
        return n

    @tool()
    async def count(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    @tool()
    async def held() -> None:
        started.set()
        await release.wait()

    agent = Agent("desk-agree", "Agrees", [tick, count, held])
    keys = mailboxes.keys(agent.name)
    # One lane and no read-ahead: the running turn is all the worker holds, and the
    # turns put after it wait in the mailbox.
    await serving.start(Worker(mailboxes, agent, concurrency=1, prefetch=0))
    done = await mailboxes.put_many(agent.name, [Turn(tick, args=[1]), Turn(count, args=[3])])
    for handle in done:
        await handle.outcome()  # finished (one with streamed values): gone from the mailbox
    await mailboxes.client.xadd(keys.mailbox, {"junk": "not a turn"})  # dead-lettered
    await eventually(lambda: _dead(mailboxes, agent.name))
    running = await mailboxes.put(agent.name, Turn(held))
    await started.wait()
    await mailboxes.put_many(agent.name, [Turn(tick, args=[n]) for n in range(4)], reply=False)
    # A consumer that is no live worker holds one of them (a worker that died).
    await mailboxes.client.xreadgroup("pygents", "ghost", {keys.mailbox: ">"}, count=1)
    await mailboxes.client.zadd(keys.workers, {"ghost": 1})  # its heartbeat long expired

    stats = await mailboxes.stats(agent.name)
    surveyed = (await mailboxes.survey([agent.name]))[agent.name].stats

    assert _shared(surveyed) == _shared(stats)
    assert (stats.depth, stats.pending, stats.waiting, stats.dead_letters) == (5, 2, 3, 1)
    assert stats.workers == 1
    assert sorted((c.pending, c.live) for c in stats.consumers) == [(1, False), (1, True)]
    release.set()
    await running.outcome()


async def _dead(mailboxes: Mailboxes, agent: str) -> bool:
    return (await mailboxes.stats(agent)).dead_letters == 1


async def test_a_consumer_is_live_in_the_survey_as_in_stats_with_more_workers_than_rows(
    listed: Tool,
    mailboxes: Mailboxes,
) -> None:
    client, keys = mailboxes.client, mailboxes.keys("desk")
    await mailboxes.put_many("desk", [Turn(listed, args=["x"]) for _ in range(2)], reply=False)
    await client.xgroup_create(keys.mailbox, "pygents", id="0")
    for consumer in ("a-worker", "b-worker"):
        await client.xreadgroup("pygents", consumer, {keys.mailbox: ">"}, count=1)
    now_ms = int(time.time() * 1000)
    # Both heartbeat; the one listed first among the consumers expires last.
    await client.zadd(keys.workers, {"a-worker": now_ms + 60_000, "b-worker": now_ms + 30_000})

    stats = await mailboxes.stats("desk")
    surveyed = (await mailboxes.survey(["desk"], rows=1))["desk"].stats

    assert [(c.name, c.live) for c in stats.consumers] == [("a-worker", True), ("b-worker", True)]
    assert [(c.name, c.live) for c in surveyed.consumers] == [("a-worker", True)]
    assert surveyed.workers == stats.workers == 2
