from __future__ import annotations

import pytest

from pygents.testing import registries

pytest_plugins = ["pygents.pytest_plugin"]


def pytest_collection_finish(session: pytest.Session) -> None:
    """No test module may declare tools, hooks or agents at import: the plugin forgets
    only what a test declares, so those would stay registered for the whole run and
    refuse every later test that declares the same name (a fixture declares them)."""
    left = [name for registry in registries() for name in registry.names()]
    if left:
        raise pytest.UsageError(f"declared at import by a test module: {', '.join(left)}")
