"""Fixtures for the Redis mailbox tests: a real ``redis-server`` per test.

Each server runs on a free loopback port in the test's own temporary directory,
with persistence off (``--save "" --appendonly no``), and is stopped afterwards.
Tests that need one are skipped, with the reason, only when ``redis-server`` is not
on ``PATH`` (CI installs it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from desk_tools import DeskTools, declare
from redis_helpers import NO_SERVER, Serving, running_server

from pygents.redis import Mailboxes, RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A running, empty ``redis-server``; ``stop()``/``start()`` restart it empty."""
    with running_server(tmp_path) as server:
        yield server


@pytest.fixture
def full_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A ``redis-server`` that holds 3 MB at most, evicting nothing: a full Redis
    refuses the writes that may grow its memory."""
    if not RedisServer.available():
        pytest.skip(NO_SERVER)
    full = ["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"]
    with RedisServer(tmp_path, extra_args=full) as server:
        yield server


@pytest.fixture
async def mailboxes(redis_server: RedisServer) -> AsyncIterator[Mailboxes]:
    async with Mailboxes(redis_server.url) as found:
        yield found


@pytest.fixture
async def serving() -> AsyncIterator[Serving]:
    found = Serving()
    try:
        yield found
    finally:
        await found.close()


@pytest.fixture
def desk_tools() -> DeskTools:
    """The control tests' tools, declared for this test only (`desk_tools.py`)."""
    return declare()
