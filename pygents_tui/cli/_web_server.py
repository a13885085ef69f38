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
- **Refusals are logged, not flooded**: any page the operator visits can make the
  browser send token-less requests here, thousands a second. `RefusalLog` says the
  first of each kind as it is and counts the rest, in one line per kind and window.

Everything here composes textual-serve: an aiohttp middleware in front of its
routes, and its ``command`` read per connection (see `GuardedServer.command`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import hmac
import ipaddress
import itertools
import secrets
import shlex
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Final, Literal

from aiohttp import web
from textual_serve.server import Server

from pygents_tui.cli._web import SESSION_ENV
from pygents_tui.text._plural import counted

__all__ = [
    "REFUSAL_WINDOW",
    "SESSION_ENV",
    "GuardedServer",
    "Refusal",
    "RefusalLog",
    "WebGuard",
    "is_loopback",
    "netloc",
]

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


Refusal = Literal["host", "page", "token", "origin", "full"]
"""The kinds of refusal: a closed set, so what `RefusalLog` keeps is bounded."""

_REFUSED: Final[dict[Refusal, tuple[str, str]]] = {
    "host": ("request", "naming another Host"),
    "page": ("request", "for the page without the token"),
    "token": ("request", "without the token"),
    "origin": ("socket", "from another origin or none"),
    "full": ("request", "past the session cap (--web-sessions)"),
}
"""What the summary of each kind calls the requests it counts: a noun, and the rest."""

REFUSAL_WINDOW: Final = 10.0
"""Seconds after the first refusal of a kind during which the others are only counted."""

Later = Callable[[float, Callable[[], None]], object]
"""Call a function after so many seconds (the running loop's ``call_later``)."""


def _call_later(delay: float, callback: Callable[[], None]) -> object:
    return asyncio.get_running_loop().call_later(delay, callback)


class RefusalLog:
    """The refusals said on the server's stderr, a few lines whatever the flood.

    The first refusal of a kind is said as it is, and opens that kind's window
    (`REFUSAL_WINDOW` seconds on ``clock``); the refusals of that kind within it are
    only counted, then said in one line as the window ends (``refused 1998 more
    requests without the token in the last 10 s``), by a timer set with ``later`` so
    that the count is said even if no request follows, or by `flush` as the server
    stops. The next refusal after a window opens another. What is kept is a start
    and a count per kind, of a closed set (`Refusal`)."""

    def __init__(
        self,
        say: Callable[[str], None] = _say,
        *,
        window: float = REFUSAL_WINDOW,
        clock: Callable[[], float] = time.monotonic,
        later: Later = _call_later,
    ) -> None:
        self._say = say
        self._window = window
        self._clock = clock
        self._later = later
        self._opened: dict[Refusal, float] = {}  # a kind's window: when it opened
        self._counted: dict[Refusal, int] = {}  # the refusals in it after the first
        self._armed = False

    def refused(self, kind: Refusal, line: str) -> None:
        """A request refused with ``line``: said if it opens its kind's window, else counted."""
        now = self._clock()
        self._close(now, due_only=True)
        if kind in self._opened:
            self._counted[kind] += 1
            return
        self._opened[kind] = now
        self._counted[kind] = 0
        self._say(f"refused: {line}")
        self._arm(now)

    def tick(self) -> None:
        """The timer: say the windows that have ended, and set it again for the rest."""
        self._armed = False
        now = self._clock()
        self._close(now, due_only=True)
        self._arm(now)

    def flush(self) -> None:
        """Say what every open window has counted, now (the server stops)."""
        self._close(self._clock(), due_only=False)

    def _close(self, now: float, *, due_only: bool) -> None:
        for kind, opened in list(self._opened.items()):
            if due_only and now < opened + self._window:
                continue
            del self._opened[kind]
            count = self._counted.pop(kind)
            if count:
                seconds = max(1, round(now - opened))
                noun, rest = _REFUSED[kind]
                more = counted(count, f"more {noun}")
                self._say(f"refused {more} {rest} in the last {seconds} s")

    def _arm(self, now: float) -> None:
        if self._armed or not self._opened:
            return
        self._armed = True
        due = min(self._opened.values()) + self._window
        self._later(max(0.0, due - now), self.tick)


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
        refusals: RefusalLog | None = None,
    ) -> None:
        self.refusals = refusals if refusals is not None else RefusalLog()
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

    def _refuse(
        self, kind: Refusal, status: type[web.HTTPException], line: str
    ) -> web.HTTPException:
        """A refusal: one line to the browser, and the same line in the server's log
        (`RefusalLog`: the first of its kind, the others counted)."""
        self.refusals.refused(kind, line)
        return status(text=f"pygents-tui: {line}\n")

    def _full(self) -> web.HTTPException:
        return self._refuse(
            "full",
            web.HTTPServiceUnavailable,
            f"all {self.sessions} browser sessions are in use (--web-sessions); "
            "close a page and reload",
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Check ``request`` (see the module docstring) before textual-serve sees it."""
        host = request.headers.get("Host", "").lower()
        if host not in self.hosts:
            raise self._refuse(
                "host", web.HTTPForbidden, f"the Host {host[:80]!r} is not {self.served}"
            )
        path = request.path
        if path.startswith("/static/"):
            return await handler(request)  # textual-serve's own script and styles
        if path == "/":
            return await self._page(request, handler, host)
        if not self._valid(request.cookies.get(self.cookie)):
            raise self._refuse("token", web.HTTPForbidden, f"{path[:80]!r} without the token")
        if path == "/ws":
            return await self._socket(request, handler)
        return await handler(request)

    async def _page(self, request: web.Request, handler: Handler, host: str) -> web.StreamResponse:
        given = request.query.get("token")
        if not self._valid(given) and not self._valid(request.cookies.get(self.cookie)):
            raise self._refuse(
                "page",
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
            raise self._refuse(
                "origin", web.HTTPForbidden, f"a socket from {shown}, not {self.origin}"
            )
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

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl-C (or SIGTERM), as textual-serve does, but the URL is said
        only once the port is bound (textual-serve said its line at startup, before
        binding: a port taken then failed after the URL had been printed). aiohttp's
        runner is driven here rather than through `web.run_app`, whose older releases
        (the floor) log a failed bind as an unhandled task exception besides raising
        it. Whatever `RefusalLog` still counts is said as the server stops.
        `OSError` if the port cannot be bound."""
        self.debug = debug
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        serving = loop.create_task(self._serve())
        for stop in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):  # no signals on this loop
                loop.add_signal_handler(stop, serving.cancel)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(serving)
        finally:
            self.guard.refusals.flush()
            loop.run_until_complete(loop.shutdown_asyncgens())
            asyncio.set_event_loop(None)
            loop.close()

    async def _serve(self) -> None:
        """Bind, say the URL, serve until cancelled, then shut the app down (its
        ``on_shutdown`` and ``on_cleanup`` hooks: textual-serve closes its sessions)."""
        runner = web.AppRunner(await self._make_app(), handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
            self._serving()
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    def _serving(self, *_: object) -> None:
        _say(f"serving the dashboard on {self.guard.url} (Ctrl-C stops)")

    async def on_startup(self, app: web.Application) -> None:
        """Not textual-serve's logo and address on stdout: the URL is said once the
        port is bound (`serve`)."""

    def __repr__(self) -> str:  # never the token
        return f"GuardedServer({self.guard.served!r})"
