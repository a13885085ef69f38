"""The poison-entry soak: good turns mixed with every malformed entry we know of.

Two real worker processes serve the agent ``soak`` while a producer, for a given
time, puts good turns (with ``Mailboxes.put_many``) and writes poison entries raw,
as bytes, next to them: bytes that are not UTF-8 in a field's name or value, JSON
nested too deep to parse, a reply key holding a hash or a string, a huge field, no
``turn`` field, garbage, the wrong shape, an unknown tool. At the end it checks, from
Redis itself, that

* every good turn has exactly one outcome in its caller's reply stream;
* every poison entry is in the dead-letter stream, with the reason expected for it,
  and nothing else is;
* the mailbox is empty, and both workers are still the processes it started.

Run it from the repository root (counts are printed as one JSON object; the exit
status is 1 when a check fails)::

    uv run python -m tests.redis.poison_soak --seconds 60

``tests/redis/test_poison_soak.py`` runs it for a few seconds. The same file is the
worker process (``--worker URL NAME``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from redis.asyncio import Redis

from pygents import Agent, DecoratedTool, Turn, tool
from pygents.redis import Mailboxes, RedisServer, Worker
from pygents.redis._producer.reading import dead_letter

AGENT = "soak"
BAD_HASH = "soak:reply-is-a-hash"
BAD_STRING = "soak:reply-is-a-string"
GOOD_PER_POISON = 2
DEPTH_BOUND = 300  # the producer waits while the mailbox holds more unfinished turns
REPLY_MAXLEN = 10_000_000  # entries: every outcome stays, for the check to count
SETTLE = 30.0  # seconds allowed for the workers to catch up, while and after producing


SoakTool = DecoratedTool[..., Any]


def soak_tool() -> SoakTool:
    """The tool of the soak's good turns (defined per process, not at import: a test
    session forgets the tools each test defines)."""

    @tool()
    async def soak_count(n: int) -> int:
        """Returns its argument."""
        return n

    return soak_count


# -- the poison ---------------------------------------------------------------------


def _payload(reply: str | None, turn: dict[str, Any]) -> bytes:
    return json.dumps({"reply": reply, "turn": turn}).encode()


def poisons(good: SoakTool, round_no: int) -> list[tuple[str, dict[bytes, bytes]]]:
    """The malformed entries of one round: (reason expected in the dead letter, fields)."""
    turn = Turn(good, args=[0]).to_dict()
    unknown = dict(turn, tool_name="no_such_tool")
    deep = dict(turn, args=[json.loads("[" * 500 + "]" * 500)])
    found = [
        ("not UTF-8", {b"turn": b'{"reply": null, "turn": "\xff\xfe\xfd"}'}),
        ("not UTF-8", {b"tu\xc3\x28rn": _payload(None, turn)}),
        ("not UTF-8", {b"turn": _payload(None, turn), b"x": b"\x80"}),
        # Deeper than the parser's recursion limit (1,000 by default); small enough that
        # a long soak's dead letters stay small.
        ("nested too deeply", {b"turn": b"[" * 3_000}),
        ("nested too deeply", {b"turn": b'{"reply": null, "turn": ' + b'{"a": ' * 2_000}),
        ("deeper than 100 levels", {b"turn": _payload(None, deep)}),
        # Good turns that run, but whose caller's reply key is not a stream.
        ("is a hash, not a stream", {b"turn": _payload(BAD_HASH, turn)}),
        ("is a string, not a stream", {b"turn": _payload(BAD_STRING, turn)}),
        ("no 'turn' field", {b"junk": b"1"}),
        ("not JSON", {b"turn": b"{oops"}),
        ("not JSON", {b"turn": b""}),
        ("wrong shape", {b"turn": b"[1, 2, 3]"}),
        ("unknown tool", {b"turn": json.dumps({"reply": None, "turn": unknown}).encode()}),
    ]
    if round_no % 100 == 0:  # a huge field now and then (a megabyte of garbage)
        found.append(("not JSON", {b"turn": b"x" * 1_000_000}))
    return found


# -- the worker process -------------------------------------------------------------


async def serve(url: str, name: str) -> None:
    # Workers trim reply streams to their own reply_maxlen: long enough here for the
    # check to find every outcome of the soak.
    async with Mailboxes(url, reply_maxlen=REPLY_MAXLEN) as mailboxes:
        agent = Agent(AGENT, "Takes the soak's turns", [soak_tool()])
        worker = Worker(
            mailboxes, agent, name=name, concurrency=8, visibility_timeout=2.0, max_deliveries=3
        )
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
        await worker.run()


# -- the producer and the checks -----------------------------------------------------


@dataclass
class SoakResult:
    seconds: float
    good_put: int = 0
    good_outcomes: int = 0  # distinct good turns with an outcome
    duplicate_outcomes: int = 0  # outcomes beyond the first, per turn
    good_failed: int = 0  # outcomes that are not a completed turn
    poison_put: int = 0
    dead_letters: int = 0
    poison_dead_lettered: int = 0  # with the reason expected for it
    dead_lettered_by_reason: dict[str, int] = field(default_factory=dict)
    wrong_reasons: list[str] = field(default_factory=list)
    unexpected_dead_letters: int = 0
    left_in_mailbox: int = 0
    stalled: bool = False  # the workers stopped taking turns (the soak gave up waiting)
    workers_died: int = 0
    worker_tracebacks: int = 0  # in the workers' logs (a failure they survived, or not)
    worker_exit_codes: list[int | None] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.good_outcomes == self.good_put
            and self.duplicate_outcomes == 0
            and self.good_failed == 0
            and self.poison_dead_lettered == self.poison_put == self.dead_letters
            and not self.wrong_reasons
            and self.unexpected_dead_letters == 0
            and self.left_in_mailbox == 0
            and not self.stalled
            and self.workers_died == 0
            and self.worker_tracebacks == 0
            and self.worker_exit_codes == [0] * len(self.worker_exit_codes)
        )


def _spawn(url: str, name: str, logs: Path) -> subprocess.Popen[bytes]:
    with (logs / f"{name}.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", url, name],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


async def _until(check: Any, within: float) -> bool:
    """Poll ``check`` until it is truthy (then true), for ``within`` seconds at most."""
    try:
        async with asyncio.timeout(within):
            while True:
                if await check():
                    return True
                await asyncio.sleep(0.05)
    except TimeoutError:
        return False


async def soak(seconds: float, workers: int = 2, logs: Path | None = None) -> SoakResult:
    """Run the soak on a fresh ``redis-server``; see the module docstring."""
    result = SoakResult(seconds)
    with tempfile.TemporaryDirectory(prefix="pygents-soak-") as scratch:
        where = logs or Path(scratch)
        with RedisServer(Path(scratch)) as server:
            procs = [_spawn(server.url, f"soak-{i}", where) for i in range(workers)]
            try:
                await _produce_and_check(server.url, seconds, procs, result)
            finally:
                for proc in procs:
                    if proc.poll() is None:
                        proc.send_signal(signal.SIGTERM)
                for proc in procs:
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                result.worker_exit_codes = [proc.returncode for proc in procs]
                result.worker_tracebacks = sum(
                    log.read_text(errors="replace").count("Traceback")
                    for log in where.glob("soak-*.log")
                )
    return result


async def _produce_and_check(
    url: str, seconds: float, procs: list[subprocess.Popen[bytes]], result: SoakResult
) -> None:
    async with Mailboxes(url, reply_maxlen=REPLY_MAXLEN) as mailboxes:
        keys = mailboxes.keys(AGENT)
        raw = Redis.from_url(url)  # writes bytes as they are
        try:
            await raw.hset(BAD_HASH, "x", "1")
            await raw.set(BAD_STRING, "x")
            if not await _until(lambda: _live(mailboxes, len(procs)), 60):
                raise RuntimeError("the worker processes did not start; see their logs")
            expected: dict[str, str] = {}
            good: set[str] = set()
            good_tool = soak_tool()
            deadline = time.monotonic() + seconds
            round_no = 0
            while time.monotonic() < deadline:
                for n, (reason, fields) in enumerate(poisons(good_tool, round_no)):
                    handles = await mailboxes.put_many(
                        AGENT, [Turn(good_tool, args=[n]) for _ in range(GOOD_PER_POISON)]
                    )
                    good.update(h.turn_uuid for h in handles)
                    message_id = await raw.xadd(keys.mailbox, fields)  # type: ignore[arg-type]
                    text = message_id.decode() if isinstance(message_id, bytes) else message_id
                    expected[text] = reason
                round_no += 1
                if not await _until(lambda: _shallow(mailboxes), SETTLE):
                    break
            result.good_put, result.poison_put = len(good), len(expected)
            result.stalled = not await _until(lambda: _drained(mailboxes), SETTLE)
            result.workers_died = sum(proc.poll() is not None for proc in procs)
        finally:
            await raw.aclose()
        stats = await mailboxes.stats(AGENT)
        result.left_in_mailbox = stats.depth + stats.pending
        await _count_outcomes(mailboxes, good, result)
        await _count_dead_letters(mailboxes, expected, result)


async def _live(mailboxes: Mailboxes, count: int) -> bool:
    return (await mailboxes.stats(AGENT)).workers == count


async def _shallow(mailboxes: Mailboxes) -> bool:
    return (await mailboxes.stats(AGENT)).depth <= DEPTH_BOUND


async def _drained(mailboxes: Mailboxes) -> bool:
    stats = await mailboxes.stats(AGENT)
    return stats.depth == 0 and stats.pending == 0


async def _count_outcomes(mailboxes: Mailboxes, good: set[str], result: SoakResult) -> None:
    """Outcomes per good turn, read from the reply stream itself."""
    outcomes: Counter[str] = Counter()
    async for _, fields in _entries(mailboxes, mailboxes.replies.key):
        for turn_uuid, kind, _, _, outcome in json.loads(fields["r"]):
            if kind == "o" and turn_uuid in good:
                outcomes[turn_uuid] += 1
                result.good_failed += outcome.get("stop_reason") != "completed"
    result.good_outcomes = len(outcomes)
    result.duplicate_outcomes = sum(n - 1 for n in outcomes.values())


async def _count_dead_letters(
    mailboxes: Mailboxes, expected: dict[str, str], result: SoakResult
) -> None:
    letters = (
        dead_letter(AGENT, entry_id, fields)
        async for entry_id, fields in _entries(mailboxes, mailboxes.keys(AGENT).dead)
    )
    async for letter in letters:
        result.dead_letters += 1
        reason = expected.get(letter.message_id)
        if reason is None:
            result.unexpected_dead_letters += 1
        elif reason in letter.reason:
            result.poison_dead_lettered += 1
            by_reason = result.dead_lettered_by_reason
            by_reason[reason] = by_reason.get(reason, 0) + 1
        elif len(result.wrong_reasons) < 10:
            result.wrong_reasons.append(f"expected {reason!r}, got {letter.reason[:200]!r}")


async def _entries(mailboxes: Mailboxes, key: str) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """Every entry of a stream, a page at a time (dead letters can be big)."""
    start = "-"
    while True:
        page = cast(
            list[tuple[str, dict[str, str]]],
            await mailboxes.client.xrange(key, min=start, count=200),  # decoded: text
        )
        for entry in page:
            yield entry
        if not page or len(page) < 200:
            return
        start = f"({page[-1][0]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker", nargs=2, metavar=("URL", "NAME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        asyncio.run(serve(*args.worker))
        return 0
    result = asyncio.run(soak(args.seconds, args.workers))
    print(json.dumps(dict(asdict(result), ok=result.ok), indent=2))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
