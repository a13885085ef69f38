"""``--web``: the same dashboard, served to a browser by textual-serve.

textual-serve is a small web server: each browser that opens the page gets a fresh
run of a command, whose screen its page draws (xterm.js) and to which it sends the
keys. The command is this very ``pygents-tui`` invocation less its ``--web`` flags, so
the browser shows exactly what the terminal would, with the same subcommand, options
and configuration file.

It listens on 127.0.0.1 unless ``--web-host`` names another interface, as the OTLP
receiver does: the page runs the command for whoever opens it, so reaching it from
other machines is something to ask for. Any subcommand offers ``--web`` by calling
`add_web_arguments` on its parser (``demo`` and ``listen`` do).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Sequence

from pygents._extras import MissingExtraError, import_from_extra
from pygents_tui._arguments import PORT

__all__ = ["WEB_PROVIDES", "add_web_arguments", "serve_web", "served_command"]

WEB_PROVIDES = ("textual_serve", "aiohttp_jinja2", "jinja2")
"""The top-level modules the 'web' extra installs (textual-serve and its templates)."""

_VALUED = ("--web-host", "--web-port")


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """``--web``, ``--web-host`` and ``--web-port`` on a subcommand."""
    parser.add_argument(
        "--web",
        action="store_true",
        help="serve the dashboard to a browser instead of this terminal (the 'web' extra)",
    )
    parser.add_argument(
        "--web-host",
        default=None,
        metavar="HOST",
        help="the interface to serve the page on (default: 127.0.0.1, this machine only)",
    )
    parser.add_argument(
        "--web-port",
        type=PORT,
        default=None,
        metavar="PORT",
        help="the page's port (default: 8000)",
    )


def served_command(argv: Sequence[str]) -> str:
    """The shell command each browser session runs: this program with ``argv`` less
    the ``--web`` flags (and their values), through the interpreter running now."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--web":
            continue
        elif arg in _VALUED:
            skip = True
        elif not arg.startswith(tuple(f"{flag}=" for flag in _VALUED)):
            kept.append(arg)
    return shlex.join([sys.executable, "-m", "pygents_tui", *kept])


def serve_web(argv: Sequence[str], host: str, port: int, title: str) -> int:
    """Serve ``pygents-tui argv`` (less ``--web``) on ``host:port`` until Ctrl-C; the
    exit status. A missing extra or a port that cannot be bound is one line, status 2."""
    try:
        server_module = import_from_extra(
            "textual_serve.server", "pygents-tui --web", "web", WEB_PROVIDES
        )
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        return 2
    server = server_module.Server(served_command(argv), host=host, port=port, title=title)
    # textual-serve runs on the thread's current loop (get_event_loop): give it one,
    # which newer Pythons no longer create implicitly.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        server.serve()
    except OSError as error:  # the port is taken, or the host is not this machine's
        print(
            f"pygents-tui: error: cannot serve the page on {host}:{port}: "
            f"{error.strerror or error} (--web-port PORT)",
            file=sys.stderr,
        )
        return 2
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    return 0
