"""Commands as plain local processes: not a sandbox, only used when chosen explicitly.

What :class:`LocalRuntime` isolates, and what it does not:

* each instance has its own directory; commands start there with ``HOME`` set to it and a
  small allow-listed environment (``PATH``, locale, ``TERM``, ``TZ``), so secrets in
  this process's environment are not *passed* to commands. They can still read them:
  ``/proc/$PPID/environ`` is this process's environment, and nothing stops a command
  from reading it, or any file this user can read, or reaching the network. Only the
  file tools are confined to the directory. :mod:`.sandbox` is the runtime that closes
  those holes;
* each command runs in a new session (its own process group) and carries a marker in
  its environment (``PYGENTS_RUNTIME_RUN``), which its children inherit. On timeout the
  group is killed, and so is every process still carrying that command's marker, which
  catches children that called ``setsid`` to leave the group; ``close()`` does the same
  for every command this runtime ran. A process that leaves the group *and* clears its
  environment (``env -i setsid ...``) escapes both: an unsandboxed process cannot be
  followed reliably, which is one more reason this runtime is not the default;
* output is read incrementally and capped at ``max_output`` characters.

Background processes outlive the command that started them (until ``close()``). They
should redirect their output (``server > server.log 2>&1 &``): the output pipe stays
open while any process holds it, so ``run`` would otherwise wait for them until the
timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
from pathlib import Path

from .base import ENV_ALLOWLIST
from .process import ProcessRuntime, Spawn, kill_group

__all__ = ["LOCAL_WARNING", "LocalRuntime"]

#: The variable that marks a command's processes, so they can be found after ``setsid``.
MARKER = "PYGENTS_RUNTIME_RUN"
#: What to print when commands are about to run unsandboxed.
LOCAL_WARNING = (
    "WARNING: commands run UNSANDBOXED on this machine (LocalRuntime): they can read "
    "every file and secret this user can, including this process's environment, and "
    "reach the network"
)


def _kill_marked(marker: bytes) -> None:
    """``SIGKILL`` every process whose environment holds the entry ``marker``.

    A pidfd is opened before the environment is read, so the signal goes to the process
    whose environment was read even if its pid is reused meanwhile.
    """
    me = os.getpid()
    entry = b"\0" + marker
    with contextlib.suppress(FileNotFoundError):  # no /proc: nothing to find
        for item in os.scandir("/proc"):
            if not item.name.isdigit() or int(item.name) == me:
                continue
            try:
                pidfd = os.pidfd_open(int(item.name))
            except OSError:
                continue
            try:
                with open(f"/proc/{item.name}/environ", "rb") as handle:
                    if entry in b"\0" + handle.read():
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except OSError:  # gone, or not ours to read
                pass
            finally:
                os.close(pidfd)


class LocalRuntime(ProcessRuntime):
    """Commands as local subprocesses in a private directory: **not a sandbox**.

    See the module docstring for what it does and does not isolate.
    :func:`~.runtime.default_runtime` only returns it when asked to, and says so loudly.
    """

    def __init__(
        self, root: Path | None = None, *, max_output: int = 16_000, name: str = "runtime"
    ) -> None:
        super().__init__(root, max_output=max_output, name=name, sandboxed=False)
        self._token = secrets.token_hex(8)
        self._env = {key: os.environ[key] for key in ENV_ALLOWLIST if key in os.environ}
        self._env.setdefault("PATH", os.defpath)
        self._env["HOME"] = str(self.root)
        self._env["PWD"] = str(self.root)
        self._ran = False

    def _spawn(self, command: str, run: int) -> Spawn:
        self._ran = True
        env = {**self._env, MARKER: f"{self._token}.{run}"}
        return Spawn(["/bin/sh", "-c", command], env, str(self.root))

    async def _kill(self, pgid: int, run: int) -> None:
        kill_group(pgid)
        marker = f"{MARKER}={self._token}.{run}\0".encode()
        await asyncio.to_thread(_kill_marked, marker)

    async def _stop(self) -> None:
        groups, self._groups = self._groups, {}
        for pgid in groups:
            kill_group(pgid)
        if self._ran:  # the processes of every command, by the runtime's part of the marker
            await asyncio.to_thread(_kill_marked, f"{MARKER}={self._token}.".encode())
