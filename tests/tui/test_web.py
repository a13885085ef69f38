"""``--web``: the dashboard served to a browser by textual-serve, tested in a real
headless Chromium (Debian's ``chromium`` and its ``chromedriver``, driven by Selenium).

The page draws the terminal with xterm.js on a canvas, which has no text to read. So
the page is given, before its own scripts run, a wrapper around ``WebSocket`` that
keeps what the server sends to the page's terminal: the screen the dashboard drew,
as the page received it. Keys are typed into the page as a user would, through its
terminal's input element, and reach the dashboard over the same socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pilot import dashboard
from terminal import ANSI, WAIT

from pygents import Agent, Turn, tool
from pygents.redis._server.redis_server import free_port
from pygents_tui.cli._commands import main
from pygents_tui.cli._web import served_command
from system_programs import require

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCRIPT = Path(sys.executable).parent / "pygents-tui"

KEEP_WHAT_THE_TERMINAL_GETS = """
window.__screen = [];
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        window.__screen.push(new TextDecoder().decode(event.data));
      }
    });
  }
};
"""


def test_the_served_command_is_the_same_invocation_without_its_web_flags() -> None:
    argv = ["demo", "--web", "--seed", "3", "--web-port", "9000", "--web-host=::1", "--speed=2"]
    assert served_command(argv) == f"{sys.executable} -m pygents_tui demo --seed 3 --speed=2"
    listen = ["listen", "--config", "my file.toml", "--web", "--grpc-port", "0"]
    assert served_command(listen).endswith(
        "pygents_tui listen --config 'my file.toml' --grpc-port 0"
    )


def test_the_served_command_leaves_out_the_session_cap_and_the_proxy_address() -> None:
    argv = ["demo", "--web-sessions", "2", "--web", "--web-url=https://d.example.com", "-h"]
    assert served_command(argv) == f"{sys.executable} -m pygents_tui demo -h"


async def test_an_action_is_logged_with_its_browser_session_and_nothing_in_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], until: Any
) -> None:
    gate = asyncio.Event()

    @tool()
    async def held() -> None:
        await gate.wait()

    agent = Agent("held", "held", [held])

    async def workload() -> None:
        await agent.put(Turn(held))
        async for _ in agent.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: agent.current_turn is not None)
        await until(pilot, lambda: app.selected_agent == "held")
        await pilot.press("p")  # in a terminal: its stderr is the screen
        await until(pilot, lambda: agent.is_paused)
        assert capfd.readouterr().err == ""
        monkeypatch.setenv("PYGENTS_TUI_WEB_SESSION", "1a2b3c4d")  # as the --web server starts it
        # `p` toggles: the action asked is "pause", the answer says what it did.
        await pilot.press("p")
        await until(pilot, lambda: not agent.is_paused)
        assert capfd.readouterr().err == (
            "pygents-tui: web session 1a2b3c4d: pause 'held': asked\n"
            "pygents-tui: web session 1a2b3c4d: answered 'held resumed'\n"
        )
    gate.set()


def test_a_page_port_in_use_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["demo", "--web", "--web-port", str(port)]) == 2
    _, err = capsys.readouterr()
    line = err.splitlines()[-1]
    assert line.startswith(f"pygents-tui: error: cannot serve the page on 127.0.0.1:{port}: ")
    assert "Traceback" not in err


def test_a_page_port_taken_says_so_in_one_line_and_prints_no_url() -> None:
    # A real process, as a user starts it: the URL used to be printed before the
    # bind failed, and it led to whatever held the port.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [str(SCRIPT), "demo", "--web", "--web-port", str(port)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"pygents-tui: error: cannot serve the page on 127.0.0.1:{port}: the port is already "
        "in use (is another pygents-tui --web running?); choose another with --web-port PORT"
    ]


def full_pipe() -> tuple[int, int]:
    """A pipe with no room left (read end, write end): a process writing to it waits,
    right there, until the test reads."""
    read, write = os.pipe()
    os.set_blocking(write, False)  # only to fill it: the writer gets it blocking
    for chunk in (b"." * 4096, b"."):
        with contextlib.suppress(BlockingIOError):
            while True:
                os.write(write, chunk)
    os.set_blocking(write, True)
    return read, write


def test_the_url_is_printed_only_once_the_port_accepts_connections(tmp_path: Path) -> None:
    # The server's stderr is a full pipe, so it stops at its first line until the test
    # reads: the port accepting connections then means it was bound before that line
    # was written (the loop that binds is the one writing). When the URL came first,
    # the server stopped before binding and the port never answered.
    port = free_port()
    read, write = full_pipe()
    with (tmp_path / "stdout").open("wb") as stdout:
        server = subprocess.Popen(
            [str(SCRIPT), "demo", "--seed", "7", "--web", "--web-port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=write,
        )
    os.close(write)
    try:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "the server stopped"
                assert time.monotonic() < deadline, "the port never accepted a connection"
                time.sleep(0.05)
        written = b""
        while b"\n" not in written.lstrip(b"."):  # the filler, then the server's first line
            ready, _, _ = select.select([read], [], [], WAIT)
            assert ready, f"the server wrote no line: {written.lstrip(b'.')!r}"
            written += os.read(read, 65536)
        first = written.lstrip(b".").decode().splitlines()[0]
        assert first.startswith(f"pygents-tui: serving the dashboard on http://127.0.0.1:{port}/")
        assert re.search(r"\?token=\S+ \(Ctrl-C stops\)$", first), first
        socket.create_connection(("127.0.0.1", port), timeout=1).close()  # and still does
    finally:
        server.terminate()
        with contextlib.suppress(OSError):
            while select.select([read], [], [], WAIT)[0] and os.read(read, 65536):
                pass  # what it says as it stops, so that it never waits on the pipe
        server.wait(timeout=WAIT)
        os.close(read)
    assert "token" not in (tmp_path / "stdout").read_text()


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_page_port_out_of_range_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--web", "--web-port", port])
    assert exit_info.value.code == 2
    assert "--web-port" in capsys.readouterr().err


@dataclass(frozen=True)
class Served:
    """A ``pygents-tui demo --web`` process: the URL it printed (with its token), its
    origin, the file its output goes to, and the process."""

    url: str
    origin: str
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def token(self) -> str:
        return self.url.partition("token=")[2]

    @property
    def port(self) -> int:
        return int(self.origin.rpartition(":")[2])

    @property
    def cookie(self) -> str:
        """The name of the cookie the page sets (one per port: cookies ignore ports)."""
        return f"pygents-tui-web-{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> str:
        """Stop the server as Ctrl-C would; its whole output."""
        self.process.terminate()
        self.process.wait(timeout=WAIT)
        return self.output()

    def wait_for(self, text: str) -> str:
        """The output once it holds ``text`` (bounded by WAIT)."""
        deadline = time.monotonic() + WAIT
        while text not in (output := self.output()):
            if time.monotonic() > deadline:
                raise AssertionError(f"never said {text!r}:\n{output}")
            time.sleep(0.1)
        return output


Serve = Callable[..., Served]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Start ``pygents-tui demo --web`` (and the given options) on a free port of
    127.0.0.1, as a real process; its `Served` once it answers. Its output goes to a
    file: a pipe nobody reads would fill up and stop it."""
    servers: list[subprocess.Popen[bytes]] = []

    def start(*options: str) -> Served:
        port = free_port()
        log = tmp_path / f"server-{port}.log"
        with log.open("wb") as output:
            server = subprocess.Popen(
                [str(SCRIPT), "demo", "--seed", "7", "--web", "--web-port", str(port), *options],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        servers.append(server)
        deadline = time.monotonic() + WAIT
        while True:  # bounded: the server binds within a second or two
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"never served:\n{log.read_text()}") from None
                time.sleep(0.1)
        origin = f"http://127.0.0.1:{port}"
        printed = re.search(rf"{re.escape(origin)}/\?token=\S+", log.read_text())
        return Served(printed.group() if printed else f"{origin}/", origin, log, server)

    try:
        yield start
    finally:
        for server in servers:
            server.terminate()  # textual-serve stops on SIGTERM, and with it each session
            server.wait(timeout=WAIT)


