"""Fixtures for the dashboard's Redis source: a real ``redis-server`` per test (as in
tests/redis), the real worker processes of tests/redis (``control_worker.py``), and
``pygents-tui listen``'s app with a `RedisSource` attached, run under Pilot."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

# The helpers of the Redis tests (redis_helpers, control_worker.py) and of the
# listener's (otlp_requests), importable however the tests are started.
_TESTS = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_TESTS / "redis"), str(_TESTS / "tui" / "listen")]

from redis_console import Console, MakeConsole  # noqa: E402
from redis_helpers import running_server  # noqa: E402

from pygents.redis import RedisServer  # noqa: E402
from pygents_tui.cli.listen import listen_app  # noqa: E402
from pygents_tui.feeders import FleetModel  # noqa: E402
from pygents_tui.feeders.redis.source import RedisSource  # noqa: E402


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A running, empty ``redis-server``; ``stop()``/``start()`` restart it empty."""
    with running_server(tmp_path) as server:
        yield server


@pytest.fixture
async def console(redis_server: RedisServer) -> AsyncIterator[MakeConsole]:
    """``console(control=True, url=None)``: a dashboard reading the test's Redis (or
    ``url``), surveying every 0.1 s; its source is closed at the end."""
    made: list[RedisSource] = []

    def make(control: bool = True, url: str | None = None) -> Console:
        fleet = FleetModel(stale_after=3600.0)
        source = RedisSource(
            fleet, url or redis_server.url, control=control, interval=0.1, timeout=1.0
        )
        fleet.store.sources.attach(source)
        made.append(source)
        return Console(listen_app(fleet, "127.0.0.1", None, None), fleet, source)

    yield make
    for source in made:
        await source.close()
