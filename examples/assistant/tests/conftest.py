"""Fixtures for the assistant's tests.

The assistant is a workspace member installed in the development environment, so the
tests import it as ``assistant``. They sit outside the library's ``tests/`` folder, so
its conftest (which enables ``pygents.pytest_plugin``) does not reach them when they
run alone: the plugin's fixtures are imported here instead of naming the plugin in
``pytest_plugins``, which pytest refuses in a conftest it only finds while collecting
(``uv run pytest .``, say).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pygents.pytest_plugin import pygents_isolated, recorder

from .session_models import Sessions

__all__ = ["new_session", "pygents_isolated", "recorder"]


@pytest.fixture
async def new_session() -> AsyncIterator[Sessions]:
    """Builds sessions for a test and closes every one of them after it."""
    sessions = Sessions()
    yield sessions
    await sessions.close()
