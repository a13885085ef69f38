"""A result Redis will not take: its turn fails at once, once, with the reason.

Redis refuses an argument longer than its ``proto-max-bulk-len`` (here lowered to its
minimum, 1 MB), often by closing the connection under it. A finished turn whose
outcome could not be written used to be left unacknowledged: it ran again after each
visibility timeout, then was dead-lettered as if its workers had died. Now the worker
bounds what it writes (Redis' limit, read with ``CONFIG GET`` when allowed, and
``Worker(max_result_bytes=...)``), and a write Redis refuses anyway becomes the
turn's failure: written where the outcome would have gone, the turn settled once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis.exceptions import (
    BusyLoadingError,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis_helpers import Serving, eventually, running_server

from pygents import Agent, StopReason, Turn, tool
from pygents.redis import Mailboxes, Outcome, RedisServer, RemoteTurnError, Worker
from pygents.redis._server.local_cluster import LocalCluster
from pygents.redis._worker.refusals import refused, size_text
from redis import Redis
from system_programs import require

MiB = 1024 * 1024
LOWEST = "1mb"  # the lowest proto-max-bulk-len Redis accepts
DEFAULT = "512mb"


@dataclass
class Target:
    """A Redis (one server, or the session's cluster) and the ports of its nodes."""

    url: str
    ports: list[int]

    def limit(self, value: str) -> None:
        """``CONFIG SET proto-max-bulk-len`` on every node."""
        for port in self.ports:
            with Redis(port=port) as client:
                client.config_set("proto-max-bulk-len", value)

    def net_input(self) -> int:
        """Bytes Redis read from its clients so far, all nodes together."""
        total = 0
        for port in self.ports:
            with Redis(port=port) as client:
                total += int(client.info("stats")["total_net_input_bytes"])
        return total


@pytest.fixture
def target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Target]:
    """An empty Redis that takes arguments of 1 MB at most (``proto-max-bulk-len``).
    ``managed``: one without ``CONFIG``, as most managed Redis services are."""
    if backend == "managed":
        require("redis-server")
        args = ["--rename-command", "CONFIG", "", "--proto-max-bulk-len", LOWEST]
        with RedisServer(tmp_path, extra_args=args) as server:
            yield Target(server.url, [server.port])
        return
    if backend == "cluster":
        cluster: LocalCluster = request.getfixturevalue("local_cluster")
        cluster.flush()
        found = Target(cluster.url, [n.port for n in cluster.nodes if n.process is not None])
        found.limit(LOWEST)
        try:
            yield found
        finally:
            found.limit(DEFAULT)  # the session's cluster goes on serving other tests
        return
    with running_server(tmp_path) as server:
        found = Target(server.url, [server.port])
        found.limit(LOWEST)
        yield found


@pytest.fixture
async def mailboxes(target: Target) -> AsyncIterator[Mailboxes]:
    """The mailboxes on ``target`` (closed after the workers of ``serving`` stopped:
    ask for ``serving`` after this)."""
    async with Mailboxes(target.url) as found:
        yield found


