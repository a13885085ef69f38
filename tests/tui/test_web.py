"""``--web``: the dashboard served to a browser by textual-serve, tested in a real
headless Chromium (Debian's ``chromium`` and its ``chromedriver``, driven by Selenium).

The page draws the terminal with xterm.js on a canvas, which has no text to read. So
the page is given, before its own scripts run, a wrapper around ``WebSocket`` that
keeps what the server sends to the page's terminal: the screen the dashboard drew,
as the page received it. Keys are typed into the page as a user would, through its
terminal's input element, and reach the dashboard over the same socket.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from terminal import ANSI, WAIT, free_port

from pygents_tui._web import served_command
from pygents_tui.cli import main
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


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_page_port_out_of_range_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--web", "--web-port", port])
    assert exit_info.value.code == 2
    assert "--web-port" in capsys.readouterr().err


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``pygents-tui demo --web`` on a free port of 127.0.0.1, as a real process;
    its URL once it answers. Its log goes to a file: a pipe nobody reads would fill
    up and stop it."""
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(SCRIPT), "demo", "--seed", "7", "--web", "--web-port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + WAIT
        while True:  # bounded: the server binds within a second or two
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"never served:\n{log.read_text()}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()  # textual-serve stops on SIGTERM, and with it each session
        server.wait(timeout=WAIT)


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
    served: str, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served)
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
