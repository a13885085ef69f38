"""The assistant's isolated runtime: shell commands and file operations in one directory.

Each agent owns one :class:`Runtime`. Everything the model does to the outside world
goes through it: ``run`` executes a shell command, ``read_file`` / ``write_file`` /
``list_files`` touch files. All paths are relative to the runtime's working directory
(``root``); a path that resolves outside it (an absolute path elsewhere, ``..``, a
symlink pointing out) is refused with :class:`PathEscapeError`, whose message tells the
model how to fix the call.

:class:`Runtime` is a :class:`typing.Protocol`, so the rest of the assistant only
depends on these five methods and the ``root`` attribute. The only implementation here
is :class:`LocalRuntime`, which runs commands as local subprocesses in a private
directory (a fresh temporary directory by default). Docker is not available on the
machine this example was written on, so there is no container runtime yet; to add one,
write a class with the same methods (for instance ``DockerRuntime`` that starts a
container in ``__init__``/``__aenter__``, implements ``run`` with ``docker exec``, the
file operations with ``docker cp`` or a bind mount of ``root``, and removes the
container in ``close``) and pass it wherever a ``Runtime`` is accepted. Nothing else
needs to change.

What ``LocalRuntime`` isolates, and what it does not:

* each instance has its own directory; commands start there with ``HOME`` set to it and a
  small allow-listed environment (``PATH``, locale, ``TERM``, ``TZ``), so API keys and
  other secrets in the parent's environment are not visible to the commands;
* each command runs in a new session (its own process group); on timeout the whole group
  is killed, children included, and ``close()`` kills any background processes the
  commands left behind;
* output is read incrementally and capped at ``max_output`` characters; the rest is read
  and discarded, so a command printing gigabytes neither blocks nor fills memory;
* it is *not* a sandbox: commands run with the current user's permissions and can reach
  the rest of the file system by absolute path. Only the file operations are confined.

A command that starts a background process should redirect its output
(``server > server.log 2>&1 &``): the output pipe stays open while any process holds
it, so ``run`` would otherwise wait for the background process until the timeout.

``run`` takes a ``timeout`` argument (rather than relying on the caller's
``asyncio.timeout``) because expiry must kill the process group, not merely cancel the
waiting coroutine; cancelling ``run`` from outside kills the group too.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["CommandResult", "LocalRuntime", "PathEscapeError", "Runtime"]

#: Environment variables passed through from the parent process to commands.
_ENV_ALLOWLIST = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
#: How long to keep draining output after killing a timed-out command's process group.
_DRAIN_AFTER_KILL = 1.0
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class CommandResult:
    """What a command did: its exit code (``None`` if it was killed on timeout) and output.

    ``output`` is stdout and stderr interleaved, decoded as UTF-8 (undecodable bytes
    replaced), and at most ``max_output`` characters long; ``truncated`` says the rest
    was discarded.
    """

    command: str
    exit_code: int | None
    output: str
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when the command finished on its own with exit code 0."""
        return not self.timed_out and self.exit_code == 0

    def summary(self) -> str:
        """A compact text for the model: a status line, then the output."""
        if self.timed_out:
            status = "timed out; the command and its child processes were killed"
        else:
            status = f"exit code {self.exit_code}"
        if self.truncated:
            status += f"; output truncated to the first {len(self.output)} characters"
        if not self.output:
            return f"[{status}] (no output)"
        return f"[{status}]\n{self.output}"


class PathEscapeError(ValueError):
    """A file path that resolves outside the runtime's working directory."""


@runtime_checkable
class Runtime(Protocol):
    """An isolated place to run commands and edit files; see the module docstring."""

    root: Path

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:  # noqa: ASYNC109
        """Run ``command`` in a shell in ``root``; kill it after ``timeout`` seconds."""
        ...

    async def read_file(self, path: str) -> str:
        """Return the text of ``path`` (relative to ``root``)."""
        ...

    async def write_file(self, path: str, content: str) -> str:
        """Write ``content`` to ``path``, creating parent directories; return a confirmation."""
        ...

    async def list_files(self) -> list[str]:
        """Every file under ``root``, as sorted relative POSIX paths."""
        ...

    async def close(self) -> None:
        """Release everything the runtime holds (processes, temporary directory)."""
        ...


