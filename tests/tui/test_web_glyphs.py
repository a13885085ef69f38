"""``--web`` in Debian's Chromium: every symbol the dashboard draws has a glyph in a
font the browser has, so none is drawn as an empty box (Textual's header icon ``⭘``
and the stopwatch ``⏱`` were). Checked in the real browser the page runs in: each
symbol is drawn on a canvas in the page's terminal font (textual-serve's xterm.js
``fontFamily``) and compared with a code point no font has (U+0378, unassigned),
which the browser draws as its empty box."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._header import HeaderIcon

from pygents_tui.ui.app import Dashboard
from system_programs import require

SOURCES = Path(__file__).resolve().parents[2] / "pygents_tui"
# The control pictures (␛ for ESC, …) that `_visible` shows control characters as are
# left to that module's own change: Chromium has none of them either.
NOT_CHECKED = {SOURCES / "text" / "_visible.py"}
TERMINAL_FONT = "'Roboto Mono', Monaco, 'Courier New', monospace"  # textual-serve's xterm.js

DRAWN_AS_A_BOX = """
const font = "32px " + arguments[1];
function image(text) {
  const canvas = document.createElement("canvas");
  canvas.width = 48;
  canvas.height = 48;
  const context = canvas.getContext("2d");
  context.font = font;
  context.fillText(text, 4, 36);
  return Array.from(context.getImageData(0, 0, 48, 48).data).join(",");
}
const box = image("\\u0378");
return arguments[0].filter((symbol) => image(symbol) === box);
"""


def symbols_in_sources() -> set[str]:
    """Every character past U+2000 in the dashboard's sources (its symbols, and a few
    typographic ones of its docstrings: all must render)."""
    found: set[str] = set()
    for path in SOURCES.rglob("*"):
        if path.suffix in (".py", ".tcss") and path not in NOT_CHECKED:
            found.update(c for c in path.read_text(encoding="utf-8") if ord(c) > 0x2000)
    return found


@pytest.fixture
def browser() -> Iterator[Any]:
    require("chromium", "chromedriver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        driver.get("about:blank")
        yield driver
    finally:
        driver.quit()


async def test_every_symbol_the_dashboard_draws_has_a_glyph_in_chromium(browser: Any) -> None:
    app = Dashboard()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        icon = str(app.screen.query_one(HeaderIcon).icon)
    symbols = sorted(symbols_in_sources() | {icon})
    assert "▁" in symbols  # the sparkline's
    boxes = browser.execute_script(DRAWN_AS_A_BOX, symbols, TERMINAL_FONT)
    assert boxes == []