@pytest.fixture
def served(serve: Serve) -> Served:
    return serve()


@pytest.fixture
def browser() -> Iterator[Any]:
    require("chromium", "chromedriver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(WAIT)
        driver.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument", {"source": KEEP_WHAT_THE_TERMINAL_GETS}
        )
        yield driver
    finally:
        driver.quit()


def screen(driver: Any, since: int = 0) -> str:
    """What the page's terminal was sent (from message ``since`` on), as plain text."""
    chunks = driver.execute_script("return window.__screen.slice(arguments[0]);", since)
    return ANSI.sub("", "".join(chunks))


def received(driver: Any) -> int:
    return int(driver.execute_script("return window.__screen.length;"))


def test_the_page_shows_the_agents_table_and_a_key_typed_in_it_opens_the_help(
    served: Served, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served.url)
    wait = WebDriverWait(browser, WAIT, poll_frequency=0.1)
    # The page hides its terminal until the first bytes arrive, then shows it.
    wait.until(
        lambda d: "-first-byte" in d.find_element(By.TAG_NAME, "body").get_attribute("class")
    )
    # The table and the status line can reach the page in different writes (a busy
    # machine): wait for both before reading the screen.
    wait.until(lambda d: re.search(r"Agent\s+State\s+Queue", screen(d)) and "agent(s)" in screen(d))
    table = screen(browser)
    assert "planner" in table
    assert "agent(s)" in table
    assert "Keys" not in table  # the help is not up yet

    before = received(browser)
    browser.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea").send_keys("?")
    wait.until(lambda d: "Everywhere" in screen(d, before))
    assert "this key map" in screen(browser, before)  # the help, listing `?` itself


