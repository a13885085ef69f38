"""What one turn costs Redis, in commands (``INFO commandstats``).

The capacity page (docs/capacity.md) sizes deployments from these figures: a command
or round trip added to every turn would silently cut what one Redis can carry, so the
tests below fail on it. Measured on 5,000 turns put 100 at a time with one worker:
about 2.1 commands a turn — the put's ``XADD``, the outcome's ``XACK``, and a
fraction for every batched call (the put script's checks per 100 turns, one read,
one outcome script with one ``XDEL`` and one reply entry per batch, the producer's
reply reads). It was 3.1 while each outcome deleted its turn with an ``XDEL`` of its
own.
"""

from __future__ import annotations

from typing import Any

from redis_helpers import Serving

from pygents import Agent, Turn, tool
from pygents.redis import Mailboxes, Worker

N = 400
CHUNK = 100


async def _turns_through(mailboxes: Mailboxes, serving: Serving) -> dict[str, Any]:
    """``N`` turns put and their outcomes awaited, with one worker whose timed loops
    (statistics, control polling) are off: the commands this cost Redis, by name."""

    @tool()
    async def counted(x: int) -> int:
        """Returns its argument (a turn that costs nothing but its trip through Redis)."""
        return x

    agent = Agent("counted-agent", "Counts", [counted])
    await serving.start(Worker(mailboxes, agent, stats_interval=None, control_interval=None))
    warm_up = await mailboxes.put(agent.name, Turn(counted, args=[-1]))  # scripts loaded
    assert await warm_up.result() == -1
    await mailboxes.client.config_resetstat()
    handles = []
    for at in range(0, N, CHUNK):
        turns = [Turn(counted, args=[i]) for i in range(at, at + CHUNK)]
        handles += await mailboxes.put_many(agent.name, turns)
    assert [await h.result() for h in handles] == list(range(N))
    stats = await mailboxes.client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


async def test_a_turn_costs_redis_at_most_two_and_a_half_commands(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    calls = _without_resetstat(await _turns_through(mailboxes, serving))
    per_turn = sum(calls.values()) / N
    assert per_turn <= 2.5, f"{per_turn:.2f} commands a turn: {calls}"
    # Exactly one acknowledgement per turn; deletions by batch; one XADD per put
    # turn, plus one reply entry per batch of outcomes.
    assert calls["xack"] == N
    assert calls["xdel"] <= N // 8
    assert N <= calls["xadd"] <= N + N // 8
    assert await mailboxes.client.xlen(mailboxes.keys("counted-agent").mailbox) == 0


async def test_recording_outcomes_costs_no_script_exists_round_trip(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    calls = await _turns_through(mailboxes, serving)
    # A script queued in a redis-py pipeline asks SCRIPT EXISTS at every execute: one
    # more round trip per batch of outcomes (and per turn, one turn at a time).
    assert "script|exists" not in calls
    assert calls["evalsha"] >= N // CHUNK + 1  # the puts, and at least one outcome batch


def _without_resetstat(calls: dict[str, int]) -> dict[str, int]:
    return {name: count for name, count in calls.items() if not name.startswith("config")}


async def test_outcomes_are_still_recorded_after_redis_forgets_its_scripts(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def echoed(x: int) -> int:
        """Returns its argument."""
        return x

    agent = Agent("forgetful", "Echoes", [echoed])
    await serving.start(Worker(mailboxes, agent))
    assert await (await mailboxes.put(agent.name, Turn(echoed, args=[1]))).result() == 1
    await mailboxes.client.script_flush()  # as after a restart: EVALSHA finds no script
    assert await (await mailboxes.put(agent.name, Turn(echoed, args=[2]))).result() == 2
    stats = await mailboxes.client.info("commandstats")
    assert stats["cmdstat_script|load"]["calls"] >= 1  # the writer loaded it again


async def test_recorded_turns_leave_their_mailbox_and_their_last_errors_by_batch(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def kept(x: int) -> int:
        """Returns its argument."""
        return x

    agent = Agent("kept-agent", "Keeps", [kept])
    keys = mailboxes.keys(agent.name)
    handles = await mailboxes.put_many(agent.name, [Turn(kept, args=[i]) for i in range(50)])
    # As if an earlier delivery of every other turn had failed: the errors they left.
    left = {h.message_id: "an earlier delivery failed" for h in handles[::2]}
    await mailboxes.client.hset(keys.errors, mapping=left)  # type: ignore[arg-type]
    await mailboxes.client.hset(keys.errors, "0-1", "not a turn of this batch")
    await serving.start(Worker(mailboxes, agent))
    assert [await h.result() for h in handles] == list(range(50))
    assert await mailboxes.client.xlen(keys.mailbox) == 0
    assert await mailboxes.client.hgetall(keys.errors) == {"0-1": "not a turn of this batch"}
