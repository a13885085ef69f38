"""A throwaway ``redis-server`` for tests, examples and benchmarks.

Runs the ``redis-server`` executable on a free loopback port, in a directory of its
own, with persistence off (``--save "" --appendonly no``): what it holds is gone when
it stops, which is what a test wants. Standard library only.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Self

__all__ = ["RedisServer", "Throwaway"]

_STARTUP: Final = 10.0  # seconds a server may take to answer PING
_ATTEMPTS: Final = 5  # ports a first start tries when the one picked was taken meanwhile
_LOWEST: Final = 10000  # the lowest port picked outside the kernel's ephemeral range
_TAKEN: Final = "Address already in use"


def _ephemeral() -> tuple[int, int]:
    """The kernel's range for outgoing connections' ports (Linux), or the IANA one."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49152, 65535


def free_port() -> int:
    """A loopback port nothing listens on, picked *below* the ephemeral range.

    Why not ``bind(("127.0.0.1", 0))``: that port comes from the range the kernel
    also gives every outgoing connection, so between the pick and the server's own
    ``bind`` a client socket of the test suite can take it (a CI run lost a whole
    cluster to that). Below the range, only another deliberate ``bind`` competes,
    and `RedisServer.start` tries again on a fresh port if that happens.
    """
    low, _ = _ephemeral()
    for _ in range(100):
        port = random.randrange(_LOWEST, low) if low - _LOWEST > 1000 else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            found: int = sock.getsockname()[1]
            return found
    raise OSError("no free loopback port below the ephemeral range")


def answers_ping(port: int) -> bool:
    """``PING`` over a plain socket: true once the server accepts commands."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class Throwaway(ABC):
    """Redis started for a ``with`` block (a server, a cluster) and gone after it."""

    @abstractmethod
    def start(self) -> None:
        """Start it: ready for clients once this returns."""

    @abstractmethod
    def close(self) -> None:
        """Stop it and remove what it wrote."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class RedisServer(Throwaway):
    """A ``redis-server`` process on ``127.0.0.1``, without persistence.

    Use it as a context manager, or call [`start`][pygents.redis.RedisServer.start]
    and [`stop`][pygents.redis.RedisServer.stop] (a stopped server can be started
    again on the same port, empty). ``available()`` says whether the executable is
    on ``PATH``. ``extra_args`` go to ``redis-server`` after the defaults (and so
    override them), e.g. ``["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]``.
    ``cluster=True`` makes a cluster node: its own state file, and a cluster bus port
    of its own (the default, port + 10000, may be taken or past 65535).

    When the port is left to it and is taken by the time the server binds it, the
    first start tries again on a fresh port (a few times); a restart keeps its port,
    because others (replicas, cluster nodes, clients) know the server by it.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        port: int | None = None,
        executable: str = "redis-server",
        extra_args: Sequence[str] = (),
        cluster: bool = False,
    ) -> None:
        self.executable = executable
        self.extra_args = tuple(extra_args)
        self.port = port or free_port()
        self.cluster_port = free_port() if cluster else None
        self._may_move = port is None  # until the first start succeeds
        self._own_dir: tempfile.TemporaryDirectory[str] | None = None
        if directory is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="pygents-redis-")
            directory = self._own_dir.name
        self.directory = Path(directory)
        self.process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def available(executable: str = "redis-server") -> bool:
        return shutil.which(executable) is not None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __repr__(self) -> str:
        state = "running" if self.process is not None else "stopped"
        return f"<RedisServer {self.url} {state}>"

    def start(self) -> None:
        """Start the server and return once it answers ``PING``."""
        if self.process is not None:
            return
        found = shutil.which(self.executable)
        if found is None:
            raise FileNotFoundError(
                f"{self.executable!r} is not on PATH; install Redis (Debian/Ubuntu: "
                "apt-get install redis-server) or point Mailboxes at a running Redis"
            )
        for attempt in range(1, _ATTEMPTS + 1):
            failure = self._launch(found)
            if failure is None:
                self._may_move = False
                return
            if not (self._may_move and _TAKEN in failure and attempt < _ATTEMPTS):
                raise RuntimeError(f"redis-server did not start on port {self.port}: {failure}")
            self.port = free_port()
            if self.cluster_port is not None:
                self.cluster_port = free_port()

    def _launch(self, executable: str) -> str | None:
        """Run the server once: ``None`` once it answers, else the end of its log."""
        cluster = () if self.cluster_port is None else (
            "--cluster-enabled", "yes",
            "--cluster-port", str(self.cluster_port),
            "--cluster-config-file", "nodes.conf",
        )  # fmt: skip
        log = self.directory / "redis.log"
        start = log.stat().st_size if log.exists() else 0  # this run's lines only
        self.process = subprocess.Popen(
            [
                executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.directory),
                "--logfile", str(log),
                *cluster,
                *self.extra_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + _STARTUP
        while not answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_bytes()[start:][-500:] if log.exists() else b""
                self.stop()
                return tail.decode(errors="replace") or "(no log)"
            time.sleep(0.01)
        return None

    def stop(self) -> None:
        """Stop the server (everything it held is gone)."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self) -> None:
        """Stop the server and remove its directory if this object created it."""
        self.stop()
        if self._own_dir is not None:
            self._own_dir.cleanup()
            self._own_dir = None
