"""Commands in Docker containers, on the official ``docker`` client (``assistant`` extra).

:class:`DockerRuntime` runs each command in a fresh container, so it behaves like the
bubblewrap sandbox (:mod:`.sandbox`): nothing a command starts outlives it, and a
timeout, a cancellation or ``close()`` kills the container and everything in it. What
:func:`container_spec` asks the engine for:

* the working directory bind-mounted read-write at the same path as on the host, and
  the container's own file system read-only, with a private ``/tmp`` (tmpfs);
* no network (``network_mode="none"``, ``network_disabled``) unless ``network=True``;
* a non-root user: this process's uid/gid, or when this process is root the owner of
  the working directory (``nobody`` for a root-owned one, see :mod:`.base`);
* no capabilities, ``no-new-privileges``, memory (no swap on top) and process-count
  limits, and a bounded log, since the output is read from it.

The output is capped and the timeout enforced by the same code as the other runtimes
(:mod:`.output`); the file tools work on the bind-mounted directory from the host,
exactly as elsewhere (:mod:`.files`).

:func:`connect_engine` is how :func:`~.runtime.default_runtime` asks whether an engine
answers. The machines this example was developed on have none: the container
specification and the fallback are tested there, the engine tests only where an
engine answers (see the assistant guide).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# docker ships no type information; what this module uses of it is typed at its edges.
import docker  # type: ignore[import-untyped]

from .base import RuntimeBase
from .output import CappedText, CommandResult, check_command, check_timeout, supervise
from .sandbox import sandbox_env

__all__ = [
    "DEFAULT_IMAGE",
    "DockerRuntime",
    "EngineUnavailableError",
    "connect_engine",
    "container_spec",
]

DEFAULT_IMAGE = "python:3.11-slim"
MEMORY_LIMIT = "1g"
PIDS_LIMIT = 256
_DEFAULT_SOCKET = "/var/run/docker.sock"
_ENGINE_TIMEOUT = 5  # seconds for each engine request while connecting


class EngineUnavailableError(RuntimeError):
    """No Docker engine answers; the message says which one was tried and why it failed."""


def connect_engine(environ: Mapping[str, str] | None = None) -> Any:
    """A ``docker.DockerClient`` for the engine ``environ`` (``DOCKER_HOST``...) names.

    Raises :class:`EngineUnavailableError` if none answers. A missing socket file is
    reported without trying to connect.
    """
    env = dict(os.environ if environ is None else environ)
    host = env.get("DOCKER_HOST") or f"unix://{_DEFAULT_SOCKET}"
    explicit = bool(env.get("DOCKER_HOST") or env.get("DOCKER_CONTEXT"))
    socket = host.removeprefix("unix://") if host.startswith("unix://") else None
    missing = socket is not None and not os.path.exists(socket)
    if missing and (explicit or not (Path.home() / ".docker" / "config.json").exists()):
        raise EngineUnavailableError(f"no Docker engine: {socket} does not exist")
    try:
        client = docker.from_env(environment=env, timeout=_ENGINE_TIMEOUT)
    except docker.errors.DockerException as exc:
        raise EngineUnavailableError(f"no Docker engine answers at {host}: {exc}"[:300]) from None
    return client


def container_spec(
    command: str,
    *,
    root: Path,
    image: str,
    api_version: str,
    network: bool = False,
    user: tuple[int, int],
    environment: Mapping[str, str],
    name: str = "runtime",
    memory: str = MEMORY_LIMIT,
    pids: int = PIDS_LIMIT,
) -> dict[str, Any]:
    """The keyword arguments of ``APIClient.create_container`` for one command.

    A plain function of its arguments (``api_version`` is the engine's API version),
    so what the container is allowed to do can be checked without an engine.
    """
    if user[0] == 0:
        raise ValueError("containers do not run as root: give a non-root uid")
    host_config = docker.types.HostConfig(
        version=api_version,
        binds={str(root): {"bind": str(root), "mode": "rw"}},
        network_mode=None if network else "none",
        read_only=True,
        tmpfs={"/tmp": "rw,nosuid,nodev,size=256m"},
        mem_limit=memory,
        memswap_limit=memory,
        pids_limit=pids,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        log_config=docker.types.LogConfig(
            type="json-file", config={"max-size": "16m", "max-file": "1"}
        ),
    )
    return {
        "image": image,
        "command": ["/bin/sh", "-c", command],
        "user": f"{user[0]}:{user[1]}",
        "working_dir": str(root),
        "environment": dict(environment),
        "network_disabled": not network,
        "host_config": host_config,
        "labels": {"pygents.runtime": name},
        "stdin_open": False,
        "tty": False,
        "detach": True,
    }


def _pump(stream: Iterable[bytes], sink: CappedText, closing: threading.Event) -> None:
    """Feed a container's log stream to ``sink`` (in a worker thread) until it ends."""
    try:
        for chunk in stream:
            sink.feed(chunk)
    except Exception:
        if not closing.is_set():  # an error of its own, not the close() below
            raise


class DockerRuntime(RuntimeBase):
    """Each command in a fresh Docker container (see the module docstring).

    ``client`` is a ``docker.DockerClient`` (from :func:`connect_engine`); the runtime
    closes it on :meth:`close`. ``image`` must provide ``/bin/sh``; it is pulled on the
    first command if the engine does not have it.
    """

    def __init__(
        self,
        client: Any,
        root: Path | None = None,
        *,
        max_output: int = 16_000,
        name: str = "runtime",
        network: bool = False,
        image: str = DEFAULT_IMAGE,
    ) -> None:
        super().__init__(root, max_output=max_output, name=name, sandboxed=True)
        self.network = network
        self.image = image
        self._client = client
        self._api = client.api
        self._user = self.owner or (os.getuid(), os.getgid())
        self._containers: set[str] = set()
        self._image_ready = False

    def _ensure_image(self) -> None:
        if self._image_ready:
            return
        try:
            self._api.inspect_image(self.image)
        except docker.errors.ImageNotFound:
            repository, tag = docker.utils.parse_repository_tag(self.image)
            self._api.pull(repository, tag=tag or "latest")
        self._image_ready = True

    def _remove(self, container: str) -> None:
        with contextlib.suppress(docker.errors.APIError):
            self._api.remove_container(container, force=True)
        self._containers.discard(container)

    def _exit_code(self, container: str) -> int:
        try:
            status = self._api.wait(container, timeout=60)
        except docker.errors.NotFound:  # removed by close() while it ran: it was killed
            return 137
        return int(status["StatusCode"])

    def _kill(self, container: str) -> None:
        with contextlib.suppress(docker.errors.APIError):
            self._api.kill(container)

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:  # noqa: ASYNC109
        """Run ``command`` with ``/bin/sh`` in a new container; as :class:`~.local.LocalRuntime`."""
        self._check_open()
        command = check_command(command)
        seconds = check_timeout(timeout)
        await asyncio.to_thread(self._ensure_image)
        spec = container_spec(
            command,
            root=self.root,
            image=self.image,
            api_version=self._api.api_version,
            network=self.network,
            user=self._user,
            environment=sandbox_env(self.root),
            name=self.name,
        )
        created = await asyncio.to_thread(self._api.create_container, **spec)
        container: str = created["Id"]
        self._containers.add(container)
        collector = CappedText(self.max_output)
        closing = threading.Event()
        try:
            await asyncio.to_thread(self._api.start, container)
            stream = await asyncio.to_thread(self._api.logs, container, stream=True, follow=True)
            pump = asyncio.ensure_future(asyncio.to_thread(_pump, stream, collector, closing))

            async def finish() -> None:
                await asyncio.shield(pump)  # a thread cannot be cancelled: kill() ends it

            async def kill() -> None:
                await asyncio.to_thread(self._kill, container)

            try:
                timed_out = await supervise(finish, timeout=seconds, kill=kill, leftovers=finish)
            finally:
                if not pump.done():  # still streaming after the kill: stop reading
                    closing.set()
                    stream.close()
                    pump.add_done_callback(lambda done: done.cancelled() or done.exception())
            exit_code = None
            if not timed_out:
                exit_code = await asyncio.to_thread(self._exit_code, container)
        finally:
            await asyncio.to_thread(self._remove, container)
        return CommandResult(command, exit_code, collector.text(), timed_out, collector.truncated)

    async def _stop(self) -> None:
        for container in list(self._containers):
            await asyncio.to_thread(self._remove, container)
        await asyncio.to_thread(self._client.close)
