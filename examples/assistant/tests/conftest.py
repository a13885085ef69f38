"""Fixtures for the assistant's tests.

The assistant is a workspace member installed in the development environment, so the
tests import it as ``assistant``. They sit outside the library's ``tests/`` folder, so
its conftest (which enables ``pygents.pytest_plugin``) does not reach them when they
run alone: the plugin's fixtures are imported here instead of naming the plugin in
``pytest_plugins``, which pytest refuses in a conftest it only finds while collecting
(``uv run pytest .``, say).

Tests that need a system program (``bwrap``) follow the repository's one rule for
them, ``tests/system_programs.py``: skipped with the install line where it is missing,
failed under ``CI=true``. That folder is put on the path here so the rule is the same
module whether these tests run with the library's or alone.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pygents.pytest_plugin import pygents_isolated, recorder

from .session_models import Sessions

_REPOSITORY_TESTS = str(Path(__file__).resolve().parents[3] / "tests")
if _REPOSITORY_TESTS not in sys.path:
    sys.path.append(_REPOSITORY_TESTS)
system_programs = importlib.import_module("system_programs")

__all__ = ["new_session", "pygents_isolated", "recorder"]


def pytest_configure(config: pytest.Config) -> None:
    system_programs.register(config)


def pytest_runtest_setup(item: pytest.Item) -> None:
    system_programs.check_marks(item)


@pytest.fixture
async def new_session() -> AsyncIterator[Sessions]:
    """Builds sessions for a test and closes every one of them after it."""
    sessions = Sessions()
    yield sessions
    await sessions.close()
