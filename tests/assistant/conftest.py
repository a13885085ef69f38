"""The assistant example is not installed: its tests import it as ``examples.assistant``
from the repository root, which this puts on ``sys.path`` before they are collected."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from .session_models import Sessions  # noqa: E402 - needs ROOT on sys.path first


@pytest.fixture
async def new_session() -> AsyncIterator[Sessions]:
    """Builds sessions for a test and closes every one of them after it."""
    sessions = Sessions()
    yield sessions
    await sessions.close()
