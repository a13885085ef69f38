"""The default runtime: every command in its own bubblewrap sandbox.

Each ``run`` starts ``bwrap`` (bubblewrap, the sandbox Flatpak uses) with the command
under ``/bin/sh``. What the command gets:

* new user, pid, mount, IPC, UTS and cgroup namespaces, and a new network namespace
  (loopback only) unless the runtime was made with ``network=True``;
* a file system of read-only system directories (``/usr``, ``/etc`` and the
  ``/bin``, ``/lib*``, ``/sbin`` links or directories), a fresh ``/proc`` for its own
  pid namespace, a minimal ``/dev``, a private ``/tmp``, and the working directory,
  the only writable host directory, at the same path as on the host (so a path a
  command prints means the same to the file tools). Nothing else of the host exists
  inside: not ``$HOME``, not other temporary directories, not the Docker socket;
* a small environment (``PATH``, ``HOME`` set to the working directory, locale,
  ``TERM``, ``TZ``), given to ``bwrap`` itself too: ``bwrap`` is pid 1 inside, so its
  own ``/proc/1/environ`` is readable there and must hold nothing of this process's;
* no capabilities, a new session (no terminal to inject keystrokes into), and, when
  this process is root, a non-root host user (see :mod:`.base`).

``bwrap`` runs as pid 1 of the command's pid namespace and exits when the command's
shell does, and the kernel then kills every process left in the namespace, so
**background processes end with the command that started them**, ``setsid`` or not.
On timeout, cancellation or ``close()`` the ``bwrap`` process is killed, which kills its
pid 1 (``--die-with-parent``) and with it the whole namespace. If this process dies,
the sandboxes die with it.

Not covered: CPU, memory and process-count limits (use Docker, :mod:`.container`, for
those), and kernel bugs: namespaces share the host kernel.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .base import ENV_ALLOWLIST, sandbox_owner
from .process import ProcessRuntime, Spawn

__all__ = ["BubblewrapRuntime", "bubblewrap_problem", "bwrap_argv", "sandbox_env"]

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
#: Top-level host directories shown read-only (as the symlinks they are, on merged /usr).
_SYSTEM = ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_PROBE_TIMEOUT = 10.0


def sandbox_env(root: Path) -> dict[str, str]:
    """The whole environment of a sandboxed command (and of ``bwrap`` itself)."""
    env = {key: os.environ[key] for key in ENV_ALLOWLIST if key in os.environ}
    env.update(PATH=SANDBOX_PATH, HOME=str(root), PWD=str(root))
    return env


@functools.cache
def _system_mounts() -> tuple[str, ...]:
    args: list[str] = []
    for name in _SYSTEM:
        host = f"/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    return tuple(args)


def bwrap_argv(bwrap: str, root: Path, command: str, *, network: bool = False) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` in ``root`` (module docstring)."""
    argv = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-cgroup"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--hostname", "sandbox", *_system_mounts()]
    if network and os.path.isdir("/run/systemd/resolve"):  # /etc/resolv.conf may link here
        argv += ["--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--bind", str(root), str(root), "--remount-ro", "/", "--chdir", str(root)]
    return [*argv, "--", "/bin/sh", "-c", command]


def _spawn(
    bwrap: str, root: Path, command: str, *, network: bool, owner: tuple[int, int] | None
) -> Spawn:
    argv = bwrap_argv(bwrap, root, command, network=network)
    return Spawn(argv, sandbox_env(root), "/", owner)


@functools.cache
def _probe(bwrap: str, euid: int) -> str | None:
    """Run ``true`` in a sandbox like a real one; ``None`` if it worked, else why not."""
    with tempfile.TemporaryDirectory(prefix="pygents-bwrap-probe-") as tmp:
        root = Path(tmp).resolve()
        spawn = _spawn(bwrap, root, "true", network=False, owner=sandbox_owner(root))
        uid, gid = spawn.user if spawn.user is not None else (None, None)
        try:
            done = subprocess.run(
                spawn.argv,
                env=spawn.env,
                cwd=spawn.cwd,
                user=uid,
                group=gid,
                extra_groups=None if gid is None else [],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{bwrap} could not be run: {exc}"[:200]
    if done.returncode == 0:
        return None
    lines = done.stderr.decode(errors="replace").strip().splitlines() or ["no message"]
    return f"{bwrap} failed (exit code {done.returncode}): {lines[-1][:160]}"


def bubblewrap_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """``None`` when bubblewrap sandboxes work here; otherwise, in a few words, why not.

    ``bwrap`` is looked up on ``environ``'s ``PATH`` and tried once per process.
    """
    path = (os.environ if environ is None else environ).get("PATH", os.defpath)
    bwrap = shutil.which("bwrap", path=path)
    if bwrap is None:
        return "bwrap is not on PATH (Debian/Ubuntu: apt-get install bubblewrap)"
    return _probe(bwrap, os.geteuid())


class BubblewrapRuntime(ProcessRuntime):
    """Each command in a fresh bubblewrap sandbox (see the module docstring).

    ``network=True`` shares this host's network with the commands; by default they have
    none. ``bwrap`` is the program to run (found on ``PATH`` by default).
    """

    def __init__(
        self,
        root: Path | None = None,
        *,
        max_output: int = 16_000,
        name: str = "runtime",
        network: bool = False,
        bwrap: str | None = None,
    ) -> None:
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise RuntimeError(
                "bwrap is not on PATH: install bubblewrap (Debian/Ubuntu: apt-get install "
                "bubblewrap), or use default_runtime() to pick another runtime"
            )
        super().__init__(root, max_output=max_output, name=name, sandboxed=True)
        self.network = network
        self.bwrap = found

    def _spawn(self, command: str, run: int) -> Spawn:
        return _spawn(self.bwrap, self.root, command, network=self.network, owner=self.owner)
