from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

import system_programs
from pygents.testing import registries

pytest_plugins = ["pygents.pytest_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    system_programs.register(config)


def pytest_runtest_setup(item: pytest.Item) -> None:
    system_programs.check_marks(item)


@pytest.fixture(autouse=True)
def _no_worker_left_serving() -> Iterator[None]:
    """A test that ran a ``pygents.redis.Worker`` in this process leaves nothing in
    ``served_stats()``: a worker that stopped withdraws its report. One left behind
    would show a Mailbox column on every later test's dashboard, far from its cause;
    here it fails the test that left it, and is cleared."""
    yield
    stats = sys.modules.get("pygents.redis._worker.stats")
    if stats is None:  # no test has imported the Redis layer
        return
    left = dict(stats.SERVED.view)
    if left:
        for worker in {w for reports in stats.SERVED._by_worker.values() for w in reports}:
            stats.SERVED.withdraw(worker)
        pytest.fail(f"a Worker of this test still reports serving {sorted(left)}", pytrace=False)


def pytest_collection_finish(session: pytest.Session) -> None:
    """No test module may declare tools, hooks or agents at import: the plugin forgets
    only what a test declares, so those would stay registered for the whole run and
    refuse every later test that declares the same name (a fixture declares them)."""
    left = [name for registry in registries() for name in registry.names()]
    if left:
        raise pytest.UsageError(f"declared at import by a test module: {', '.join(left)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``PYGENTS_SVG_SNAPSHOTS=off`` deselects every SVG snapshot test (those using
    ``snap_compare``): the snapshots are pinned to the locked Textual's rendering, and
    the lowest-versions step of ``.ci/run`` runs an older Textual that draws the same
    screens with different SVG."""
    if os.environ.get("PYGENTS_SVG_SNAPSHOTS") != "off":
        return
    kept = [item for item in items if "snap_compare" not in getattr(item, "fixturenames", ())]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
