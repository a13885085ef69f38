"""The assistant's runtime: where its shell commands and file operations happen.

Each session owns one :class:`Runtime`. Everything the model does to the outside world
goes through it: ``run`` executes a shell command, ``read_file`` / ``write_file`` /
``list_files`` touch files. All paths are relative to the runtime's working directory
(``root``); one that resolves outside it is refused with :class:`PathEscapeError`,
whose message tells the model how to fix the call. Every error the model can cause
this way is a :class:`ValueError` (:class:`~.files.FileToolError` for files).

:class:`Runtime` is a :class:`typing.Protocol`; three classes implement it:

* :class:`~.sandbox.BubblewrapRuntime`: each command in its own bubblewrap sandbox
  (namespaces, only the working directory writable, no network by default);
* :class:`~.container.DockerRuntime`: each command in its own Docker container;
* :class:`~.local.LocalRuntime`: plain local processes, **not a sandbox**.

They share the output cap and timeout (:mod:`.output`), the confined file operations
(:mod:`.files`) and, for the two process-based ones, how commands are started and
killed (:mod:`.process`).

:func:`default_runtime` picks one. ``PYGENTS_ASSISTANT_RUNTIME`` chooses: ``auto`` (the
default) tries bubblewrap, then Docker, and refuses to go on without a sandbox;
``bubblewrap`` or ``docker`` insist on that one; ``local`` runs commands unsandboxed,
after a loud warning.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from .container import DockerRuntime, EngineUnavailableError, connect_engine
from .files import FileToolError, NotRegularFileError, PathEscapeError
from .local import LOCAL_WARNING, LocalRuntime
from .output import CommandResult, bounded
from .sandbox import BubblewrapRuntime, bubblewrap_problem

__all__ = [
    "RUNTIME_VARIABLE",
    "BubblewrapRuntime",
    "CommandResult",
    "DockerRuntime",
    "FileToolError",
    "LocalRuntime",
    "NoSandboxError",
    "NotRegularFileError",
    "PathEscapeError",
    "Runtime",
    "default_runtime",
]

#: The environment variable that chooses the runtime ``default_runtime`` returns.
RUNTIME_VARIABLE = "PYGENTS_ASSISTANT_RUNTIME"
_CHOICES = ("auto", "bubblewrap", "docker", "local")


@runtime_checkable
class Runtime(Protocol):
    """An isolated place to run commands and edit files; see the module docstring."""

    root: Path

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:  # noqa: ASYNC109
        """Run ``command`` in a shell in ``root``; kill it after ``timeout`` seconds."""
        ...

    async def read_file(self, path: str) -> str:
        """Return the text of ``path`` (relative to ``root``), capped."""
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


class NoSandboxError(RuntimeError):
    """No sandbox can run commands here; the message says what to install or set."""


_said: set[str] = set()


def _say_once(line: str) -> None:
    """Print ``line`` to stderr the first time it comes up in this process."""
    if line not in _said:
        _said.add(line)
        print(line, file=sys.stderr, flush=True)


def default_runtime(
    name: str,
    *,
    network: bool = False,
    environ: Mapping[str, str] | None = None,
    report: Callable[[str], None] | None = None,
) -> Runtime:
    """The runtime a new session gets, in a fresh temporary directory.

    ``PYGENTS_ASSISTANT_RUNTIME`` in ``environ`` (default: ``os.environ``) chooses; see
    the module docstring. ``network`` gives the commands this host's network. Falling
    back from bubblewrap to Docker, and choosing ``local``, are announced with one line
    to ``report`` (default: stderr, once per process). With no sandbox available this
    raises :class:`NoSandboxError`, whose message says how to get one or opt out.
    """
    env = os.environ if environ is None else environ
    say = report or _say_once
    choice = env.get(RUNTIME_VARIABLE, "").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise ValueError(
            f"{RUNTIME_VARIABLE}={bounded(choice, 40)} is not one of {', '.join(_CHOICES)}; "
            "set one of those, or unset it for auto"
        )
    if choice == "local":
        say(f"{LOCAL_WARNING} ({RUNTIME_VARIABLE}=local)")
        return LocalRuntime(name=name)
    problems: list[str] = []
    if choice in ("auto", "bubblewrap"):
        problem = bubblewrap_problem(env)
        if problem is None:
            return BubblewrapRuntime(name=name, network=network)
        problems.append(f"bubblewrap: {problem}")
    if choice in ("auto", "docker"):
        try:
            client = connect_engine(env)
        except EngineUnavailableError as exc:
            problems.append(f"Docker: {exc}")
        else:
            if problems:
                say(f"sandbox: {problems[0]}; running commands in Docker containers instead")
            return DockerRuntime(client, name=name, network=network)
    raise NoSandboxError(
        "no sandbox to run commands in (" + "; ".join(problems) + "). Install bubblewrap "
        "(Debian/Ubuntu: apt-get install bubblewrap) or start a Docker engine; to run "
        f"commands unsandboxed on this machine instead, set {RUNTIME_VARIABLE}=local"
    )
