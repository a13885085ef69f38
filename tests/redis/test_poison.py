"""Poison entries: whatever a mailbox entry holds, it never stops a worker or costs
another turn its outcome.

Entries are written raw (bytes, with a client that does not decode), as a buggy or
hostile producer would, next to good turns read in the same batches.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from redis.asyncio import Redis
from redis_helpers import Serving, eventually

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker
from pygents.redis._cluster import connect
from pygents.redis._lua.mailbox import GROUP


async def xadd_raw(raw: Redis, key: str, fields: dict[bytes, bytes]) -> str:
    """Write an entry's bytes as they are; its id."""
    found = await raw.xadd(key, fields)  # type: ignore[arg-type]
    return found.decode() if isinstance(found, bytes) else found


def clerk() -> Agent:
    @tool()
    async def echo(text: str) -> str:
        """Returns its argument."""
        return text

    return Agent("clerk", "Does paperwork", [echo])


async def test_entries_that_are_not_utf8_or_nest_too_deep_are_dead_lettered_and_the_batch_runs(
    redis_server: RedisServer, mailboxes: Mailboxes, serving: Serving
) -> None:
    agent = clerk()
    good = json.dumps({"reply": None, "turn": Turn("echo", args=["x"]).to_dict()}).encode()
    planted: dict[str, dict[bytes, bytes]] = {
        "not UTF-8": {b"turn": b'{"reply": null, "turn": "\xff\xfe"}'},
        "field name": {b"tu\xc3\x28rn": good},
        "nested too deeply": {b"turn": b"[" * 100_000},
        "nested too deeply ": {b"turn": b'{"reply": null, "turn": ' + b"[" * 100_000},
    }
    raw = connect(redis_server.url)  # bytes in, bytes out: no decoding
    keys = mailboxes.keys("clerk")
    handles = []
    ids: dict[str, str] = {}
    try:
        for reason, fields in planted.items():
            handles += await mailboxes.put_many(
                "clerk", [Turn("echo", args=[f"{reason} {n}"]) for n in range(5)]
            )
            ids[reason] = await xadd_raw(raw, keys.mailbox, fields)
        handles += await mailboxes.put_many("clerk", [Turn("echo", args=["last"])])
    finally:
        await raw.aclose()
    worker = await serving.start(Worker(mailboxes, agent, concurrency=4, max_deliveries=3))
    run = serving.runs[-1][1]

    async with asyncio.timeout(10):
        results = await asyncio.gather(*(h.result() for h in handles))
    assert len(results) == len(handles) == 21
    await eventually(lambda: _settled(mailboxes))
    assert not run.done()  # the worker never died
    dead = {d.message_id: d for d in await mailboxes.dead_letters("clerk")}
    assert set(dead) == set(ids.values())
    for reason, message_id in ids.items():
        letter = dead[message_id]
        expected = reason.strip() if reason != "field name" else "not UTF-8"
        assert expected in letter.reason, letter.reason
        assert letter.deliveries == 1
    # The payload of a non-UTF-8 entry is kept, escaped: readable, and its bytes shown.
    assert "\\xff\\xfe" in dead[ids["not UTF-8"]].payload
    assert worker.counters.dead_lettered == len(planted)


async def _settled(mailboxes: Mailboxes) -> bool:
    stats = await mailboxes.stats("clerk")
    return stats.depth == 0 and stats.pending == 0


@pytest.mark.single_server  # a cluster refuses a reply key outside the slot: test_cluster
async def test_a_turn_whose_reply_key_is_not_a_stream_is_dead_lettered_alone(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    agent = clerk()
    client, keys = mailboxes.client, mailboxes.keys("clerk")
    await client.hset("someone:else", "field", "value")
    bad = Turn("echo", args=["lost?"])
    # The bad entry first: its reply key comes first in the batch's script call.
    bad_id = await client.xadd(
        keys.mailbox, {"turn": json.dumps({"reply": "someone:else", "turn": bad.to_dict()})}
    )
    handles = await mailboxes.put_many("clerk", [Turn("echo", args=[str(n)]) for n in range(60)])
    worker = await serving.start(Worker(mailboxes, agent, concurrency=64))

    async with asyncio.timeout(10):
        results = await asyncio.gather(*(h.result() for h in handles))
    assert results == [str(n) for n in range(60)]
    await eventually(lambda: _settled(mailboxes))
    (dead,) = await mailboxes.dead_letters("clerk")
    assert dead.message_id == bad_id
    assert "reply stream 'someone:else' is a hash, not a stream" in dead.reason
    assert json.loads(dead.payload)["turn"]["uuid"] == bad.uuid
    assert worker.counters.dead_lettered == 1
    assert await client.hgetall("someone:else") == {"field": "value"}


@pytest.mark.single_server  # a cluster refuses a reply key outside the slot: test_cluster
async def test_a_dead_lettered_entry_with_a_bad_reply_key_does_not_fail_the_move(
    mailboxes: Mailboxes, serving: Serving, caplog: pytest.LogCaptureFixture
) -> None:
    agent = clerk()
    client, keys = mailboxes.client, mailboxes.keys("clerk")
    await client.set("a:string", "x")
    unknown = dict(Turn("echo", args=["y"]).to_dict(), tool_name="z")
    envelope = {"reply": "a:string", "turn": unknown}
    bad_id = await client.xadd(keys.mailbox, {"turn": json.dumps(envelope)})
    after = await mailboxes.put("clerk", Turn("echo", args=["after"]))
    await serving.start(Worker(mailboxes, agent))

    async with asyncio.timeout(10):
        assert await after.result() == "after"
    await eventually(lambda: _settled(mailboxes))
    (dead,) = await mailboxes.dead_letters("clerk")
    assert (dead.message_id, "unknown tool" in dead.reason) == (bad_id, True)
    assert await client.get("a:string") == "x"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_poison_taken_over_from_a_dead_worker_is_dead_lettered_and_its_batch_runs(
    redis_server: RedisServer, mailboxes: Mailboxes, serving: Serving
) -> None:
    agent = clerk()
    keys = mailboxes.keys("clerk")
    before = await mailboxes.put("clerk", Turn("echo", args=["before"]))
    raw = connect(redis_server.url)
    try:
        await raw.xgroup_create(keys.mailbox, GROUP, id="0")
        not_utf8 = await xadd_raw(raw, keys.mailbox, {b"turn": b"\xc3\x28"})
        deep = await xadd_raw(raw, keys.mailbox, {b"turn": b"[" * 100_000})
        # A worker that read all three and died: they stay pending on its name.
        await raw.xreadgroup(GROUP, "ghost", {keys.mailbox: ">"}, count=10)
        # The deep one had killed workers before: four deliveries so far.
        await raw.xclaim(keys.mailbox, GROUP, "ghost", 0, [deep], retrycount=4, justid=True)
    finally:
        await raw.aclose()
    worker = await serving.start(Worker(mailboxes, agent, visibility_timeout=0.2, max_deliveries=3))
    run = serving.runs[-1][1]

    async with asyncio.timeout(10):
        assert await before.result() == "before"
    assert (await before.outcome()).deliveries == 2
    await eventually(lambda: _settled(mailboxes))
    assert not run.done()
    dead = {d.message_id: d for d in await mailboxes.dead_letters("clerk")}
    assert set(dead) == {not_utf8, deep}
    assert "not UTF-8" in dead[not_utf8].reason
    assert dead[not_utf8].payload == "\\xc3("
    assert "delivered 5 times (max_deliveries=3)" in dead[deep].reason
    assert dead[deep].payload == "[" * 100_000
    assert worker.counters.claimed == 3
