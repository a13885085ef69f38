"""pytest-asyncio, at its floor too, leaves no event loop open between tests.

pytest-asyncio before 1.4 ends an async test with an event loop it made left open as
the thread's current loop (0.24: a fresh one after every test; 1.0 to 1.3: the one its
``get_event_loop()`` made, given back). A sync test that then runs a program with
``asyncio.run()`` (``main(["listen", ...])`` does) replaces that loop, which the garbage
collector later finds open: its two self-pipe sockets, an ``AF_UNIX`` socketpair, raised
``ResourceWarning: unclosed <socket.socket ... family=1 ...>`` in whichever test ran the
collector (seven of them in the lowest-versions step of ``.ci/run``, at 0.24). 1.4
leaves the thread's loop alone (pytest-asyncio issue 724). ``.ci/run`` runs this file at
the floors too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = """
import asyncio
import gc


async def test_an_async_test():
    await asyncio.sleep(0)


def test_a_sync_test_that_runs_a_program_with_its_own_loop():
    asyncio.run(asyncio.sleep(0))


def test_a_test_that_runs_the_garbage_collector():
    gc.collect()
"""


def test_a_program_run_after_an_async_test_leaves_no_event_loop_open(tmp_path: Path) -> None:
    (tmp_path / "test_loops.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_loops.py"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout, done.stdout
    assert "unclosed" not in done.stdout + done.stderr
