"""Commands as child processes: the one mechanism :mod:`.local` and :mod:`.sandbox` share.

A subclass says how to start a command (:meth:`ProcessRuntime._spawn`: the argv, the
environment, the user) and may add to how it is killed; this class does the rest:

* the command gets a new session (its own process group), stdin from ``/dev/null``,
  and stdout and stderr on one pipe this class made, so it can close its end itself
  when a process that left the group still holds the other;
* the output is read as it comes and capped (:class:`~.output.CappedText`);
* on timeout, cancellation or :meth:`~.base.RuntimeBase.close`, the process group is
  killed with ``SIGKILL``, and the subclass's :meth:`ProcessRuntime._kill` gets to kill
  what the group does not cover.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from .base import RuntimeBase
from .output import CappedText, CommandResult, check_command, check_timeout, supervise

__all__ = ["ProcessRuntime", "Spawn", "kill_group"]


def kill_group(pgid: int) -> None:
    """``SIGKILL`` every process in group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@dataclass(frozen=True)
class Spawn:
    """How to start one command: what to execute, with which environment, as whom."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    user: tuple[int, int] | None = None  # (uid, gid) to switch to before exec


class ProcessRuntime(RuntimeBase):
    """A runtime whose commands are child processes of this one (see the module doc)."""

    def __init__(self, root: Path | None, *, max_output: int, name: str, sandboxed: bool) -> None:
        super().__init__(root, max_output=max_output, name=name, sandboxed=sandboxed)
        self._groups: dict[int, int] = {}  # process group -> run number, while alive
        self._runs = itertools.count(1)

    def _spawn(self, command: str, run: int) -> Spawn:
        """How to start ``command``, the ``run``-th command of this runtime."""
        raise NotImplementedError

    async def _kill(self, pgid: int, run: int) -> None:
        """Kill everything run number ``run`` (process group ``pgid``) started."""
        kill_group(pgid)

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:  # noqa: ASYNC109
        """Run ``command`` with ``/bin/sh``; stdout and stderr are merged.

        After ``timeout`` seconds everything the command started is killed and the
        result has ``timed_out=True`` and ``exit_code=None``. If the caller is cancelled,
        the same happens before the cancellation propagates.
        """
        self._check_open()
        command = check_command(command)
        seconds = check_timeout(timeout)
        run = next(self._runs)
        spawn = self._spawn(command, run)
        read_fd, write_fd = os.pipe()
        try:
            uid, gid = spawn.user if spawn.user is not None else (None, None)
            proc = await asyncio.create_subprocess_exec(
                *spawn.argv,
                cwd=spawn.cwd,
                env=spawn.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                user=uid,
                group=gid,
                extra_groups=None if gid is None else [],
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self._groups[proc.pid] = run
        try:
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader()
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
            )
        except BaseException:
            await self._kill(proc.pid, run)
            raise
        collector = CappedText(self.max_output)

        async def finish() -> None:
            await collector.drain(reader)
            await proc.wait()

        async def leftovers() -> None:
            await proc.wait()  # killed: returns at once
            await collector.drain(reader)  # ends once every holder of the pipe is dead

        try:
            timed_out = await supervise(
                finish, timeout=seconds, kill=lambda: self._kill(proc.pid, run), leftovers=leftovers
            )
        finally:
            transport.close()  # even if a process we could not kill still holds the pipe
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
            self._groups.pop(pgid, None)
        except PermissionError:
            pass

    async def _stop(self) -> None:
        """Kill every process group a command started and that is still alive."""
        groups, self._groups = self._groups, {}
        for pgid, run in groups.items():
            await self._kill(pgid, run)