def wait_for_the_terminal(driver: Any) -> None:
    """Until the page's terminal shows the dashboard's status line."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT, poll_frequency=0.1).until(lambda d: "agent(s)" in screen(d))


def close_the_page(driver: Any) -> None:
    """Close the page's tab, which ends its session (a page navigated away from may
    be kept, socket and all)."""
    page = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.switch_to.window(page)
    driver.close()


def test_what_a_browser_session_does_is_logged_with_that_session(
    served: Served, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served.url)
    wait_for_the_terminal(browser)
    opened = re.search(r"web session (\w+) opened from 127\.0\.0\.1", served.output())
    assert opened is not None, served.output()
    session = opened.group(1)
    assert session not in served.token
    before = received(browser)
    browser.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea").send_keys("p")
    WebDriverWait(browser, WAIT, poll_frequency=0.1).until(
        lambda d: "will pause before its next turn" in screen(d, before)
    )
    # The dashboard's stderr reaches the server's output as its session ends.
    close_the_page(browser)
    output = served.wait_for(f"web session {session} closed")
    output = served.wait_for(f"web session {session}: pause ")
    assert f"web session {session}: answered " in output


ATTACK = """<!doctype html><script>
window.__attack = [];
const socket = new WebSocket("ws://127.0.0.1:%d/ws?width=80&height=24");
socket.binaryType = "arraybuffer";
socket.onopen = () => {
  window.__attack.push("open");
  socket.send(JSON.stringify(["stdin", "p"]));
  socket.send(JSON.stringify(["stdin", "y"]));
};
socket.onmessage = () => window.__attack.push("message");
socket.onerror = () => window.__attack.push("error");
socket.onclose = () => window.__attack.push("close");
</script>"""


@pytest.fixture
def another_origin() -> Iterator[Callable[..., str]]:
    """A page on another origin of this machine (127.0.0.1, another port) whose script
    (`ATTACK` unless another is given, formatted with the dashboard's port) is aimed at
    the dashboard on the given port: by default it opens the dashboard's socket and
    types ``p`` ``y`` into it."""
    page: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page["body"]
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def url(port: int, script: str = ATTACK) -> str:
        page["body"] = (script % port).encode()
        return f"http://127.0.0.1:{server.server_address[1]}/"

    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=WAIT)


def test_a_page_on_another_origin_cannot_open_the_socket(
    served: Served, browser: Any, another_origin: Callable[..., str]
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    port = served.port
    # The operator's browser has the dashboard open, so it holds the page's cookie:
    # the other page's socket carries it too (same site), and still must not open.
    browser.get(served.url)
    wait_for_the_terminal(browser)
    browser.get(another_origin(port))
    WebDriverWait(browser, WAIT, poll_frequency=0.1).until(
        lambda d: {"close", "message"} & set(d.execute_script("return window.__attack;"))
    )  # refused, or (the hole) the dashboard drew its screen into the other page
    assert browser.execute_script("return window.__attack;") == ["error", "close"]
    assert "refused: a socket from the Origin 'http://127.0.0.1:" in served.output()
    assert browser.get_cookie(served.cookie) is not None


FLOOD = """<!doctype html><script>
window.__answered = 0;
window.__failed = 0;
const dashboard = "http://127.0.0.1:%d";
const paths = [];
for (let n = 0; n < 1000; n++) {
  paths.push(`/?n=${n}`, `/download/${n}`);
}
async function send() {
  while (paths.length) {
    try {
      await fetch(dashboard + paths.shift(), {mode: "no-cors"});
      window.__answered++;
    } catch (error) {
      window.__failed++;
    }
  }
}
for (let i = 0; i < 32; i++) {
  send();
}
</script>"""
"""2,000 requests without the token from a page on another origin, half for the page,
half for another path, 32 at a time (Chromium fails, unsent, what is past its limit of
requests waiting at once). Their answers are opaque, but each counts as answered."""


def refused(output: str, first: str, summary: str) -> int:
    """The refusals of one kind the log accounts for: each line said as it is (the
    first of a window) and each window's count of the others."""
    said = len(re.findall(rf"^pygents-tui: refused: {first}$", output, re.MULTILINE))
    counts = re.findall(
        rf"^pygents-tui: refused (\d+) more requests? {summary} in the last \d+ s$",
        output,
        re.MULTILINE,
    )
    return said + sum(int(count) for count in counts)


def test_a_flood_of_refusals_from_another_origin_leaves_the_sessions_lines_findable(
    served: Served, browser: Any, another_origin: Callable[..., str]
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    # Any page the operator visits can do this: 2,000 requests without the token
    # (the browser has no cookie yet), half for the page, half for other paths.
    browser.get(another_origin(served.port, FLOOD))
    WebDriverWait(browser, 3 * WAIT, poll_frequency=0.2).until(
        lambda d: d.execute_script("return window.__answered + window.__failed;") == 2000
    )
    assert browser.execute_script("return window.__failed;") == 0
    browser.get(served.url)  # then the operator opens the dashboard
    wait_for_the_terminal(browser)
    close_the_page(browser)  # (a server stopping with a page open waits for it)
    served.wait_for(" closed (0 of 4 open)")
    output = served.stop()  # what is still counted is said as it stops
    opened = re.findall(r"^pygents-tui: web session \w+ opened from 127\.0\.0\.1 ", output, re.M)
    assert len(opened) == 1, output
    lines = output.splitlines()
    refusals = [line for line in lines if line.startswith("pygents-tui: refused")]
    # One window of each kind takes the whole flood unless this machine is very slow:
    # then a few more, never a line per request.
    assert 4 <= len(refusals) <= 12, output
    assert lines.index(refusals[0]) < lines.index(
        next(iter(line for line in lines if " opened from " in line))
    )
    assert (
        refused(
            output,
            re.escape("the page needs the token: open the URL pygents-tui printed (…/?token=…)"),
            "for the page without the token",
        )
        == 1000
    ), output
    assert refused(output, r"'/download/\d+' without the token", "without the token") == 1000


# -- raw HTTP: the page, the socket and the Host, without a browser -------------------------


def cookie(served: Served) -> dict[str, str]:
    return {"Cookie": f"{served.cookie}={served.token}"}


async def test_the_page_without_the_token_or_with_a_wrong_one_is_forbidden(
    served: Served,
) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as client:
        for url in (f"{served.origin}/", f"{served.origin}/?token=wrong", served.url[:-1]):
            async with client.get(url) as response:
                assert response.status == 403, url
                text = await response.text()
                assert len(text.splitlines()) == 1
                assert "needs the token" in text
        async with client.get(served.url) as response:
            assert response.status == 200
            assert response.cookies[served.cookie]["httponly"]
            assert response.cookies[served.cookie]["samesite"] == "Strict"


async def test_a_request_naming_another_host_is_refused_and_a_loopback_name_redirected(
    served: Served,
) -> None:
    import aiohttp

    port = served.port
    async with aiohttp.ClientSession() as client:
        for host in ("rebind.evil.example", f"rebind.evil.example:{port}", "127.0.0.1:1"):
            async with client.get(served.url, headers={"Host": host}) as response:
                assert response.status == 403, host
                assert "is not 127.0.0.1:" in await response.text()
        async with client.get(
            served.url, headers={"Host": f"localhost:{port}"}, allow_redirects=False
        ) as response:
            assert response.status == 307
            assert response.headers["Location"] == served.url


async def test_a_socket_without_the_token_or_from_another_origin_is_refused(
    served: Served,
) -> None:
    import aiohttp

    socket_url = f"{served.origin}/ws?width=80&height=24"
    attempts: list[tuple[dict[str, str], str | None]] = [
        ({}, served.origin),  # no token
        (cookie(served), "http://127.0.0.1:1"),  # another origin, with the token
        (cookie(served), "null"),
        (cookie(served), None),  # no Origin at all
    ]
    async with aiohttp.ClientSession() as client:
        for headers, origin in attempts:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await client.ws_connect(socket_url, headers=headers, origin=origin)
            assert refused.value.status == 403, (headers, origin)
    assert "opened" not in served.output()


async def test_sessions_past_the_cap_are_refused_in_one_line(serve: Serve) -> None:
    import aiohttp

    served = serve("--web-sessions", "1")
    socket_url = f"{served.origin}/ws?width=80&height=24"
    async with aiohttp.ClientSession() as client:
        first = await client.ws_connect(socket_url, headers=cookie(served), origin=served.origin)
        assert (await first.receive(timeout=WAIT)).type is aiohttp.WSMsgType.BINARY
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(socket_url, headers=cookie(served), origin=served.origin)
        assert refused.value.status == 503
        async with client.get(served.url) as response:
            assert response.status == 503
            assert (await response.text()).splitlines() == [
                "pygents-tui: all 1 browser sessions are in use (--web-sessions); "
                "close a page and reload"
            ]
        await first.close()
        await asyncio.to_thread(served.wait_for, "closed (0 of 1 open)")
        again = await client.ws_connect(socket_url, headers=cookie(served), origin=served.origin)
        await again.close()
    assert served.output().count(" opened from ") == 2


def test_a_host_other_than_this_machine_warns_that_the_token_is_all_that_protects_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 192.0.2.1 (TEST-NET-1) is no interface of this machine: the bind fails after the
    # warning, so nothing is served.
    assert main(["demo", "--web", "--web-host", "192.0.2.1", "--web-port", "8000"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        "pygents-tui: warning: serving on 192.0.2.1, not this machine only: the token is "
        "the only protection and it travels in plain HTTP; put TLS in a reverse proxy in "
        "front (see the dashboard docs, 'In a browser')"
    )
    assert lines[-1].startswith("pygents-tui: error: cannot serve the page on 192.0.2.1:8000")


async def test_behind_a_reverse_proxy_the_page_and_its_socket_answer_at_the_proxys_address(
    serve: Serve,
) -> None:
    import aiohttp

    served = serve("--web-url", "https://Dash.Example.com:443/")
    # The URL is printed at the proxy's address, not the served one.
    printed = re.search(r"https://dash\.example\.com/\?token=(\S+)", served.output())
    assert printed is not None, served.output()
    token = printed.group(1)
    proxied = {"Host": "dash.example.com"}  # nginx: proxy_set_header Host $host
    async with aiohttp.ClientSession() as client:
        async with client.get(f"{served.origin}/?token={token}", headers=proxied) as response:
            assert response.status == 200
            assert 'data-session-websocket-url="wss://dash.example.com/ws"' in (
                await response.text()
            )
            assert response.cookies[served.cookie]["secure"]
        socket_url = f"{served.origin}/ws?width=80&height=24"
        headers = {**proxied, "Cookie": f"{served.cookie}={token}"}
        for origin in (served.origin, "http://dash.example.com", "https://evil.example.com"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await client.ws_connect(socket_url, headers=headers, origin=origin)
            assert refused.value.status == 403, origin
        opened = await client.ws_connect(
            socket_url, headers=headers, origin="https://dash.example.com"
        )
        assert (await opened.receive(timeout=WAIT)).type is aiohttp.WSMsgType.BINARY
        await opened.close()


@pytest.mark.parametrize(
    "url", ["ftp://dash.example.com", "https://dash.example.com/prefix", "dash.example.com"]
)
def test_a_proxy_address_that_is_not_a_bare_http_origin_is_refused(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--web", "--web-url", url])
    assert exit_info.value.code == 2
    assert "--web-url: not an http(s)://host[:port] address without a path" in (
        capsys.readouterr().err
    )
