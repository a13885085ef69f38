"""``pygents-tui listen`` on the command line: its help, its arguments, and a port
that is already taken (a real one, held by this test, with the real console script
in a child process)."""

from __future__ import annotations

import os
import pty
import socket
import subprocess
from collections.abc import Iterator

import pytest
from terminal import SCRIPT, free_port

from pygents_tui.cli._commands import main

SERVICE_LINE = (
    "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 opentelemetry-instrument python service.py"
)


def test_the_help_says_it_is_read_only_and_how_to_point_a_service_at_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["listen", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pygents-tui listen")
    said = " ".join(out.split())
    assert "The receiver only accepts data: it runs nothing it receives." in said
    assert "Agents seen only over OTLP are never acted on from here" in said
    assert SERVICE_LINE in out
    for option in ("--host", "--grpc-port", "--http-port", "--stale-after", "--trace-url"):
        assert option in out
    assert "default: 127.0.0.1" in out


def test_the_top_level_help_lists_listen(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "listen" in capsys.readouterr().out


def test_both_transports_off_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["listen", "--grpc-port", "0", "--http-port", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("pygents-tui listen: error: --grpc-port and --http-port are both 0")
    assert line.endswith("(leave one at its default, or read Redis mailboxes with --redis URL)")


@pytest.mark.parametrize("argv", [["--port", "5000"], ["--port=5000"], ["--port"]])
def test_a_port_flag_is_refused_naming_the_grpc_and_http_port_flags(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["listen", *argv])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "pygents-tui listen: error: there is no --port: give --grpc-port PORT (OTLP/gRPC, "
        "default 4317) or --http-port PORT (OTLP/HTTP, default 4318) (see --help)"
    ]


@pytest.mark.parametrize(
    ("argv", "detail"),
    [
        (["--grpc-port", "http"], "not a port number: 'http'"),
        (["--http-port", "70000"], "a port is 1 to 65535 (0: off), got 70000"),
        (["--stale-after", "0"], "must be a positive number of seconds, got 0"),
        (["--stale-after", "soon"], "not a number of seconds: 'soon'"),
    ],
)
def test_bad_listen_arguments_are_one_line_and_exit_2(
    argv: list[str], detail: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["listen", *argv])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("pygents-tui listen: error: ")
    assert detail in line


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port this test holds, listening, on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


@pytest.mark.parametrize(("transport", "flag"), [("gRPC", "--grpc-port"), ("HTTP", "--http-port")])
def test_a_port_in_use_is_one_line_naming_it_and_the_fix_and_exit_2(
    taken_port: int, transport: str, flag: str
) -> None:
    other = "--http-port" if flag == "--grpc-port" else "--grpc-port"
    # A real terminal on stdin and stdout, as a user's: the error must come before
    # the dashboard takes the screen, on stderr.
    controller, terminal = pty.openpty()
    try:
        result = subprocess.run(
            [str(SCRIPT), "listen", flag, str(taken_port), other, "0"],
            stdin=terminal,
            stdout=terminal,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"pygents-tui listen: error: cannot listen for OTLP/{transport} on "
        f"127.0.0.1:{taken_port}: the port is already in use"
    )
    assert line.endswith(f"({flag} PORT, or {flag} 0)")
    assert "Traceback" not in result.stderr


def test_listen_without_a_terminal_refuses_in_one_line_and_frees_its_port(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()
    # pytest captures stdout: not a terminal, so nothing may take the screen.
    assert main(["listen", "--grpc-port", "0", "--http-port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("pygents-tui: error: standard output is not a terminal")
    with socket.socket() as probe:  # the receiver let go of its port again
        probe.bind(("127.0.0.1", port))
