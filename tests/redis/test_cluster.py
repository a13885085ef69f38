"""Redis Cluster: every key of a mailbox in one slot, agents spread over the shards.

These run on the session's local cluster only (``cluster_helpers.py``); the other
Redis test modules run on it too, through the ``redis_server`` fixture.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
from collections.abc import AsyncIterator

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis_helpers import Serving, eventually

from pygents import Agent, Tool, Turn, tool
from pygents.redis import MailboxError, Mailboxes, Worker
from pygents.redis._server.local_cluster import LocalCluster
from redis import Redis as SyncRedis
from system_programs import require

TRICKY = [
    "plain",
    "with space",
    "ünïcødé — ok",
    "a:b:c",
    "a{b}",
    "{tag}",
    "}{",
    "{}",
    "{",
    "x}y{z",
    "{a}{b}",
]


@pytest.fixture
def cluster(local_cluster: LocalCluster) -> LocalCluster:
    local_cluster.flush()
    return local_cluster


@pytest.fixture
async def mailboxes(cluster: LocalCluster) -> AsyncIterator[Mailboxes]:
    async with Mailboxes(cluster.url) as found:
        yield found


@pytest.fixture
def note() -> Tool:
    @tool()
    async def note(text: str) -> AsyncIterator[str]:
        """Echoes a text, then its length."""
        yield text
        yield str(len(text))

    return note


async def shards(mailboxes: Mailboxes, names: list[str]) -> dict[str, str]:
    """The node (host:port) holding each agent's mailbox, by the client's slot map."""
    client: RedisCluster = mailboxes.client  # type: ignore[assignment]
    await client.initialize()
    return {n: client.get_node_from_key(mailboxes.keys(n).mailbox).name for n in names}


async def test_every_key_of_a_mailbox_and_its_reply_stream_share_one_slot_for_any_name(
    mailboxes: Mailboxes,
) -> None:
    client: RedisCluster = mailboxes.client  # type: ignore[assignment]
    mailbox_keys = set()
    for name in TRICKY:
        keys = mailboxes.keys(name)
        every = [
            keys.mailbox,
            keys.dead,
            keys.tools,
            keys.workers,
            keys.errors,
            keys.control,
            mailboxes.replies.key_for(name),
        ]
        slots = {await client.cluster_keyslot(key) for key in every}  # Redis's own answer
        assert len(slots) == 1, (name, every, slots)
        mailbox_keys.add(keys.mailbox)
    assert len(mailbox_keys) == len(TRICKY)  # no two names share a mailbox
    assert mailboxes.keys("plain").mailbox == "pygents:mailbox:{plain}"  # readable


async def test_turns_for_agents_on_different_shards_all_come_back_to_one_producer(
    mailboxes: Mailboxes, serving: Serving, note: Tool
) -> None:
    names = [f"shard-agent-{n}" for n in range(12)] + ["a{b}", "ünïcødé — ok"]
    where = await shards(mailboxes, names)
    assert len(set(where.values())) == 3  # the names spread over the three primaries
    agents = [Agent(name, "Takes notes", [note]) for name in names]
    await serving.start(Worker(mailboxes, agents, concurrency=8))

    handles = []
    for agent in agents:
        turns = [Turn(note, args=[f"{agent.name}/{n}"]) for n in range(10)]
        handles += await mailboxes.put_many(agent.name, turns)
    async with asyncio.timeout(30):
        results = await asyncio.gather(*(h.result() for h in handles))

    expected = [[f"{a.name}/{n}", str(len(f"{a.name}/{n}"))] for a in agents for n in range(10)]
    assert results == expected  # streamed values, in order, for every turn
    assert await mailboxes.agents() == sorted(names)
    survey = await mailboxes.survey()
    assert [m.stats.agent for m in survey.mailboxes] == sorted(names)
    assert all(m.stats.depth == 0 and m.stats.workers == 1 for m in survey.mailboxes)


async def test_a_reply_stream_outside_the_mailboxs_slot_is_dead_lettered_with_the_reason(
    mailboxes: Mailboxes, serving: Serving, note: Tool
) -> None:
    agent = Agent("writer", "Takes notes", [note])
    keys = mailboxes.keys("writer")
    elsewhere = "someone:else"
    assert key_slot(elsewhere.encode()) != key_slot(keys.mailbox.encode())
    envelope = {"reply": elsewhere, "turn": Turn(note, args=["x"]).to_dict()}
    bad_id = await mailboxes.client.xadd(keys.mailbox, {"turn": json.dumps(envelope)})
    after = await mailboxes.put("writer", Turn(note, args=["after"]))
    await serving.start(Worker(mailboxes, agent))

    async with asyncio.timeout(10):
        assert await after.result() == ["after", "5"]

    async def dead_lettered() -> bool:
        return (await mailboxes.stats("writer")).dead_letters == 1

    await eventually(dead_lettered)
    (dead,) = await mailboxes.dead_letters("writer")
    assert dead.message_id == bad_id
    assert "in another hash slot than the mailbox" in dead.reason
    assert await mailboxes.client.exists(elsewhere) == 0  # nothing written there


async def test_a_cluster_refuses_a_prefix_with_braces(cluster: LocalCluster) -> None:
    with pytest.raises(ValueError, match="a brace in the prefix"):
        Mailboxes(cluster.url, prefix="app{1}")


async def test_the_dashboards_redis_source_surveys_the_mailboxes_of_a_cluster(
    mailboxes: Mailboxes, note: Tool
) -> None:
    from pygents_tui.feeders import FleetModel
    from pygents_tui.feeders.redis.source import RedisSource

    await mailboxes.put_many("desk", [Turn(note, args=[str(n)]) for n in range(3)], reply=False)
    fleet = FleetModel(stale_after=3600.0)
    source = RedisSource(fleet, mailboxes.url, interval=0.1, timeout=5.0)
    try:
        assert await source.refresh()
    finally:
        await source.close()
    (row,) = fleet.store.agent_rows()
    assert row.label == "redis/desk"
    assert fleet.store.mailboxes()[row.key].depth == 3


async def test_a_worker_answers_a_busy_mailbox_at_once_while_another_shards_read_blocks(
    mailboxes: Mailboxes, serving: Serving, note: Tool
) -> None:
    """Each slot is read by its own blocking read: turns found on one are not held
    back until the read of an idle mailbox, on another shard, times out (1 s)."""
    where = await shards(mailboxes, ["busy", "idle-0", "idle-1", "idle-2"])
    idle = next(n for n in ("idle-0", "idle-1", "idle-2") if where[n] != where["busy"])
    agents = [Agent(name, "Takes notes", [note]) for name in ("busy", idle)]
    await serving.start(Worker(mailboxes, agents))

    loop = asyncio.get_running_loop()
    start = loop.time()
    for n in range(20):  # one after the other: each waits for the worker's next read
        handle = await mailboxes.put("busy", Turn(note, args=[str(n)]))
        async with asyncio.timeout(10):
            assert await handle.result() == [str(n), str(len(str(n)))]
    took = loop.time() - start

    # Held back, each turn would wait out the idle shard's 1-s read: 20 s at least. The
    # line sits well below that and far above a busy machine's time for 20 turns.
    assert took < 15.0, f"20 turns took {took:.1f} s: reads waited for the idle shard"


async def test_a_single_server_keeps_its_key_names_and_one_reply_stream_per_client() -> None:
    """No hash tags off a cluster: mailboxes put before this version stay where they are."""
    async with Mailboxes("redis://localhost:1/0", client_id="me") as single:
        keys = single.keys("a{b}")
        assert (keys.mailbox, keys.dead) == ("pygents:mailbox:a{b}", "pygents:dead:a{b}")
        assert single.replies.key_for("a{b}") == single.replies.key_for("c") == "pygents:replies:me"


@pytest.mark.parametrize("shape", ["ten workers of one agent", "one worker of ten agents"])
async def test_workers_sharing_one_mailboxes_survive_set_up_and_serve_all_300_turns(
    mailboxes: Mailboxes, note: Tool, shape: str
) -> None:
    """Ten workers on one `Mailboxes` (one cluster client) set up at once: a connection
    one of them loses fails the others' commands inside redis-py (``AttributeError``
    from a closed writer) — a lost connection, retried, never a dead worker."""
    agents = [Agent(f"shared-{n}", "Takes notes", [note]) for n in range(10)]
    if shape == "ten workers of one agent":
        workers = [Worker(mailboxes, agent, concurrency=4) for agent in agents]
    else:
        workers = [Worker(mailboxes, agents, concurrency=40)]
    runs = [asyncio.create_task(worker.run()) for worker in workers]
    try:

        def settled() -> bool:
            return all(w.ready for w in workers) or any(run.done() for run in runs)

        await eventually(settled, within=60)
        died = [repr(run.exception()) for run in runs if run.done()]
        assert not died, f"{len(died)} of {len(runs)} workers died at set-up: {died[0]}"

        handles = []
        for agent in agents:
            turns = [Turn(note, args=[f"{agent.name}/{n}"]) for n in range(30)]
            handles += await mailboxes.put_many(agent.name, turns)
        async with asyncio.timeout(60):
            results = await asyncio.gather(*(h.result() for h in handles))
        expected = [[f"{a.name}/{n}", str(len(f"{a.name}/{n}"))] for a in agents for n in range(30)]
        assert results == expected  # 300 of 300
        assert not any(run.done() for run in runs)
    finally:
        for worker in workers:
            worker.stop()
        await asyncio.gather(*runs, return_exceptions=True)


@pytest.mark.slow
async def test_a_worker_outlives_a_cluster_that_is_down_and_serves_again_once_it_is_up(
    note: Tool,
) -> None:
    """A cluster that lost a primary (no replica to promote, here) answers every command
    with CLUSTERDOWN until the primary is back. redis-py raises ClusterDownError for it —
    a ResponseError too — and a worker must take it for a lost connection and carry on,
    not stop (both workers of the failover test died of it at set-up)."""
    require("redis-server", "redis-cli")
    with LocalCluster(replicas=0, node_timeout=0.5) as cluster:
        async with Mailboxes(cluster.url) as mailboxes, Serving() as serving:
            node = (await shards(mailboxes, ["keeper"]))["keeper"]
            victim = next(p for p in cluster.primaries() if f"127.0.0.1:{p.port}" != node)
            worker = await serving.start(Worker(mailboxes, Agent("keeper", "Keeps", [note])))
            running = serving.runs[-1][1]
            process = victim.process
            assert process is not None
            process.send_signal(signal.SIGKILL)
            process.wait()
            victim.process = None

            alive = next(p for p in cluster.primaries() if f"127.0.0.1:{p.port}" == node)
            await eventually(lambda: _cluster_state(alive.port) == "fail", within=30)
            failures = worker.counters.connection_failures
            # Every step of the worker now meets CLUSTERDOWN: it backs off, twice, or stops.
            await eventually(
                lambda: worker.counters.connection_failures >= failures + 2 or running.done(),
                within=30,
            )
            assert not running.done(), f"the worker stopped: {running.exception()!r}"

            victim.start()  # back with its slots (from its nodes.conf): the cluster is up

            async def served() -> bool:
                try:
                    handle = await mailboxes.put("keeper", Turn(note, args=["again"]))
                except MailboxError:
                    return False  # not up yet
                async with asyncio.timeout(30):
                    return bool(await handle.result() == ["again", "5"])

            await eventually(served, within=60)
            assert not running.done()


@pytest.mark.slow
async def test_a_waiting_callers_check_on_a_cluster_that_is_down_backs_off_without_an_error(
    note: Tool, caplog: pytest.LogCaptureFixture
) -> None:
    """CLUSTERDOWN is a lost connection for the reply reader's checks too: no ERROR
    (they are not "failed checks" of a bad key), a back-off, and a check again at once
    when Redis answers — not only one interval later."""
    require("redis-server", "redis-cli")
    with LocalCluster(replicas=0, node_timeout=0.5) as cluster:
        async with Mailboxes(cluster.url, reply_check_interval=0.1) as mailboxes:
            node = (await shards(mailboxes, ["nobody"]))["nobody"]
            victim = next(p for p in cluster.primaries() if f"127.0.0.1:{p.port}" != node)
            alive = next(p for p in cluster.primaries() if f"127.0.0.1:{p.port}" == node)
            handle = await mailboxes.put("nobody", Turn(note, args=["x"]))  # nobody serves it
            waiting = asyncio.create_task(handle.result())
            await eventually(lambda: mailboxes.replies.checks >= 1)
            process = victim.process
            assert process is not None
            process.send_signal(signal.SIGKILL)
            process.wait()
            victim.process = None
            await eventually(lambda: _cluster_state(alive.port) == "fail", within=30)
            checks = mailboxes.replies.checks

            await eventually(lambda: mailboxes.replies.checks >= checks + 2, within=30)
            # Backed off as a lost connection (the first error the reader meets is the
            # killed node's refusal or the cluster's CLUSTERDOWN: whichever comes
            # first opens the one outage), never logged as an error.
            assert "reading replies failed (" in caplog.text
            assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
            assert not waiting.done()  # the turn is still queued: it waits on
            waiting.cancel()


def _cluster_state(port: int) -> str:
    """What the node on ``port`` says of the cluster: "ok" or "fail"."""
    with SyncRedis(port=port, decode_responses=True) as client:
        return str(client.cluster("INFO")["cluster_state"])