class Printer:
    """Tools that make results of the size they are asked for, counting their runs."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()

    def agent(self) -> Agent:
        runs = self.runs

        @tool()
        async def page(size: int) -> str:
            """A text of ``size`` characters."""
            runs[f"page {size}"] += 1
            return "x" * size

        @tool()
        async def pages(sizes: list[int]) -> AsyncIterator[str]:
            """A text of each size in ``sizes``, one after the other."""
            runs[f"pages {sizes}"] += 1
            for size in sizes:
                yield "x" * size

        return Agent("printer", "Prints pages", [page, pages])


async def _settled(mailboxes: Mailboxes) -> bool:
    stats = await mailboxes.stats("printer")
    return (stats.depth, stats.pending) == (0, 0)


async def _outcomes(mailboxes: Mailboxes, printer: Printer, large: int) -> Outcome:
    """Put a turn of ``large`` characters among small ones; the large one's outcome,
    once every turn is settled (the small ones' results checked)."""
    before = await mailboxes.put("printer", Turn("page", args=[10]))
    handle = await mailboxes.put("printer", Turn("page", args=[large]))
    after = await mailboxes.put("printer", Turn("page", args=[20]))
    async with asyncio.timeout(20):
        assert [await before.result(), await after.result()] == ["x" * 10, "x" * 20]
        outcome = await handle.outcome()
        await eventually(lambda: _settled(mailboxes))
    return outcome


@pytest.mark.parametrize("backend", ["single", "cluster"], indirect=True)
async def test_a_result_larger_than_redis_takes_fails_its_turn_at_once_without_being_sent(
    target: Target, mailboxes: Mailboxes, serving: Serving
) -> None:
    printer = Printer()
    worker = await serving.start(
        Worker(mailboxes, printer.agent(), visibility_timeout=1.0, max_deliveries=2)
    )
    sent = target.net_input()
    outcome = await _outcomes(mailboxes, printer, 2 * MiB)

    assert outcome.stop_reason is StopReason.ERROR
    assert outcome.error_type == "ValueError"
    assert outcome.error == (
        "the result is 2.0 MiB; this worker writes at most 1 MiB (Redis' proto-max-bulk-len)"
    )
    assert (outcome.output, outcome.dead_letter, outcome.deliveries) == (None, False, 1)
    with pytest.raises(RemoteTurnError, match=r"ended with error: ValueError: the result is"):
        raise outcome.failure()
    assert printer.runs[f"page {2 * MiB}"] == 1
    assert await mailboxes.dead_letters("printer") == []
    assert worker.counters.dead_lettered == 0
    # Nothing of the 2 MiB went to Redis: only the turns and their short outcomes.
    assert target.net_input() - sent < MiB // 4


@pytest.mark.parametrize("backend", ["single", "cluster"], indirect=True)
async def test_a_result_redis_refuses_fails_its_turn_once_with_the_reason_redis_gave(
    target: Target, mailboxes: Mailboxes, serving: Serving, caplog: pytest.LogCaptureFixture
) -> None:
    printer = Printer()
    target.limit(DEFAULT)
    worker = await serving.start(
        Worker(mailboxes, printer.agent(), visibility_timeout=1.0, max_deliveries=2)
    )
    # Lowered once the worker read it: the worker sends the result, Redis refuses.
    target.limit(LOWEST)
    outcome = await _outcomes(mailboxes, printer, 2 * MiB)

    assert outcome.stop_reason is StopReason.ERROR
    # Redis' reply, when it could be read before Redis closed the connection; else
    # the limit, read again once Redis dropped the connection under the result.
    assert (outcome.error_type, outcome.error) in {
        (
            "ResponseError",
            "Redis refused to record the result (2.0 MiB): Protocol error: invalid bulk length",
        ),
        (
            "ValueError",
            "the result is 2.0 MiB; this worker writes at most 1 MiB (Redis' proto-max-bulk-len)",
        ),
    }, outcome
    assert (outcome.dead_letter, outcome.deliveries) == (False, 1)
    assert printer.runs[f"page {2 * MiB}"] == 1  # ran once: never again
    assert await mailboxes.dead_letters("printer") == []
    assert worker.counters.dead_lettered == 0
    assert not [r for r in caplog.records if r.exc_info]  # no traceback

    # The worker now knows the limit: the next one is not even sent.
    again = await mailboxes.put("printer", Turn("page", args=[3 * MiB]))
    async with asyncio.timeout(10):
        found = await again.outcome()
    assert found.error == (
        "the result is 3.0 MiB; this worker writes at most 1 MiB (Redis' proto-max-bulk-len)"
    )


@pytest.mark.parametrize("backend", ["single"], indirect=True)
async def test_a_streamed_value_redis_refuses_fails_its_turn_with_the_values_before_it(
    target: Target, mailboxes: Mailboxes, serving: Serving
) -> None:
    printer = Printer()
    target.limit(DEFAULT)
    await serving.start(Worker(mailboxes, printer.agent(), visibility_timeout=1.0))
    target.limit(LOWEST)
    sizes = [5, 2 * MiB, 7]
    handle = await mailboxes.put("printer", Turn("pages", args=[sizes]))
    async with asyncio.timeout(20):
        got = [value async for value in _until_failure(handle)]
        outcome = await handle.outcome()
        await eventually(lambda: _settled(mailboxes))

    # What came before the refused value, and nothing after it: not spliced.
    assert got == ["x" * 5]
    assert outcome.values == 1
    assert outcome.stop_reason is StopReason.ERROR
    assert outcome.error is not None
    assert "value #1" in outcome.error
    assert "2.0 MiB" in outcome.error
    assert printer.runs[f"pages {sizes}"] == 1
    assert await mailboxes.dead_letters("printer") == []


async def _until_failure(handle: object) -> AsyncIterator[str]:
    """The values of a streaming handle until it raises ``RemoteTurnError``."""
    try:
        async for value in handle:  # type: ignore[attr-defined]
            yield value
    except RemoteTurnError:
        return


@pytest.mark.parametrize("backend", ["single"], indirect=True)
async def test_a_streamed_value_larger_than_redis_takes_fails_its_turn_from_inside(
    target: Target, mailboxes: Mailboxes, serving: Serving
) -> None:
    printer = Printer()
    await serving.start(Worker(mailboxes, printer.agent()))
    sizes = [5, 2 * MiB, 7]
    handle = await mailboxes.put("printer", Turn("pages", args=[sizes]))
    async with asyncio.timeout(20):
        outcome = await handle.outcome()

    assert (outcome.stop_reason, outcome.error_type) == (StopReason.ERROR, "ValueError")
    assert outcome.error == (
        "value #1 is 2.0 MiB; this worker writes at most 1 MiB (Redis' proto-max-bulk-len)"
    )
    assert outcome.values == 1
    assert printer.runs[f"pages {sizes}"] == 1


@pytest.mark.parametrize("backend", ["managed"], indirect=True)
async def test_where_config_is_refused_results_are_bounded_by_max_result_bytes(
    target: Target, mailboxes: Mailboxes, serving: Serving, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "pygents.redis")
    printer = Printer()
    worker = Worker(mailboxes, printer.agent(), max_result_bytes=512 * 1024)
    await serving.start(worker)
    sent = target.net_input()
    outcome = await _outcomes(mailboxes, printer, 2 * MiB)

    assert outcome.error == (
        "the result is 2.0 MiB; this worker writes at most 512 KiB (Worker(max_result_bytes=...))"
    )
    assert target.net_input() - sent < MiB // 4
    said = [r.getMessage() for r in caplog.records if "proto-max-bulk-len" in r.getMessage()]
    assert said == [
        f"pygents.redis: worker {worker.name} cannot read Redis' proto-max-bulk-len "
        "(CONFIG GET was refused: unknown command 'CONFIG', with args beginning with: "
        "'GET' 'proto-max-bulk-len' ): it writes results of at most 512 KiB "
        "(Worker(max_result_bytes=...))"
    ]


@pytest.mark.parametrize("backend", ["managed"], indirect=True)
async def test_where_config_is_refused_a_result_redis_refuses_still_fails_once(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    printer = Printer()
    worker = await serving.start(
        Worker(mailboxes, printer.agent(), visibility_timeout=1.0, max_deliveries=2)
    )
    # Far above the limit: Redis closes the connection while it is still sent.
    outcome = await _outcomes(mailboxes, printer, 20 * MiB)

    assert outcome.stop_reason is StopReason.ERROR
    assert outcome.error is not None
    assert "the result (20.0 MiB)" in outcome.error
    assert outcome.error_type in {"ResponseError", "ConnectionError"}
    if outcome.error_type == "ConnectionError":
        assert outcome.error.startswith(
            "Redis closed the connection each time the result (20.0 MiB) was sent"
        )
        assert "set Worker(max_result_bytes=...) below it" in outcome.error
    assert printer.runs[f"page {20 * MiB}"] == 1
    assert await mailboxes.dead_letters("printer") == []
    assert worker.counters.dead_lettered == 0


@pytest.mark.parametrize("backend", ["single"], indirect=True)
async def test_a_reply_key_the_worker_may_not_write_costs_no_other_turn_its_outcome(
    target: Target, mailboxes: Mailboxes, serving: Serving
) -> None:
    printer = Printer()
    agent = printer.agent()  # its tools registered: the turns name them
    worker_user = [
        "on", ">worker-secret", "resetkeys", "~pygents:*", "resetchannels", "+@all",
    ]  # fmt: skip
    await mailboxes.client.execute_command("ACL", "SETUSER", "worker", *worker_user)
    # A hand-written entry whose reply key is outside the worker's keys, among good
    # turns: Redis refuses any RECORD call that names it (NOPERM), whole.
    stray = Turn("page", args=[30])
    envelope = {"reply": "elsewhere:replies", "turn": stray.to_dict()}
    keys = mailboxes.keys("printer")
    first = await mailboxes.put_many("printer", [Turn("page", args=[n]) for n in range(5)])
    stray_id = await mailboxes.client.xadd(keys.mailbox, {"turn": json.dumps(envelope)})
    last = await mailboxes.put_many("printer", [Turn("page", args=[n]) for n in range(5, 10)])
    # And one that cannot run (an unknown tool): dead-lettered, its caller untold.
    unknown = dict(Turn("page", args=[40]).to_dict(), tool_name="nope")
    envelope = {"reply": "elsewhere:replies", "turn": unknown}
    dead_id = await mailboxes.client.xadd(keys.mailbox, {"turn": json.dumps(envelope)})
    url = target.url.replace("redis://", "redis://worker:worker-secret@")
    async with Mailboxes(url) as theirs:
        worker = Worker(theirs, agent, concurrency=16, visibility_timeout=1.0)
        await serving.start(worker)
        async with asyncio.timeout(20):
            results = [await h.result() for h in (*first, *last)]
            await eventually(lambda: _settled(mailboxes))
        await serving.stop(worker)

    assert results == ["x" * n for n in range(10)]
    assert printer.runs == Counter({f"page {n}": 1 for n in [*range(10), 30]})
    assert [d.message_id for d in await mailboxes.dead_letters("printer")] == [dead_id]
    assert await mailboxes.client.xrange(keys.mailbox, stray_id, stray_id) == []
    assert await mailboxes.client.exists("elsewhere:replies") == 0


def test_only_a_reply_that_would_come_again_counts_as_a_refusal() -> None:
    assert refused(ResponseError("Protocol error: invalid bulk length"))
    assert refused(NoPermissionError("this user has no permissions to access one of the keys"))
    for again in (
        OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
        NoScriptError("No matching script."),
        ReadOnlyError("You can't write against a read only replica."),
        ResponseError("BUSY Redis is busy running a script."),
        ResponseError("NOREPLICAS Not enough good replicas to write."),
        BusyLoadingError("Redis is loading the dataset in memory"),
        RedisConnectionError("Connection reset by peer"),
        ValueError("not a reply at all"),
    ):
        assert not refused(again), again


def test_sizes_read_as_they_were_configured() -> None:
    assert [size_text(n) for n in (512, 1024, 1536, MiB, 2 * MiB + 300, 64 * MiB)] == [
        "512 bytes",
        "1 KiB",
        "1.5 KiB",
        "1 MiB",
        "2.0 MiB",
        "64 MiB",
    ]