class _OutputCollector:
    """Decode a byte stream incrementally, keeping at most ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._size = 0
        self.truncated = False

    def _add(self, text: str) -> None:
        room = self._limit - self._size
        if len(text) > room:
            text = text[:room]
            self.truncated = True
        if text:
            self._parts.append(text)
            self._size += len(text)

    def feed(self, chunk: bytes) -> None:
        if self._size >= self._limit:
            self.truncated = True  # keep draining the pipe, discard the bytes
            return
        self._add(self._decoder.decode(chunk))

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.feed(chunk)

    def text(self) -> str:
        if self._size < self._limit:
            self._add(self._decoder.decode(b"", final=True))
        return "".join(self._parts)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class LocalRuntime:
    """A :class:`Runtime` running commands as local subprocesses in a private directory.

    ``root=None`` creates a fresh temporary directory, removed again by :meth:`close`;
    a given ``root`` is created if missing and left in place on close.
    """

    def __init__(
        self, root: Path | None = None, *, max_output: int = 16_000, name: str = "runtime"
    ) -> None:
        if max_output <= 0:
            raise ValueError(f"max_output must be positive, got {max_output}")
        if root is None:
            self.root = Path(tempfile.mkdtemp(prefix="pygents-assistant-")).resolve()
            self._owns_root = True
        else:
            root = Path(root).expanduser()
            root.mkdir(parents=True, exist_ok=True)
            self.root = root.resolve()
            self._owns_root = False
        self.max_output = max_output
        self.name = name
        self._closed = False
        self._groups: set[int] = set()  # process groups started by run()
        self._env = {key: os.environ[key] for key in _ENV_ALLOWLIST if key in os.environ}
        self._env.setdefault("PATH", os.defpath)
        self._env["HOME"] = str(self.root)
        self._env["PWD"] = str(self.root)

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<LocalRuntime {self.name!r} root={str(self.root)!r}{state}>"

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"runtime {self.name!r} is closed")

    # -- commands ---------------------------------------------------------------------

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:  # noqa: ASYNC109
        """Run ``command`` with ``/bin/sh`` in ``root``; stdout and stderr are merged.

        After ``timeout`` seconds the command's whole process group is killed and the
        result has ``timed_out=True`` and ``exit_code=None``. If the caller is cancelled,
        the process group is killed as well before the cancellation propagates.
        """
        self._check_open()
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=self.root,
            env=self._env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self._groups.add(proc.pid)
        stdout = proc.stdout
        assert stdout is not None
        collector = _OutputCollector(self.max_output)
        timed_out = False
        finished = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await collector.drain(stdout)
                    await proc.wait()
                finished = True
            except TimeoutError:
                timed_out = True
        finally:
            if not finished:  # timeout or cancellation: kill the group, then clean up
                await self._kill(proc, collector, stdout)
            self._forget_if_empty(proc.pid)
        return CommandResult(
            command=command,
            exit_code=None if timed_out else proc.returncode,
            output=collector.text(),
            timed_out=timed_out,
            truncated=collector.truncated,
        )

    def _forget_if_empty(self, pgid: int) -> None:
        """Stop tracking a process group with no processes left (nothing to kill later)."""
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            self._groups.discard(pgid)
        except PermissionError:
            pass

    async def _kill(
        self,
        proc: asyncio.subprocess.Process,
        collector: _OutputCollector,
        stdout: asyncio.StreamReader,
    ) -> None:
        _kill_group(proc.pid)
        # Read what is left in the pipe; it closes once every process holding it is dead.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_AFTER_KILL):
                await collector.drain(stdout)
        await proc.wait()  # the shell got SIGKILL: this returns promptly
        if not stdout.at_eof():
            # A process that left the group (setsid) still holds the pipe: close our end,
            # so that the transport does not outlive the call.
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()

    # -- files ------------------------------------------------------------------------

    def _resolve(self, path: str) -> Path:
        """``path`` (relative to ``root``) resolved, symlinks followed, checked inside root."""
        if not isinstance(path, str) or not path.strip():
            raise ValueError("path must be a non-empty string relative to the working directory")
        target = (self.root / path).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise PathEscapeError(
                f"{path!r} is outside the working directory {self.root}; use a path inside it"
            )
        return target

    def _relative(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix() or "."

    async def read_file(self, path: str) -> str:
        """Return the text of ``path``, decoded as UTF-8 (undecodable bytes replaced)."""
        self._check_open()
        target = self._resolve(path)
        if not target.exists():
            raise FileNotFoundError(
                f"{path!r} does not exist in the working directory {self.root}"
                " (list_files shows what is there)"
            )
        if target.is_dir():
            raise IsADirectoryError(f"{path!r} is a directory, not a file")
        data = await asyncio.to_thread(target.read_bytes)
        return data.decode("utf-8", errors="replace")

    async def write_file(self, path: str, content: str) -> str:
        """Write ``content`` (UTF-8) to ``path``, creating parent directories."""
        self._check_open()
        target = self._resolve(path)
        if target.is_dir():
            raise IsADirectoryError(f"{path!r} is a directory, not a file")

        def write() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")

        await asyncio.to_thread(write)
        return f"wrote {len(content)} characters to {self._relative(target)}"

    async def list_files(self) -> list[str]:
        """Every file under ``root`` (symlinked directories are not followed), sorted."""
        self._check_open()

        def walk() -> list[str]:
            files: list[str] = []
            for dirpath, _dirnames, filenames in os.walk(self.root):
                base = Path(dirpath)
                files.extend((base / name).relative_to(self.root).as_posix() for name in filenames)
            return sorted(files)

        return await asyncio.to_thread(walk)

    # -- lifecycle --------------------------------------------------------------------

    async def close(self) -> None:
        """Kill leftover background processes; remove the directory if this runtime made it.

        Safe to call more than once.
        """
        if self._closed:
            return
        self._closed = True
        for pgid in self._groups:
            _kill_group(pgid)
        self._groups.clear()
        if self._owns_root:
            await asyncio.to_thread(shutil.rmtree, self.root, True)

    async def __aenter__(self) -> LocalRuntime:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
