"""pytest fixtures for code built on pygents.

Enable with ``pytest_plugins = ["pygents.pytest_plugin"]`` in your ``conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pygents.testing import RecordingSubscriber, isolated_registries


@pytest.fixture(autouse=True)
def pygents_isolated() -> Iterator[None]:
    """Forget the tools, hooks and agents a test defines once it ends."""
    with isolated_registries():
        yield


@pytest.fixture
def recorder() -> Iterator[RecordingSubscriber]:
    """A subscribed `RecordingSubscriber`."""
    with RecordingSubscriber().subscribed() as rec:
        yield rec
