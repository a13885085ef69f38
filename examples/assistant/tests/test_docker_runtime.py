"""DockerRuntime: the container it asks for, how it runs a command, and a real engine.

There is no Docker engine on the machines this was written on, so the tests come in
three kinds:

* the container specification, a plain function, checked as the request body the
  official client would send (``docker.types.ContainerConfig``), offline;
* ``DockerRuntime.run`` driven end to end, through the official client, against a
  stand-in engine on 127.0.0.1 that answers the few Engine API calls it makes (the same
  approach as the other extras' tests): the request sequence, output cap, exit code,
  timeout kill, removal and ``close()``;
* tests against a real engine, marked ``docker_engine``: skipped, with the reason, when
  none answers.
"""

from __future__ import annotations

import asyncio
import json
import re
import struct
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docker
import pytest

from assistant.container import (
    DEFAULT_IMAGE,
    DockerRuntime,
    EngineUnavailableError,
    connect_engine,
    container_spec,
)
from assistant.runtime import RUNTIME_VARIABLE, Runtime, default_runtime

SECRET = "sk-secret-docker"


def _spec(**changes: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "root": Path("/tmp/work"),
        "image": "python:3.11-slim",
        "api_version": "1.45",
        "user": (1000, 1000),
        "environment": {"HOME": "/tmp/work", "PATH": "/usr/bin:/bin"},
        "name": "helper",
    }
    return container_spec("echo hi", **{**arguments, **changes})


def _body(spec: dict[str, Any]) -> dict[str, Any]:
    """The JSON the official client sends to create this container."""
    return dict(docker.types.ContainerConfig("1.45", **spec))


def test_the_container_has_no_network_by_default() -> None:
    body = _body(_spec())
    assert body["NetworkDisabled"] is True
    assert body["HostConfig"]["NetworkMode"] == "none"
    online = _body(_spec(network=True))
    assert online["NetworkDisabled"] is False
    assert online["HostConfig"]["NetworkMode"] == "default"


def test_the_container_writes_only_its_working_directory() -> None:
    body = _body(_spec())
    assert body["HostConfig"]["Binds"] == ["/tmp/work:/tmp/work:rw"]
    assert body["WorkingDir"] == "/tmp/work"
    assert body["HostConfig"]["ReadonlyRootfs"] is True
    assert body["HostConfig"]["Tmpfs"] == {"/tmp": "rw,nosuid,nodev,size=256m"}


def test_the_container_runs_unprivileged_and_limited() -> None:
    body = _body(_spec())
    assert body["User"] == "1000:1000"
    assert body["HostConfig"]["CapDrop"] == ["ALL"]
    assert body["HostConfig"]["SecurityOpt"] == ["no-new-privileges"]
    assert body["HostConfig"]["Memory"] == body["HostConfig"]["MemorySwap"] == 1024**3
    assert body["HostConfig"]["PidsLimit"] == 256
    assert body["HostConfig"]["LogConfig"]["Config"] == {"max-size": "16m", "max-file": "1"}
    assert body["Cmd"] == ["/bin/sh", "-c", "echo hi"]
    assert body["Env"] == ["HOME=/tmp/work", "PATH=/usr/bin:/bin"]
    assert body["Labels"] == {"pygents.runtime": "helper"}
    with pytest.raises(ValueError, match="non-root uid"):
        _spec(user=(0, 0))


def test_a_missing_socket_is_reported_without_connecting(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailableError, match=r"docker\.sock does not exist"):
        connect_engine({"DOCKER_HOST": f"unix://{tmp_path}/docker.sock"})


# -- a stand-in engine ----------------------------------------------------------------


