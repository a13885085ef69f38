"""A throwaway local Redis Cluster: three primaries and three replicas on 127.0.0.1.

For the tests and the benchmarks that run the same workloads on a cluster as on one
server. Each node is a `RedisServer` (free port, no persistence) started with
``--cluster-enabled yes``; ``redis-cli --cluster create`` assigns the slots and the
replicas, and the cluster is ready once every node reports ``cluster_state:ok`` and
every replica has synced with its primary.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

from redis.client import Redis

from pygents.redis._server.redis_server import RedisServer, Throwaway

__all__ = ["LocalCluster"]

_READY: Final = 30.0  # seconds for the cluster to agree on its slots, at most


class LocalCluster(Throwaway):
    """``primaries`` × (1 + ``replicas``) ``redis-server`` cluster nodes, in a temporary
    directory; ``url`` is a ``redis+cluster://`` URL for `Mailboxes`."""

    def __init__(self, primaries: int = 3, replicas: int = 1, node_timeout: float = 2.0) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="pygents-cluster-")
        self.replicas = replicas
        self.nodes: list[RedisServer] = []
        for n in range(primaries * (1 + replicas)):
            # A directory each: a replica's first sync writes an RDB file there.
            directory = Path(self._dir.name) / f"node-{n}"
            directory.mkdir()
            # How long a node may not answer before it is failed (seconds): the
            # failover tests shorten it to see a promotion sooner.
            timeout = ("--cluster-node-timeout", str(round(node_timeout * 1000)))
            server = RedisServer(directory, cluster=True, extra_args=timeout)
            self.nodes.append(server)

    @staticmethod
    def available() -> bool:
        return RedisServer.available() and shutil.which("redis-cli") is not None

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def __repr__(self) -> str:
        return f"<LocalCluster {self.url} ({len(self.nodes)} nodes)>"

    def start(self) -> None:
        """Start the nodes, create the cluster, and return once every node agrees."""
        try:
            for node in self.nodes:
                node.start()
            subprocess.run(
                ["redis-cli", "--cluster", "create",
                 *(f"127.0.0.1:{n.port}" for n in self.nodes),
                 "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                check=True, capture_output=True, timeout=60,
            )  # fmt: skip
            deadline = time.monotonic() + _READY
            while not all(self._ok(node) for node in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self!r}: the nodes did not reach cluster_state:ok")
                time.sleep(0.05)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _ok(node: RedisServer) -> bool:
        """The node agrees the cluster is up and, if a replica, has synced with its
        primary (a replica that never synced may not take over from it)."""
        with Redis(port=node.port, decode_responses=True) as client:
            if "cluster_state:ok" not in str(client.execute_command("CLUSTER", "INFO")):
                return False
            replication: dict[str, object] = client.info("replication")
        return replication.get("role") != "slave" or replication.get("master_link_status") == "up"

    def primaries(self) -> list[RedisServer]:
        """The nodes that hold slots now."""
        found = []
        for node in self.nodes:
            if node.process is None:
                continue
            with Redis(port=node.port, decode_responses=True) as client:
                if client.execute_command("ROLE")[0] == "master":
                    found.append(node)
        return found

    def flush(self) -> None:
        """Empty every primary (the replicas follow): a fresh cluster for the next test."""
        for node in self.primaries():
            with Redis(port=node.port) as client:
                client.flushall()

    def close(self) -> None:
        """Stop every node and remove the directory."""
        for node in self.nodes:
            node.stop()
        self._dir.cleanup()
