"""What every runtime has: a working directory, the file tools on it, a lifecycle.

:class:`RuntimeBase` owns the working directory (a fresh temporary one by default,
removed on :meth:`~RuntimeBase.close`), the confined file operations
(:class:`~.files.Workdir`, run in a worker thread so a slow disk never blocks the
event loop) and the closed state. Subclasses add ``run`` and what ``close`` must stop.

Sandboxed runtimes never run commands as root on the host: when this process is root,
commands run as the owner of the working directory, or as ``nobody`` (65534) when root
owns it, in which case the directory (and what is in it) is handed to ``nobody`` first.
The file tools create files as that user too, so commands can edit them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Self

from .files import Workdir

__all__ = ["ENV_ALLOWLIST", "NOBODY", "RuntimeBase", "sandbox_owner"]

#: Environment variables passed through from this process to commands (none is a secret).
ENV_ALLOWLIST = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
#: The host user (uid, gid) sandboxed commands run as when this process is root.
NOBODY = (65534, 65534)


def _unreachable(root: Path, uid: int, gid: int) -> Path | None:
    """The first directory above ``root`` that ``uid``/``gid`` may not enter, if any."""
    for parent in reversed(root.parents):
        info = os.stat(parent)
        if info.st_uid == uid:
            allowed = info.st_mode & stat.S_IXUSR
        elif info.st_gid == gid:
            allowed = info.st_mode & stat.S_IXGRP
        else:
            allowed = info.st_mode & stat.S_IXOTH
        if not allowed:
            return parent
    return None


def sandbox_owner(root: Path) -> tuple[int, int] | None:
    """The host user sandboxed commands in ``root`` run as; ``None``: this process's.

    Only when this process is root does the answer differ from "this user": then it is
    the owner of ``root``, or :data:`NOBODY`, to whom a root-owned ``root`` is given.
    That user must be able to reach ``root``: a :class:`PermissionError` says so if not.
    """
    if os.geteuid() != 0:
        return None
    info = os.stat(root)
    owner = (info.st_uid, info.st_gid) if info.st_uid != 0 else NOBODY
    blocked = _unreachable(root, *owner)
    if blocked is not None:
        raise PermissionError(
            f"sandboxed commands run as uid {owner[0]}, which cannot enter {blocked} "
            f"(mode {stat.S_IMODE(os.stat(blocked).st_mode):o}) to reach {root}: choose a "
            "working directory that user can reach, or none (a fresh one in /tmp)"
        )
    if info.st_uid == 0:
        for _top, dirs, files, fd in os.fwalk(root, follow_symlinks=False):
            os.fchown(fd, *NOBODY)
            for name in (*dirs, *files):
                os.chown(name, *NOBODY, dir_fd=fd, follow_symlinks=False)
    return owner


class RuntimeBase:
    """A working directory with confined file tools; subclasses run the commands.

    ``root=None`` creates a fresh temporary directory, removed again by :meth:`close`;
    a given ``root`` is created if missing and left in place on close. ``max_output``
    caps, in characters, both a command's output and what ``read_file`` returns.
    """

    def __init__(self, root: Path | None, *, max_output: int, name: str, sandboxed: bool) -> None:
        if isinstance(max_output, bool) or not isinstance(max_output, int) or max_output <= 0:
            raise ValueError(f"max_output must be a positive int, got {max_output!r}")
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
        try:
            self.owner = sandbox_owner(self.root) if sandboxed else None
        except BaseException:
            if self._owns_root:
                shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.files = Workdir(self.root, owner=self.owner)
        self._closed = False

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<{type(self).__name__} {self.name!r} root={str(self.root)!r}{state}>"

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"runtime {self.name!r} is closed")

    # -- files ------------------------------------------------------------------------

    async def read_file(self, path: str) -> str:
        """The text of ``path``, capped at ``max_output`` characters (a note says so)."""
        self._check_open()
        return await asyncio.to_thread(self.files.read, path, self.max_output)

    async def write_file(self, path: str, content: str) -> str:
        """Write ``content`` (UTF-8) to ``path``, creating parent directories."""
        self._check_open()
        return await asyncio.to_thread(self.files.write, path, content)

    async def list_files(self) -> list[str]:
        """Every file under ``root`` (symlinked directories are not followed), sorted."""
        self._check_open()
        return await asyncio.to_thread(self.files.list)

    # -- lifecycle --------------------------------------------------------------------

    async def _stop(self) -> None:
        """Stop whatever commands left running (the subclass's part of :meth:`close`)."""

    async def close(self) -> None:
        """Stop every command; remove the directory if this runtime made it.

        Safe to call more than once.
        """
        if self._closed:
            return
        self._closed = True
        try:
            await self._stop()
        finally:
            self.files.close()
            if self._owns_root:
                await asyncio.to_thread(shutil.rmtree, self.root, True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
