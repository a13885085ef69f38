"""A throwaway ``redis-server`` for tests, examples and benchmarks.

Runs the ``redis-server`` executable on a free loopback port, in a directory of its
own, with persistence off (``--save "" --appendonly no``): what it holds is gone when
it stops, which is what a test wants. Standard library only.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Final

__all__ = ["RedisServer"]

_STARTUP: Final = 10.0  # seconds a server may take to answer PING


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def answers_ping(port: int) -> bool:
    """``PING`` over a plain socket: true once the server accepts commands."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """A ``redis-server`` process on ``127.0.0.1``, without persistence.

    Use it as a context manager, or call [`start`][pygents.redis.RedisServer.start]
    and [`stop`][pygents.redis.RedisServer.stop] (a stopped server can be started
    again on the same port, empty). ``available()`` says whether the executable is
    on ``PATH``. ``extra_args`` go to ``redis-server`` after the defaults (and so
    override them), e.g. ``["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]``.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        port: int | None = None,
        executable: str = "redis-server",
        extra_args: Sequence[str] = (),
    ) -> None:
        self.executable = executable
        self.extra_args = tuple(extra_args)
        self.port = port or free_port()
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
        self.process = subprocess.Popen(
            [
                found,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.directory),
                "--logfile", str(self.directory / "redis.log"),
                *self.extra_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + _STARTUP
        while not answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = self.directory / "redis.log"
                tail = log.read_text()[-500:] if log.exists() else ""
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}: {tail}")
            time.sleep(0.01)

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

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
