"""Pause, resume and cancel fired at random while two worker processes deliver 2,000
turns: every turn ends exactly once at the producer (completed or cancelled), none
is lost, none runs twice (no worker dies here, so the at-least-once takeover never
applies), and the control hash is left bounded. Seeded, and paced by round trips
to Redis, not sleeps."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from desk_tools import DeskTools
from redis_helpers import eventually, processes, recorded_outcomes, spawn

from pygents import StopReason, Turn
from pygents.redis import Mailboxes, RedisServer, TurnHandle

TURNS = 2000
CHUNK = 200
ACTIONS_PER_CHUNK = 15


async def test_pause_resume_and_cancel_racing_deliveries_lose_and_repeat_nothing(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    rng = random.Random(22)
    fired: Counter[str] = Counter()
    asked: dict[str, str] = {}  # turn uuid -> what the first cancel answered
    with processes([spawn("control_worker.py", tmp_path, url, f"s-{n}", "8") for n in (1, 2)]):
        async with Mailboxes(url) as mailboxes:

            async def live() -> bool:
                return (await mailboxes.survey(["desk"]))["desk"].stats.workers == 2

            await eventually(live, within=60)
            handles: list[TurnHandle] = []
            for start in range(0, TURNS, CHUNK):
                chunk = [Turn(desk_tools.work, args=[n]) for n in range(start, start + CHUNK)]
                handles += await mailboxes.put_many("desk", chunk)
                for _ in range(ACTIONS_PER_CHUNK):
                    await _fire(mailboxes, rng, handles, fired, asked)
            await mailboxes.resume("desk")

            async def finished() -> bool:
                stats = (await mailboxes.survey(["desk"]))["desk"].stats
                return stats.depth == 0 and stats.pending == 0

            await eventually(finished, within=120)
            # Nobody waited on the handles: every outcome record is still on the reply
            # stream, duplicates included if there were any.
            found = await recorded_outcomes(mailboxes)
            recorded = Counter(o.turn_uuid for o in found)
            outcomes = {o.turn_uuid: o for o in found}
            effects = Counter(
                line.split()[0] for line in await mailboxes.client.lrange("sidefx", 0, -1)
            )
            assert await mailboxes.cancel("desk", handles[0].turn_uuid) == "not found"
            control = await mailboxes.client.hkeys(mailboxes.keys("desk").control)
            desk = (await mailboxes.survey(["desk"]))["desk"]

    assert fired["pause"]
    assert fired["resume"]
    assert fired["cancel"]
    assert set(recorded) == {h.turn_uuid for h in handles}  # none lost
    assert max(recorded.values()) == 1  # each outcome recorded exactly once
    reasons = Counter(o.stop_reason for o in outcomes.values())
    assert set(reasons) <= {StopReason.COMPLETED, StopReason.CANCELLED}
    assert reasons[StopReason.CANCELLED] > 0
    assert max(effects.values()) == 1  # nothing ran twice
    for n, handle in enumerate(handles):
        outcome = outcomes[handle.turn_uuid]
        if outcome.ok:
            assert outcome.output == n
            assert effects[handle.turn_uuid] == 1
        if asked.get(handle.turn_uuid) == "removed":
            assert outcome.stop_reason is StopReason.CANCELLED
            assert outcome.deliveries == 0
            assert effects[handle.turn_uuid] == 0
    assert (desk.stats.depth, desk.stats.pending, desk.stats.dead_letters) == (0, 0, 0)
    assert [key for key in control if key.startswith("cancel:")] == []  # pruned
    running = sum(o.stop_reason is StopReason.CANCELLED and o.deliveries > 0 for o in found)
    print(
        f"\ncontrol stress: {TURNS} turns, 2 workers, {dict(fired)} fired; "
        f"{reasons[StopReason.COMPLETED]} completed, {reasons[StopReason.CANCELLED]} "
        f"cancelled ({running} of them while running; first answers "
        f"{dict(Counter(asked.values()))}); 0 lost, 0 run twice"
    )


async def _fire(
    mailboxes: Mailboxes,
    rng: random.Random,
    handles: list[TurnHandle],
    fired: Counter[str],
    asked: dict[str, str],
) -> None:
    """One random action, then one survey (the pace: a round trip, and the survey
    must hold up under the churn)."""
    roll = rng.random()
    if roll < 0.25:
        await mailboxes.pause("desk")
        fired["pause"] += 1
    elif roll < 0.5:
        await mailboxes.resume("desk")
        fired["resume"] += 1
    else:
        # half of the time one of the long turns (see control_worker.py), often running
        handle = rng.choice(handles if rng.random() < 0.5 else handles[::25])
        found = await mailboxes.cancel("desk", handle.turn_uuid, message_id=handle.message_id)
        asked.setdefault(handle.turn_uuid, found)
        fired["cancel"] += 1
    await mailboxes.survey(["desk"])
