"""``pygents-tui listen --redis URL [--redis-prefix P] [--control]`` as a user runs it:
the options, the refusal of ``--control`` alone, and, in a real terminal (tmux), a
mailbox on a real ``redis-server`` shown and paused from the keyboard."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import pytest
from terminal import SCRIPT, free_port, terminal

from pygents import Turn, tool
from pygents.redis import Mailboxes, RedisServer
from pygents.testing import isolated_registries
from pygents_tui.cli._commands import main

# The producer only names the tool: declared outside the registry, as test modules
# must not leave declarations behind (tests/conftest.py).
with isolated_registries():

    @tool()
    async def console_cli_job(n: int) -> int:
        """Stands for a worker's tool."""
        return n


def test_the_help_names_the_redis_options_and_says_control_is_opt_in(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["listen", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--redis URL" in out
    assert "--redis-prefix PREFIX" in out
    assert "without it the dashboard is read-only" in out


def test_the_listen_help_does_not_call_the_dashboard_read_only_when_control_acts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["listen", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "cannot pause or resume remote agents" not in out
    assert "Read-only:" not in out
    assert (
        "The dashboard is read-only unless --control is given with --redis: then it can "
        "pause, resume, cancel, retry, drop and drain the pygents.redis mailboxes"
    ) in out


def test_control_without_redis_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["listen", "--control"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "pygents-tui listen: error: --control acts on Redis mailboxes: give --redis URL too"
    ]


async def _populate(url: str) -> None:
    async with Mailboxes(url, prefix="shop") as mailboxes:
        await mailboxes.put("desk", Turn(console_cli_job, args=[1]), reply=False)


async def _paused(url: str) -> bool:
    async with Mailboxes(url, prefix="shop") as mailboxes:
        return (await mailboxes.survey(["desk"]))["desk"].paused


def test_listen_with_redis_shows_a_mailbox_and_pauses_it_in_a_real_terminal(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    asyncio.run(_populate(redis_server.url))
    port = free_port()
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} listen "
        f"--grpc-port {port} --http-port 0 --redis {redis_server.url} --redis-prefix shop "
        f"--control; echo EXIT:$? > {shlex.quote(str(exit_file))}"
    )
    with terminal("listen-redis") as term:
        term.start(command, width=120, height=30)
        screen = term.wait_for("the mailbox's row", lambda s: "redis@shop/desk" in s)
        assert "Redis control" in screen  # the title says control is on
        term.keys("p")
        term.wait_for("the confirmation", lambda s: "Pause mailbox desk?" in s)
        term.keys("y")
        term.wait_for("the Events line's toast", lambda s: "paused mailbox desk" in s)
        assert asyncio.run(_paused(redis_server.url))
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"


def test_listen_on_redis_alone_with_both_otlp_ports_off_shows_the_mailboxes(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """``--grpc-port 0 --http-port 0`` with ``--redis``: Redis is the console's one
    source, and no OTLP port is opened."""
    asyncio.run(_populate(redis_server.url))
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} listen "
        f"--grpc-port 0 --http-port 0 --redis {redis_server.url} --redis-prefix shop; "
        f"echo EXIT:$? > {shlex.quote(str(exit_file))}"
    )
    with terminal("listen-redis-alone") as term:
        term.start(command, width=120, height=30)
        screen = term.wait_for("the mailbox's row", lambda s: "redis@shop/desk" in s)
        (title,) = [line for line in screen.splitlines() if "listen ·" in line]
        assert title.split("listen · ", 1)[1].strip() == f"Redis read-only: {redis_server.url}"
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"


@pytest.mark.parametrize("url", ["localhost:6379", "127.0.0.1:6379/0", "http://localhost:6379"])
def test_a_redis_url_without_a_redis_scheme_is_one_line_and_exit_2(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["listen", "--redis", url])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"pygents-tui listen: error: argument --redis: not a Redis URL: {url!r}")
    for form in ("redis://", "rediss://", "redis+cluster://", "unix://"):
        assert form in line
