"""End to end, in a real terminal: ``pygents-tui listen`` under tmux, sent spans and
live records by another process through the real OTLP exporter, and quit with ``q``.

A terminal gives no signal but its screen, so the test polls ``tmux capture-pane``
(``Terminal.wait_for``), and every wait has a bound.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from terminal import POLL, SCRIPT, WAIT, Terminal, free_port, terminal

HERE = Path(__file__).parent


def send_once(port: int, *service: str) -> None:
    """Run ``send_once.py`` against the listener on ``port``; it returns once sent."""
    sent = subprocess.run(
        [sys.executable, str(HERE / "send_once.py"), f"127.0.0.1:{port}", *service],
        env={**os.environ, "PYTHONPATH": str(HERE)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert sent.returncode == 0, sent.stderr


def quit_listen(term: Terminal, exit_file: Path) -> None:
    """Press ``q`` and wait (bounded) for listen to exit with status 0."""
    term.keys("q")
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not exit_file.exists():
        time.sleep(POLL)
    assert exit_file.exists(), f"listen did not exit on q; the screen:\n{term.screen()}"
    assert term.wait_for_file(exit_file) == "EXIT:0"


def test_listen_in_a_real_terminal(tmp_path: Path) -> None:
    port = free_port()
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} listen "
        f"--grpc-port {port} --http-port 0; echo EXIT:$? > {shlex.quote(str(exit_file))}"
    )
    with terminal("listen") as term:
        term.start(command, width=120, height=30)
        term.wait_for("the listener's title", lambda s: f"listen · gRPC 127.0.0.1:{port}" in s)

        send_once(port)
        screen = term.wait_for(
            "the sent agent and its running turn",
            lambda s: "tmux-svc@t-1/tmux-agent" in s and "wave" in s and "running" in s,
        )
        assert "1 service ·" in screen
        quit_listen(term, exit_file)


def test_a_hostile_service_name_neither_retitles_nor_clears_nor_copies_in_the_terminal(
    tmp_path: Path,
) -> None:
    """A service named with OSC 0 (window title), OSC 52 (clipboard write) and CSI 2J
    (clear screen) is shown as text; the terminal (tmux, which obeys all three when
    they reach it) keeps its title, its screen and its paste buffers."""
    port = free_port()
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} listen "
        f"--grpc-port {port} --http-port 0; echo EXIT:$? > {shlex.quote(str(exit_file))}"
    )
    heading = f"listen · gRPC 127.0.0.1:{port}"
    with terminal("listen-escapes") as term:
        term.start(command, width=120, height=30)
        term.run("set-option", "-s", "set-clipboard", "on")  # OSC 52 makes a paste buffer
        term.wait_for("the listener's title", lambda s: heading in s)
        title = term.run("display-message", "-p", "-t", term.session, "#{pane_title}")

        send_once(port, "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J")
        screen = term.wait_for("the sent agent's running turn", lambda s: "wave" in s)
        after = {
            "title": term.run("display-message", "-p", "-t", term.session, "#{pane_title}"),
            "header shown": heading in screen,  # drawn once: a clear screen loses it
            "paste buffers": term.run("list-buffers"),
        }
        assert after == {"title": title, "header shown": True, "paste buffers": ""}
        assert "␛]0;PWNED␇␛]52;" in screen  # the name, its control characters visible
        quit_listen(term, exit_file)


def test_ctrl_c_ends_listen_with_130_and_restores_the_terminal(tmp_path: Path) -> None:
    port = free_port()
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} listen "
        f"--grpc-port 0 --http-port {port}; "
        f"echo EXIT:$? $(stty -a | grep -o -- '-\\?icanon') > {shlex.quote(str(exit_file))}; "
        "sleep 60"
    )
    with terminal("listen-int") as term:
        term.start(command, width=120, height=30)
        term.wait_for("the listener's title", lambda s: f"listen · HTTP 127.0.0.1:{port}" in s)
        term.keys("C-c")
        assert term.wait_for_file(exit_file) == "EXIT:130 icanon"
        screen = term.screen()
        assert "pygents-tui: interrupted" in screen
        assert "Traceback" not in screen
