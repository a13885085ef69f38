"""The ``--web`` server: textual-serve's, with the door a browser comes through locked.

textual-serve runs the dashboard for whoever opens its page or its socket. Bound to
127.0.0.1 that still meant any web page the operator visits: a page on another
origin could open ``/ws`` and type keys (pausing a mailbox with ``--control``), and a
DNS-rebound name reached ``GET /``. So, the way Jupyter does it:

- **A token per start**, random, printed in the URL the command shows. ``GET /``
  needs it (``?token=``); the answer sets it as a cookie (HttpOnly, SameSite=Strict,
  named after the port, as cookies do not tell ports apart), which the page's own
  socket then carries. A cookie rather than the token in the socket's URL: the
  page's script appends ``?width=`` to the URL it is given by string concatenation,
  so a query there would be mangled, and changing the page would mean copying
  textual-serve's handler and template.
- **Host and Origin checked.** Every request's ``Host`` must name the served
  address (or, on a loopback bind, its ``localhost``/``127.0.0.1``/``[::1]``
  equivalents, whose ``GET /`` is redirected to the served address so the cookie
  lands on the origin the socket uses; or the ``--web-url`` of a reverse proxy in
  front). ``/ws`` needs ``Origin`` to be exactly the origin the page is opened at,
  and no ``Origin`` is refused too (browsers always send it): the cookie is
  same-site for every port of the host, so this is what stops a page on another
  local port.
- **A cap on sessions**: each socket starts a dashboard process; past
  ``--web-sessions`` the page and the socket are refused with one line.
- **Sessions are named**: each socket gets a short id (a hash of the token and a
  counter, which does not reveal the token), logged on this server's stderr as it
  opens and closes, and handed to its dashboard process in `SESSION_ENV`, whose
  actions are then logged with it (`pygents_tui.ui._acting`).

Everything here composes textual-serve: an aiohttp middleware in front of its
routes, and its ``command`` read per connection (see `GuardedServer.command`).
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import ipaddress
import itertools
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web
from textual_serve.server import Server

from pygents_tui.cli._web import SESSION_ENV

__all__ = ["SESSION_ENV", "GuardedServer", "WebGuard", "is_loopback", "netloc"]

_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "pygents_tui_web_session", default=None
)
"""The session of the socket being handled (each request is its own task and context)."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def netloc(host: str, port: int) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets; port 80 left out)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return host if port == 80 else f"{host}:{port}"


def _say(line: str) -> None:
    print(f"pygents-tui: {line}", file=sys.stderr, flush=True)


def _refuse(status: type[web.HTTPException], line: str) -> web.HTTPException:
    """A refusal: one line to the browser, and the same line on the server's stderr."""
    _say(f"refused: {line}")
    return status(text=f"pygents-tui: {line}\n")


