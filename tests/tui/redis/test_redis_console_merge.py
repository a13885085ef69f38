"""Which OTLP rows a Redis mailbox merges with: only those its own workers send. A
sender that merely names its agent like a mailbox (from another service, another
instance of the worker's service, or calling itself ``redis``) keeps a row of its
own and never changes the mailbox's: Redis is the source of truth for what it
reports (pause, depth, workers, control). A real worker process traced over OTLP
merges with its mailbox, and its row shows Redis's pause over what it sends."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from otlp_requests import Event, logs_batch
from redis_console import MakeConsole

from pygents import Turn, tool
from pygents.redis import Mailboxes, RedisServer
from pygents.testing import isolated_registries
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.redis.source import RedisSource
from pygents_tui.listen import Receiver
from pygents_tui.listen.decode import Batch

WORKER = "box-4242-abc123"
WALL = 1_700_000_000 * 10**9
TRACED_WORKER = Path(__file__).with_name("traced_worker.py")

with isolated_registries():

    @tool()
    async def work(n: int) -> int:
        """Stands for the worker's tool."""
        return n


def sent(agent_id: str, state: str, depth: int, service: str, instance: str | None) -> Batch:
    """A live snapshot of agent ``billing`` (id ``agent_id``) from ``service``/``instance``,
    saying it is ``state`` with ``depth`` turns waiting."""
    attributes = {
        "gen_ai.agent.name": "billing",
        "gen_ai.agent.id": agent_id,
        "pygents.agent.state": state,
        "pygents.agent.queue.depth": depth,
    }
    return logs_batch([Event("pygents.agent.snapshot", attributes, WALL)], service, instance)


async def paused_billing(mailboxes: Mailboxes) -> None:
    """``billing``: four turns, one delivered (three wait), paused, and one live worker
    that says it is ``billing-svc``/``w-1`` in its telemetry."""
    client, keys = mailboxes.client, mailboxes.keys("billing")
    await mailboxes.put_many("billing", [Turn(work, args=[n]) for n in range(4)], reply=False)
    await client.xgroup_create(keys.mailbox, "pygents", id="0")
    await client.xreadgroup("pygents", WORKER, {keys.mailbox: ">"}, count=1)
    await client.zadd(keys.workers, {WORKER: int(time.time() * 1000) + 60_000})
    await client.hset(keys.control, f"identity:{WORKER}", json.dumps(["billing-svc", "w-1"]))
    await mailboxes.pause("billing")