class Engine(ThreadingHTTPServer):
    """Answers the Engine API calls DockerRuntime makes, and records them.

    Each created container "prints" ``output`` and exits with ``exit_code``, or, with
    ``forever``, runs until it is killed (exit code 137).
    """

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EngineHandler)
        self.calls: list[tuple[str, str]] = []
        self.created: list[dict[str, Any]] = []
        self.has_image = True
        self.output = b""
        self.exit_code = 0
        self.forever = False
        self.killed = threading.Event()
        self.streaming = threading.Event()

    @property
    def url(self) -> str:
        return f"tcp://127.0.0.1:{self.server_address[1]}"

    def paths(self) -> list[str]:
        return [f"{method} {re.sub(r'^/v[0-9.]+', '', path)}" for method, path in self.calls]


class _EngineHandler(BaseHTTPRequestHandler):
    server: Engine

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: object = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str) -> None:
        engine = self.server
        path = urlsplit(self.path).path
        engine.calls.append((method, path))
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = re.sub(r"^/v[0-9.]+", "", path)
        if route == "/version":
            self._reply(200, {"ApiVersion": "1.45", "Version": "stand-in"})
        elif route.startswith("/images/") and route.endswith("/json"):
            self._reply(200 if engine.has_image else 404, {"message": "no such image"})
        elif route == "/images/create":
            engine.has_image = True
            self._reply(200, {"status": "pulled"})
        elif route == "/containers/create":
            engine.created.append(json.loads(body))
            self._reply(201, {"Id": "c1", "Warnings": []})
        elif route == "/containers/c1/json":
            self._reply(200, {"Id": "c1", "Config": {"Tty": False}})
        elif route == "/containers/c1/logs":
            self._logs()
        elif route == "/containers/c1/kill":
            engine.killed.set()
            self._reply(204)
        elif route == "/containers/c1/wait":
            self._reply(200, {"StatusCode": 137 if engine.killed.is_set() else engine.exit_code})
        else:  # start, delete
            self._reply(204)

    def _logs(self) -> None:
        engine = self.server
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.docker.multiplexed-stream")
        self.end_headers()  # no length: the body ends when the connection closes
        self.close_connection = True
        for start in range(0, len(engine.output), 4096):
            frame = engine.output[start : start + 4096]
            self.wfile.write(struct.pack(">BxxxL", 1, len(frame)) + frame)
        self.wfile.flush()
        engine.streaming.set()
        if engine.forever:
            engine.killed.wait(60)

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_DELETE(self) -> None:
        self._route("DELETE")


@pytest.fixture
def engine() -> Iterator[Engine]:
    server = Engine()
    # A short poll interval only makes shutdown() quicker: nothing waits on it.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.killed.set()
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
async def runtime(engine: Engine) -> AsyncIterator[DockerRuntime]:
    client = connect_engine({"DOCKER_HOST": engine.url})
    async with DockerRuntime(client, max_output=1_000, name="helper") as rt:
        yield rt


