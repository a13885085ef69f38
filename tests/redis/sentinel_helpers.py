"""A primary, its replica and three sentinels on 127.0.0.1, for the failover tests.

``Replicated`` runs them on free ports in a directory of their own, without
persistence (as `RedisServer` does): the tests are about what replication keeps when
the primary dies, and an append-only file would only blur it. The killed primary is
started again, empty, as a replica of the new primary once the replica has been
promoted — as a supervisor would restart it. Only *after* the promotion: an empty
primary coming back before it would wipe its replica.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis_helpers import eventually

from pygents.redis import RedisServer
from pygents.redis._server.redis_server import answers_ping, free_port
from system_programs import require

SERVICE = "m"
REDIS_AWAY = (RedisConnectionError, RedisTimeoutError, OSError)


class Replicated:
    """A primary, one replica and (by default) three sentinels on 127.0.0.1 (see the
    module)."""

    def __init__(self, directory: Path, *, sentinels: int = 3) -> None:
        self.directory = directory
        # A replica syncs at once (the default waits 5 s for more replicas to join).
        now = ["--repl-diskless-sync-delay", "0"]
        self.primary = RedisServer(self._dir("primary"), extra_args=now)
        self.replica = RedisServer(self._dir("replica"), extra_args=now)
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        self.sentinels: list[subprocess.Popen[bytes]] = []

    def _dir(self, name: str) -> Path:
        found = self.directory / name
        found.mkdir(parents=True, exist_ok=True)
        return found

    @property
    def spec(self) -> str:
        nodes = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"sentinel://{nodes}/{SERVICE}"

    def start(self) -> None:
        self.primary.start()
        # Named now: a first start may move the primary to another port.
        self.replica.extra_args = (
            *self.replica.extra_args,
            "--replicaof",
            "127.0.0.1",
            str(self.primary.port),
        )
        self.replica.start()
        for index, port in enumerate(self.sentinel_ports):
            where = self._dir(f"sentinel-{index}")
            config = where / "sentinel.conf"
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {where}\nlogfile {where / 'sentinel.log'}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary.port} 2\n"
                # Quick, but not so quick that a busy machine's slow answer looks
                # like a dead primary (a second failover).
                f"sentinel down-after-milliseconds {SERVICE} 1000\n"
                f"sentinel failover-timeout {SERVICE} 3000\n"
            )
            self.sentinels.append(
                subprocess.Popen(
                    ["redis-sentinel", str(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 10
        while not all(answers_ping(port) for port in self.sentinel_ports):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the sentinels did not start; see {self.directory}")
            time.sleep(0.01)

    def close(self) -> None:
        for process in self.sentinels:
            if process.poll() is None:
                process.terminate()
        for process in self.sentinels:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.replica.close()
        self.primary.close()

    async def primary_port(self) -> int:
        """The primary's port as the sentinels say (the first one that answers)."""
        for port in self.sentinel_ports:
            client = Redis(host="127.0.0.1", port=port, decode_responses=True)
            try:
                found = await client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
                return int(found[1])
            except REDIS_AWAY:
                continue
            finally:
                await client.aclose()
        raise RuntimeError("no sentinel answers")

    async def _moved_from(self, port: int) -> bool:
        return await self.primary_port() != port

    async def wait_synced(self, within: float = 10.0) -> None:
        """Until the replica has finished its first sync and Sentinel knows it."""
        primary = Redis(port=self.primary.port, decode_responses=True)
        try:
            async with asyncio.timeout(within):
                while True:
                    info = await primary.info("replication")
                    online = info.get("slave0", {}).get("state") == "online"
                    if online and (not self.sentinel_ports or await self._sentinels_see_replica()):
                        return
                    await asyncio.sleep(0.05)
        finally:
            await primary.aclose()

    async def _sentinels_see_replica(self) -> bool:
        for port in self.sentinel_ports:
            client = Redis(host="127.0.0.1", port=port, decode_responses=True)
            try:
                replicas = await client.execute_command("SENTINEL", "REPLICAS", SERVICE)
                if not replicas:
                    return False
            finally:
                await client.aclose()
        return True

    async def kill_primary_and_fail_over(self, within: float = 20.0) -> float:
        """``kill -9`` the primary; wait until Sentinel promoted the replica, then start
        the old primary again (empty) for Sentinel to make it a replica. Seconds from
        the kill to the promotion."""
        old = self.primary.port
        process = self.primary.process
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
        self.primary.process = None
        killed = time.monotonic()
        await eventually(lambda: self._moved_from(old), within=within)
        promoted = time.monotonic() - killed
        # Now that it cannot come back as the primary, restart it as a replica of the
        # new one, as a supervisor would (Sentinel would make it one itself, but only
        # after some 8 s of seeing it claim to be a primary).
        new = await self.primary_port()
        self.primary.extra_args = (*self.primary.extra_args, "--replicaof", "127.0.0.1", str(new))
        self.primary.start()
        return promoted


@contextmanager
def replicated(tmp_path: Path, *, sentinels: int = 3) -> Iterator[Replicated]:
    """A running `Replicated` (``sentinels=0``: the primary and its replica alone),
    every process stopped after the block."""
    require("redis-server", *(["redis-sentinel"] if sentinels else []))
    found = Replicated(tmp_path / "redis", sentinels=sentinels)
    try:
        found.start()
        yield found
    finally:
        found.close()


# -- the load -------------------------------------------------------------------------