async def test_a_sender_naming_its_agent_like_a_mailbox_gets_its_own_row_and_changes_nothing(
    console: MakeConsole, redis_server: RedisServer
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        await paused_billing(mailboxes)
    shown = console(control=True)
    fleet, source = shown.fleet, shown.source
    hostile = [
        ("billing-prod", "evil"),  # another service
        ("billing-svc", "w-2"),  # the worker's service, not its instance
        ("redis", None),  # the service the mailboxes' own rows are under
    ]
    for service, instance in hostile:
        fleet.ingest(sent("billing", "running", 2, service, instance))
    fleet.store.drain()
    assert await source.refresh()
    for service, instance in hostile:  # and again after the survey: Redis still wins
        fleet.ingest(sent("billing", "running", 2, service, instance))
    fleet.store.drain()

    rows = {row.label: row for row in fleet.store.agent_rows()}
    assert len(rows) == 4
    mailbox = rows.pop("redis/billing")
    assert (mailbox.state, mailbox.queue_depth) == ("paused", 3)
    stats = fleet.store.mailboxes()[mailbox.key]
    assert (stats.depth, stats.pending, stats.workers) == (4, 1, 1)
    assert fleet.store.sources.of(mailbox.key).offers("pause")
    assert "Resume mailbox billing?" in (source.act("pause", mailbox.key).text or "")
    for row in rows.values():
        assert (row.name, row.state, row.queue_depth) == ("billing", "running", 2)
        assert not row.label.startswith("redis/")
        assert row.key not in fleet.store.mailboxes()
        assert source.mailbox(row.key) is None
        assert not fleet.store.sources.of(row.key).offers("pause")
        assert not fleet.store.sources.of(row.key).offers("dead_letters")
    async with Mailboxes(redis_server.url) as mailboxes:
        billing = (await mailboxes.survey(["billing"]))["billing"]
    assert billing.paused
    assert billing.stats.depth == 4


async def test_the_worker_itself_merges_and_its_records_never_override_redis(
    console: MakeConsole, redis_server: RedisServer
) -> None:
    async with Mailboxes(redis_server.url) as mailboxes:
        await paused_billing(mailboxes)
    shown = console(control=True)
    fleet, source = shown.fleet, shown.source
    fleet.ingest(sent("billing", "running", 7, "billing-svc", "w-1"))
    fleet.store.drain()
    assert await source.refresh()
    fleet.ingest(sent("billing", "running", 9, "billing-svc", "w-1"))
    fleet.store.drain()

    (row,) = fleet.store.agent_rows()  # the mailbox's own row went: the worker's serves it
    assert row.label.startswith("billing-svc@")
    assert (row.state, row.queue_depth) == ("paused", 3)
    assert fleet.store.mailboxes()[row.key].workers == 1
    assert fleet.store.sources.of(row.key).offers("pause")

    async with Mailboxes(redis_server.url) as mailboxes:
        await mailboxes.resume("billing")
    assert await source.refresh()
    assert (row.state, row.queue_depth) == ("running", 3)  # its own phase again


def start_traced_worker(url: str, endpoint: str, logs: Path) -> subprocess.Popen[bytes]:
    """``traced_worker.py`` serving ``desk`` at ``url`` as ``traced-1``, exporting live
    records over OTLP/HTTP to ``endpoint`` (a snapshot every 0.2 s); its output in
    ``logs``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYGENTS_"))}
    env |= {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_INSTRUMENTATION_PYGENTS_LIVE": "true",
        "OTEL_INSTRUMENTATION_PYGENTS_SNAPSHOT_INTERVAL": "0.2",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_BLRP_SCHEDULE_DELAY": "100",
    }
    with (logs / "worker.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, str(TRACED_WORKER), url, "traced-1"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )


async def test_a_real_worker_process_traced_over_otlp_merges_with_its_mailbox(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    fleet = FleetModel(stale_after=3600.0)
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        source = RedisSource(fleet, redis_server.url, control=True, timeout=2.0)
        assert receiver.http_endpoint is not None
        process = start_traced_worker(redis_server.url, receiver.http_endpoint, tmp_path)
        try:

            async def merged() -> bool:
                fleet.store.drain()
                if not await source.refresh():
                    return False
                # the mailbox's own row until the worker's serves it
                rows = fleet.store.agent_rows()
                served = [row for row in rows if source.mailbox(row.key) is not None]
                return len(rows) == 1 and [row.service.name for row in served] == ["desk-svc"]

            async with asyncio.timeout(90):
                while not await merged():
                    await fleet.arrived.wait()  # the worker's next snapshot
            (row,) = fleet.store.agent_rows()
            assert row.name == "desk"
            assert row.label.startswith("desk-svc@")
            found = source.mailbox(row.key)
            assert found is not None
            (worker,) = found.workers
            assert (worker.name, worker.service) == ("traced-1", "desk-svc")
            assert worker.instance == row.service.instance

            async with Mailboxes(redis_server.url) as mailboxes:
                await mailboxes.pause("desk")
            async with asyncio.timeout(30):
                while row.state != "paused":
                    await fleet.arrived.wait()  # the worker's next snapshot
                    fleet.store.drain()
                    await source.refresh()
            fleet.arrived.clear()
            async with asyncio.timeout(30):
                await fleet.arrived.wait()  # and one more: it says idle, Redis says paused
            fleet.store.drain()
            assert row.state == "paused"
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            await source.close()