async def test_a_command_runs_in_a_container_that_is_removed_after(
    engine: Engine, runtime: DockerRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert isinstance(runtime, Runtime)
    engine.output, engine.exit_code = "héllo\n".encode(), 3
    result = await runtime.run("echo héllo; exit 3")
    assert (result.exit_code, result.output, result.timed_out) == (3, "héllo\n", False)
    assert engine.paths() == [
        "GET /version",
        f"GET /images/{DEFAULT_IMAGE}/json",
        "POST /containers/create",
        "POST /containers/c1/start",
        "GET /containers/c1/logs",
        "GET /containers/c1/json",
        "POST /containers/c1/wait",
        "DELETE /containers/c1",
    ]
    (created,) = engine.created
    assert created["Cmd"] == ["/bin/sh", "-c", "echo héllo; exit 3"]
    assert created["HostConfig"]["NetworkMode"] == "none"
    assert created["HostConfig"]["Binds"] == [f"{runtime.root}:{runtime.root}:rw"]
    assert not created["User"].startswith("0:")
    assert f"HOME={runtime.root}" in created["Env"]
    assert not any(SECRET in variable for variable in created["Env"])


async def test_the_output_is_capped(engine: Engine, runtime: DockerRuntime) -> None:
    engine.output = b"x" * 100_000
    result = await runtime.run("yes x")
    assert result.truncated
    assert result.output == "x" * 1_000


async def test_a_timeout_kills_and_removes_the_container(
    engine: Engine, runtime: DockerRuntime
) -> None:
    engine.output, engine.forever = b"started\n", True
    result = await runtime.run("echo started; sleep 1000", timeout=0.5)
    assert result.timed_out
    assert result.exit_code is None
    assert result.output == "started\n"
    assert engine.killed.is_set()
    assert engine.paths()[-2:] == ["POST /containers/c1/kill", "DELETE /containers/c1"]


async def test_close_removes_a_running_container(engine: Engine, runtime: DockerRuntime) -> None:
    engine.forever = True
    run = asyncio.create_task(runtime.run("sleep 1000", timeout=600))
    await asyncio.to_thread(engine.streaming.wait, 60)
    await runtime.close()
    assert "DELETE /containers/c1" in engine.paths()
    engine.killed.set()  # the stand-in does not know that removing kills: end its stream
    result = await run
    assert not result.ok


async def test_a_missing_image_is_pulled_once(engine: Engine, runtime: DockerRuntime) -> None:
    engine.has_image = False
    await runtime.run("true")
    await runtime.run("true")
    assert engine.paths().count("POST /images/create") == 1


async def test_docker_is_the_fallback_with_one_line(engine: Engine, tmp_path: Path) -> None:
    lines: list[str] = []
    environ = {"PATH": str(tmp_path), "DOCKER_HOST": engine.url, RUNTIME_VARIABLE: "auto"}
    runtime = default_runtime("fallback", environ=environ, report=lines.append)
    try:
        assert isinstance(runtime, DockerRuntime)
        assert runtime.network is False
    finally:
        await runtime.close()
    assert lines == [
        "sandbox: bubblewrap: bwrap is not on PATH (Debian/Ubuntu: apt-get install "
        "bubblewrap); running commands in Docker containers instead"
    ]


# -- a real engine --------------------------------------------------------------------


@pytest.fixture
async def real() -> AsyncIterator[DockerRuntime]:
    try:
        client = connect_engine()
    except EngineUnavailableError as exc:
        pytest.skip(f"needs a Docker engine; {exc}")
    async with DockerRuntime(client, max_output=1_000, name="engine") as rt:
        yield rt


@pytest.mark.docker_engine
async def test_on_an_engine_commands_run_as_a_user_without_network(real: DockerRuntime) -> None:
    result = await real.run("id -u; ls /sys/class/net; pwd; echo $HOME", timeout=300)
    uid, *rest = result.output.splitlines()
    assert uid != "0"
    assert rest == ["lo", str(real.root), str(real.root)]


@pytest.mark.docker_engine
async def test_on_an_engine_files_are_shared_with_the_tools(real: DockerRuntime) -> None:
    await real.write_file("notes/a.txt", "one\n")
    result = await real.run("echo two >> notes/a.txt && echo three > b.txt", timeout=300)
    assert result.ok, result.output
    assert await real.read_file("notes/a.txt") == "one\ntwo\n"
    assert await real.list_files() == ["b.txt", "notes/a.txt"]
    assert (await real.run("touch /etc/x 2>/dev/null || echo read-only")).output == "read-only\n"


@pytest.mark.docker_engine
async def test_on_an_engine_a_timeout_leaves_no_container(real: DockerRuntime) -> None:
    await real.run("true", timeout=300)  # the image is there from now on
    result = await real.run("echo started; sleep 1000", timeout=5)
    assert result.timed_out
    assert result.output == "started\n"
    capped = await real.run("head -c 100000 /dev/zero | tr '\\0' x", timeout=60)
    assert capped.truncated
    assert capped.output == "x" * 1_000
    client = connect_engine()
    try:
        leftovers = await asyncio.to_thread(
            client.containers.list, all=True, filters={"label": "pygents.runtime=engine"}
        )
    finally:
        client.close()
    assert leftovers == []
