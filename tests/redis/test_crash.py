"""The crash test: three worker processes, 2,000 turns, one worker killed with SIGKILL.

Proves, with real processes and a real Redis, that

* every turn's outcome is recorded exactly once (none lost, none twice);
* side effects happen twice only for turns that were in flight in the killed
  worker (delivered to it and not acknowledged when it died), and those are counted;
* the dead-letter stream holds exactly the malformed entries the test planted.

Every wait polls Redis state with a bound; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from redis.asyncio import Redis
from redis_helpers import eventually, recorded_outcomes

from pygents import StopReason, Turn, tool
from pygents.redis import Mailboxes, RedisServer

HERE = Path(__file__).resolve().parent
TURNS = 2000
WORKERS = 3


def spawn(url: str, name: str, logs: Path) -> subprocess.Popen[bytes]:
    with (logs / f"{name}.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, str(HERE / "crash_worker.py"), url, name],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


async def test_a_worker_killed_mid_run_loses_nothing_and_duplicates_only_its_turns(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    @tool()
    async def post(amount: int) -> int:
        """The producer's view of the workers' tool (same name, same arguments)."""
        return amount * 2

    url = redis_server.url
    names = [f"crash-{i}" for i in range(WORKERS)]
    workers = [spawn(url, name, tmp_path) for name in names]
    victim, victim_name = workers[0], names[0]
    try:
        async with Mailboxes(url) as mailboxes:
            client, keys = mailboxes.client, mailboxes.keys("ledger")
            await eventually(lambda: _live(mailboxes, WORKERS), within=60)

            # 2,000 good turns in chunks, with malformed entries planted in between.
            poisons = {
                "not JSON": {"turn": "{oops"},
                "wrong shape": {"turn": json.dumps({"reply": None, "turn": {"uuid": "p"}})},
                "unknown tool": {
                    "turn": json.dumps(
                        {"reply": None, "turn": dict(Turn(post, args=[0]).to_dict(), tool_name="x")}
                    )
                },
                "no 'turn' field": {"junk": "1"},
            }
            planted: dict[str, str] = {}
            handles = []
            plan = iter(poisons.items())
            for start in range(0, TURNS, 250):
                chunk = [Turn(post, args=[n]) for n in range(start, start + 250)]
                handles += await mailboxes.put_many("ledger", chunk)
                reason, fields = next(plan, (None, None))
                if reason is not None and fields is not None:
                    planted[await client.xadd(keys.mailbox, fields)] = reason
            uuid_of = {h.message_id: h.turn_uuid for h in handles}

            # Kill one worker mid-run, once it has done some of the work.
            await eventually(lambda: _posted_by(client, victim.pid, 100), within=60)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            in_flight = {
                p["message_id"]
                for p in await client.xpending_range(
                    keys.mailbox, "pygents", "-", "+", 1000, consumername=victim_name
                )
            }
            remaining = await client.xlen(keys.mailbox)

            # Everything finishes: the survivors take over what the victim held.
            await eventually(lambda: _empty(mailboxes), within=120)

            outcomes = await recorded_outcomes(mailboxes)
            effects = [line.split() for line in await client.lrange("sidefx", 0, -1)]
            dead = await mailboxes.dead_letters("ledger")
    finally:
        for process in workers[1:]:
            process.send_signal(signal.SIGTERM)
        for process in workers:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    assert remaining > 0, "the victim was killed after all the work was done"
    assert in_flight, "the victim held no turn when it was killed"
    recorded = Counter(o.turn_uuid for o in outcomes)
    assert set(recorded) == set(uuid_of.values())  # 0 lost
    assert max(recorded.values()) == 1  # each outcome exactly once
    assert all(o.stop_reason is StopReason.COMPLETED and not o.dead_letter for o in outcomes)
    by_uuid = {o.turn_uuid: o for o in outcomes}
    assert sorted(by_uuid[u].output for u in uuid_of.values()) == [2 * n for n in range(TURNS)]

    ran = Counter(uuid for uuid, _, _ in effects)
    assert set(ran) == set(uuid_of.values())
    duplicated = {uuid for uuid, times in ran.items() if times > 1}
    held = {uuid_of[m] for m in in_flight if m in uuid_of}
    assert duplicated <= held, "a side effect ran twice for a turn the victim did not hold"
    assert max(ran.values()) <= 2
    for process, name in zip(workers[1:], names[1:], strict=True):
        assert process.returncode == 0, (tmp_path / f"{name}.log").read_text()[-2000:]
    for uuid in duplicated:
        first, second = [(pid, attempt) for u, pid, attempt in effects if u == uuid]
        assert (first, second[1]) == ((str(victim.pid), "1"), "2")
    redelivered = {o.turn_uuid for o in outcomes if o.deliveries > 1}
    assert redelivered == held
    assert all(by_uuid[u].worker != victim_name for u in held)

    assert sorted(d.message_id for d in dead) == sorted(planted)  # exactly the poisons
    for entry in dead:
        assert planted[entry.message_id] in entry.reason

    print(
        f"\ncrash test: {TURNS} turns, {len(planted)} poisoned, {WORKERS} workers; killed "
        f"{victim_name} holding {len(held)} turns; {len(duplicated)} side effects ran "
        f"twice (all among those {len(held)}); 0 lost; {len(dead)} dead letters"
    )


async def _live(mailboxes: Mailboxes, count: int) -> bool:
    return (await mailboxes.stats("ledger")).workers == count


async def _posted_by(client: Redis, pid: int, count: int) -> bool:
    done = await client.hget("posted", str(pid))
    return int(done or 0) >= count


async def _empty(mailboxes: Mailboxes) -> bool:
    stats = await mailboxes.stats("ledger")
    return stats.depth == 0 and stats.pending == 0