class WebGuard:
    """The token, the addresses a request may name, and the open sessions of one
    ``--web`` start; `middleware` applies them to every request."""

    def __init__(
        self,
        host: str,
        port: int,
        sessions: int,
        token: str | None = None,
        public: str | None = None,
    ) -> None:
        self.token = token if token is not None else secrets.token_urlsafe(32)
        self.served = netloc(host, port)
        self.origin = public if public is not None else f"http://{self.served}"
        self.url = f"{self.origin}/?token={self.token}"
        self.cookie = f"pygents-tui-web-{port}"
        self.proxy = public
        self.secure = self.origin.startswith("https:")
        self.sessions = sessions
        self.open: set[str] = set()
        self._counter = itertools.count(1)
        self.loopback: frozenset[str] = frozenset()
        if is_loopback(host):
            self.loopback = frozenset(netloc(name, port) for name in _LOOPBACK_NAMES)
        hosts = {self.served, *self.loopback}
        if public is not None:  # a proxy passing the browser's Host on
            hosts.add(public.partition("://")[2])
        self.hosts = frozenset(name.lower() for name in hosts)

    def _valid(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(
            token.encode("utf-8", "replace"), self.token.encode()
        )

    def _session_id(self) -> str:
        seed = f"{self.token}:{next(self._counter)}".encode()
        return hashlib.sha256(seed).hexdigest()[:8]

    def _full(self) -> web.HTTPException:
        return _refuse(
            web.HTTPServiceUnavailable,
            f"all {self.sessions} browser sessions are in use (--web-sessions); "
            "close a page and reload",
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Check ``request`` (see the module docstring) before textual-serve sees it."""
        host = request.headers.get("Host", "").lower()
        if host not in self.hosts:
            raise _refuse(web.HTTPForbidden, f"the Host {host[:80]!r} is not {self.served}")
        path = request.path
        if path.startswith("/static/"):
            return await handler(request)  # textual-serve's own script and styles
        if path == "/":
            return await self._page(request, handler, host)
        if not self._valid(request.cookies.get(self.cookie)):
            raise _refuse(web.HTTPForbidden, f"{path[:80]!r} without the token")
        if path == "/ws":
            return await self._socket(request, handler)
        return await handler(request)

    async def _page(self, request: web.Request, handler: Handler, host: str) -> web.StreamResponse:
        given = request.query.get("token")
        if not self._valid(given) and not self._valid(request.cookies.get(self.cookie)):
            raise _refuse(
                web.HTTPForbidden,
                "the page needs the token: open the URL pygents-tui printed (…/?token=…)",
            )
        if self.proxy is None and host in self.loopback and host != self.served:
            # A loopback equivalent: to the origin the socket uses (and the cookie is for).
            raise web.HTTPTemporaryRedirect(f"{self.origin}{request.rel_url}")
        if len(self.open) >= self.sessions:
            raise self._full()
        response = await handler(request)
        if self._valid(given):
            response.set_cookie(
                self.cookie,
                self.token,
                path="/",
                httponly=True,
                samesite="Strict",
                secure=self.secure,  # behind an https proxy: never over plain HTTP
            )
        return response

    async def _socket(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin != self.origin:
            shown = "no Origin" if origin is None else f"the Origin {origin[:80]!r}"
            raise _refuse(web.HTTPForbidden, f"a socket from {shown}, not {self.origin}")
        if len(self.open) >= self.sessions:
            raise self._full()
        session = self._session_id()
        self.open.add(session)
        peer = request.remote or "?"
        _say(f"web session {session} opened from {peer} ({len(self.open)} of {self.sessions})")
        token = _SESSION.set(session)
        try:
            return await handler(request)
        finally:
            _SESSION.reset(token)
            self.open.discard(session)
            _say(f"web session {session} closed ({len(self.open)} of {self.sessions} open)")


class GuardedServer(Server):
    """textual-serve's `Server` behind a `WebGuard`."""

    def __init__(self, command: str, guard: WebGuard, host: str, port: int, title: str) -> None:
        self.guard = guard
        super().__init__(command, host=host, port=port, title=title, public_url=guard.origin)

    @property
    def command(self) -> str:
        """The command a new socket runs: textual-serve reads it as it starts the
        session's process, within the socket's request, so the session known there
        (`_SESSION`) goes into that process's environment through the shell that
        textual-serve runs it with. Concurrent sockets each see their own."""
        session = _SESSION.get()
        if session is None:
            return self._command
        return f"{SESSION_ENV}={shlex.quote(session)} {self._command}"

    @command.setter
    def command(self, value: str) -> None:
        self._command = value

    def initialize_logging(self) -> None:
        """Not textual-serve's: its handler on the root logger would reformat every
        library's records; this server says what it does in its own lines."""

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.guard.middleware)
        return app

    async def on_startup(self, app: web.Application) -> None:
        _say(f"serving the dashboard on {self.guard.url} (Ctrl-C stops)")

    def __repr__(self) -> str:  # never the token
        return f"GuardedServer({self.guard.served!r})"
