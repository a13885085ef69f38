"""The one rule for tests that need a system program (a server, a terminal, a browser).

Where the program is missing, the test is *skipped* with one line that names the
``apt-get install`` bringing it, so ``uv run pytest`` on a laptop without, say,
``redis-sentinel`` still runs everything else. Under ``CI=true`` the same test
*fails* with the same line instead: ``.ci/run`` installs every program below, and a
green CI run must have run every test, not skipped the ones a fresh machine lacked.

`PROGRAMS` is the whole list; ``.ci/run`` and the README's apt line name the same
packages (``tests/docs/test_system_programs.py`` holds them to it).
"""

from __future__ import annotations

import os
import shutil
from typing import Final

import pytest

__all__ = ["MARKER", "PROGRAMS", "check_marks", "install_line", "needs", "register", "require"]

PROGRAMS: Final = {
    "tmux": "tmux",
    "redis-server": "redis-server",
    "redis-cli": "redis-tools",
    "redis-sentinel": "redis-sentinel",
    "bwrap": "bubblewrap",
    "chromium": "chromium",
    "chromedriver": "chromium-driver",
}
"""Each system program a test may start, and the Debian/Ubuntu package that brings it."""

MARKER: Final = "needs_program"


def install_line(*programs: str) -> str:
    """``apt-get install …`` for ``programs`` (names of `PROGRAMS`)."""
    packages = dict.fromkeys(PROGRAMS[program] for program in programs)
    return "apt-get install " + " ".join(packages)


def require(*programs: str) -> None:
    """Skip the running test (fail it under ``CI=true``) unless every one of
    ``programs`` is on ``PATH``."""
    missing = [program for program in programs if shutil.which(program) is None]
    if not missing:
        return
    message = f"{', '.join(missing)} not installed (Debian/Ubuntu: {install_line(*missing)})"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message}; CI must install it (.ci/run)", pytrace=False)
    pytest.skip(message)


def needs(*programs: str) -> pytest.MarkDecorator:
    """A mark for a test, a class or a module (``pytestmark``) that needs ``programs``:
    checked by `check_marks` when the test sets up."""
    unknown = set(programs) - PROGRAMS.keys()
    if unknown:
        raise ValueError(f"not in PROGRAMS: {sorted(unknown)}")
    return getattr(pytest.mark, MARKER)(*programs)


def register(config: pytest.Config) -> None:
    """Declare the marker (for ``--strict-markers``): call from ``pytest_configure``."""
    config.addinivalue_line(
        "markers", f"{MARKER}(*programs): needs these system programs (tests/system_programs.py)"
    )


def check_marks(item: pytest.Item) -> None:
    """Apply `require` to each `needs` mark of ``item``: call from
    ``pytest_runtest_setup``."""
    for mark in item.iter_markers(MARKER):
        require(*mark.args)
