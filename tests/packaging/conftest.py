"""Fixtures for the packaging tests: one wheel built from this checkout per session, and
clean virtual environments with that wheel installed, one per set of extras.

The environments are made with uv, as the README tells users to: ``uv venv`` and
``uv pip install "WHEEL[extra]"``. uv's cache already holds every package the lock
names, so an install costs a resolution and hard links, not downloads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from wheel_envs import ROOT, Installed, run, uv_command


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, built once per session (``uv build --wheel``)."""
    out = tmp_path_factory.mktemp("dist")
    run([uv_command(), "build", "--wheel", "--quiet", "--out-dir", out, ROOT], cwd=out)
    (built,) = out.glob("pygents-*.whl")
    return built


@pytest.fixture(scope="session")
def install(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Installed]:
    """``install("otel")`` gives a fresh environment with ``WHEEL[otel]`` (``""``: the core
    alone); each set of extras is installed once per session and shared."""
    made: dict[str, Installed] = {}

    def make(extras: str) -> Installed:
        if extras not in made:
            root = tmp_path_factory.mktemp(f"venv-{extras or 'core'}")
            run([uv_command(), "venv", "--quiet", "--python", sys.executable, root], cwd=root)
            requirement = f"{wheel}[{extras}]" if extras else str(wheel)
            python = root / "bin" / "python"
            run([uv_command(), "pip", "install", "--quiet", "--python", python, requirement], root)
            made[extras] = Installed(root)
        return made[extras]

    return make
