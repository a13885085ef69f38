"""How a worker reads turns: ``XREADGROUP`` when it must wait for them, the ``READ``
script (one packed string) when a backlog is known — the same entries either way."""

from __future__ import annotations

import hashlib

from redis_helpers import Serving

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, Worker
from pygents.redis._lua.mailbox import GROUP, READ
from pygents.redis._worker.intake import read, read_waiting

# Field names and values a hostile or careless producer may write by hand: separators
# of the packed form, bytes that are not UTF-8, empty strings, several fields.
ODD = [
    {b"turn": b'{"a": "b c:d"}'},
    {b"turn": b"", b"other": b"1:2 3"},
    {b"\xff name": b"\x00\xfe\r\n value"},
    {b"turn": b" " * 5 + b":" * 5},
]


async def test_the_read_script_gives_the_same_entries_as_xreadgroup_whatever_they_hold(
    mailboxes: Mailboxes,
) -> None:
    client = mailboxes.client
    keys = ["odd:a", "odd:b"]
    for key in keys:
        await client.xgroup_create(key, GROUP, id="0", mkstream=True)
        for fields in ODD:
            await client.xadd(key, fields)  # type: ignore[arg-type]
    sha = await client.script_load(READ)
    packed = await read_waiting(client, sha, "packed", keys, 100)
    for key in keys:  # the same entries again, for a second consumer, as XREADGROUP
        await client.xgroup_setid(key, GROUP, id="0")
    plain = await read(client, "plain", keys, 100, 10)
    assert [(k, [(i, dict(f or {})) for i, f in e]) for k, e in packed] == [
        (k, [(i, dict(f or {})) for i, f in e]) for k, e in plain
    ]
    assert [dict(f or {}) for _, f in packed[1][1]] == ODD
    assert await read_waiting(client, sha, "packed", keys, 100) == []  # nothing waits


async def test_a_worker_with_a_backlog_runs_every_turn_and_reads_through_the_script(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def doubled(x: int) -> int:
        """Twice its argument."""
        return 2 * x

    agent = Agent("backlogged", "Doubles", [doubled])
    handles = await mailboxes.put_many(agent.name, [Turn(doubled, args=[i]) for i in range(600)])
    await serving.start(Worker(mailboxes, agent, concurrency=8, prefetch=8))
    assert [await h.result() for h in handles] == [2 * i for i in range(600)]
    # The reads after a full one went through READ: Redis has the script (a fresh
    # Redis, and nothing else loads it).
    assert await mailboxes.client.script_exists(hashlib.sha1(READ.encode()).hexdigest()) == [True]
