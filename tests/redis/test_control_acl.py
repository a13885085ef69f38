"""The Redis ACL rules the guide gives for a dashboard (read-only: it can survey and
cannot act) and for a control user (it can act), checked on a real ``redis-server``.
Keep them in step with "Protecting control" in docs/guides/scaling-out.md."""

from __future__ import annotations

import asyncio

import pytest
from desk_tools import DeskTools
from redis.exceptions import NoPermissionError
from redis_helpers import Serving, eventually

from pygents import Agent, StopReason, Turn
from pygents.redis import Mailboxes, RedisServer, Worker

# What a client may send on connecting, besides its commands (redis-py also sends
# CLIENT SETINFO to Redis 7.2 and later, and goes on when that is refused).
CONNECT = ["+ping", "+hello"]
DASHBOARD = [
    "on", ">dashboard-secret", "resetkeys", "%R~pygents:*", "resetchannels",
    "-@all", "+@read", "+eval_ro", "+evalsha_ro", "+time", *CONNECT,
]  # fmt: skip
CONTROL = [
    "on", ">control-secret", "resetkeys", "~pygents:*", "resetchannels",
    "-@all", "+@read", "+eval", "+evalsha", "+eval_ro", "+evalsha_ro", "+time",
    "+hset", "+hdel", "+xadd", "+xack", "+xdel", "+pexpire", *CONNECT,
]  # fmt: skip


def _as(server: RedisServer, user: str, password: str) -> Mailboxes:
    return Mailboxes(f"redis://{user}:{password}@127.0.0.1:{server.port}/0")


async def test_the_dashboard_user_surveys_but_cannot_act_and_the_control_user_can(
    desk_tools: DeskTools, redis_server: RedisServer, mailboxes: Mailboxes, serving: Serving
) -> None:
    await mailboxes.client.execute_command("ACL", "SETUSER", "dashboard", *DASHBOARD)
    await mailboxes.client.execute_command("ACL", "SETUSER", "control", *CONTROL)
    worker = await serving.start(
        Worker(mailboxes, Agent("desk", "Works", [desk_tools.work]), control_interval=0.05)
    )
    async with asyncio.timeout(10):
        assert await (await mailboxes.put("desk", Turn(desk_tools.work, args=[1]))).result() == 1

    async with _as(redis_server, "dashboard", "dashboard-secret") as dashboard:
        desk = (await dashboard.survey())["desk"]
        assert desk.stats.workers == 1
        assert desk.malformed == 0
        for act in (
            dashboard.pause("desk"),
            dashboard.cancel("desk", "some-uuid"),
            dashboard.retry_dead_letter("desk", "1-0"),
            dashboard.drain_worker(worker.name),
        ):
            with pytest.raises(NoPermissionError):
                await act
        with pytest.raises(NoPermissionError):
            await dashboard.client.hset(mailboxes.keys("desk").control, "paused", "1")

    async with _as(redis_server, "control", "control-secret") as control:
        await control.pause("desk")

        async def applied() -> bool:
            return all(w.paused for w in (await control.survey(["desk"]))["desk"].workers)

        await eventually(applied)
        handle = await mailboxes.put("desk", Turn(desk_tools.work, args=[2]))
        assert await control.cancel("desk", handle.turn_uuid) == "removed"
        await control.resume("desk")
        async with asyncio.timeout(10):
            assert (await handle.outcome()).stop_reason is StopReason.CANCELLED
            assert (
                await (await mailboxes.put("desk", Turn(desk_tools.work, args=[3]))).result() == 3
            )
        assert await control.drain_worker(worker.name) == ["desk"]
        await eventually(lambda: not worker.ready or worker.controls.draining)
