"""The documentation's tests watch the dashboard in a real terminal with the tmux
harness of tests/tui (``terminal.py``): one harness for the whole suite, found here
by adding its folder to the end of ``sys.path``."""

from __future__ import annotations

import sys
from pathlib import Path

_TUI_TESTS = str(Path(__file__).resolve().parents[1] / "tui")
if _TUI_TESTS not in sys.path:
    sys.path.append(_TUI_TESTS)
