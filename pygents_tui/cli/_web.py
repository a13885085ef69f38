"""``--web``: the same dashboard, served to a browser by textual-serve.

textual-serve is a small web server: each browser that opens the page gets a fresh
run of a command, whose screen its page draws (xterm.js) and to which it sends the
keys. The command is this very ``pygents-tui`` invocation less its ``--web`` flags, so
the browser shows exactly what the terminal would, with the same subcommand, options
and configuration file.

It listens on 127.0.0.1 unless ``--web-host`` names another interface, as the OTLP
receiver does: the page runs the command for whoever opens it, so reaching it from
other machines is something to ask for (and warned about: the token is then all that
stands in the way, over plain HTTP). Who may open it at all, even on 127.0.0.1 (a
token, Host and Origin checks, a cap on sessions), is `pygents_tui.cli._web_server`'s.
Any subcommand offers ``--web`` by calling `add_web_arguments` on its parser
(``demo`` and ``listen`` do).
"""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

from pygents._extras import MissingExtraError, import_from_extra
from pygents_tui.cli._arguments import PORT, ranged
from pygents_tui.ui._acting import SESSION_ENV

__all__ = ["SESSION_ENV", "WEB_PROVIDES", "add_web_arguments", "serve_web", "served_command"]

"""The environment variable that tells a dashboard served to a browser its session:
its actions are logged with it (`pygents_tui.ui._acting`)."""

WEB_PROVIDES = ("textual_serve", "aiohttp_jinja2", "jinja2")
"""The top-level modules the 'web' extra installs (textual-serve and its templates)."""

_VALUED = ("--web-host", "--web-port", "--web-sessions", "--web-url")

SESSIONS = ranged("a number of sessions", int, lambda n: 1 <= n <= 64, "sessions are 1 to 64")
"""``--web-sessions``: each is a dashboard process, so a few, and never unbounded."""


def public_url(text: str) -> str:
    """``--web-url``: the address browsers use, in front of the served one (a reverse
    proxy's): ``http(s)://host[:port]``, no path, as textual-serve puts its own paths
    right after it."""
    parsed = urlsplit(text)
    try:
        port = parsed.port
    except ValueError:
        port = -1
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or port == -1
        or parsed.path not in ("", "/")
        or parsed.query
        or parsed.fragment
        or parsed.username is not None
    ):
        raise argparse.ArgumentTypeError(
            f"not an http(s)://host[:port] address without a path: {text[:60]!r}"
        )
    # As a browser writes its Origin: lower case, no default port.
    name = f"[{parsed.hostname}]" if ":" in parsed.hostname else parsed.hostname
    default = {"http": 80, "https": 443}[parsed.scheme]
    return f"{parsed.scheme}://{name}" + (f":{port}" if port not in (None, default) else "")


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
    parser.add_argument(
        "--web-sessions",
        type=SESSIONS,
        default=None,
        metavar="N",
        help="browser sessions open at once, each its own dashboard process (default: 4)",
    )
    parser.add_argument(
        "--web-url",
        type=public_url,
        default=None,
        metavar="URL",
        help="the address browsers use when a reverse proxy (TLS) serves the page, "
        "e.g. https://dashboard.example.com (default: the served one)",
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


def serve_web(
    argv: Sequence[str],
    host: str,
    port: int,
    title: str,
    sessions: int = 4,
    public: str | None = None,
) -> int:
    """Serve ``pygents-tui argv`` (less ``--web``) on ``host:port`` until Ctrl-C, to
    at most ``sessions`` browser sessions at once, opened at ``public`` when a proxy
    is in front (`public_url`); the exit status. A missing extra or a port that cannot
    be bound is one line, status 2."""
    try:
        import_from_extra("textual_serve.server", "pygents-tui --web", "web", WEB_PROVIDES)
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        return 2
    from pygents_tui.cli._web_server import GuardedServer, WebGuard, is_loopback

    if not is_loopback(host):
        print(
            f"pygents-tui: warning: serving on {host}, not this machine only: the token "
            "is the only protection and it travels in plain HTTP; put TLS in a reverse "
            "proxy in front (see the dashboard docs, 'In a browser')",
            file=sys.stderr,
        )
    guard = WebGuard(host, port, sessions, public=public)
    server = GuardedServer(served_command(argv), guard, host=host, port=port, title=title)
    try:
        server.serve()
    except OSError as error:  # the port is taken, or the host is not this machine's
        print(f"pygents-tui: error: {_unbound(host, port, error)}", file=sys.stderr)
        return 2
    return 0


def _unbound(host: str, port: int, error: OSError) -> str:
    """Why the page could not be served, in one line with the flag that changes it
    (asyncio's own message repeats the address in a tuple)."""
    where = f"cannot serve the page on {host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"{where}: the port is already in use (is another pygents-tui --web "
            "running?); choose another with --web-port PORT"
        )
    reason = os.strerror(error.errno).lower() if error.errno else str(error)
    return f"{where}: {reason} (--web-host HOST, --web-port PORT)"
