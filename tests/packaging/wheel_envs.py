"""Building the wheel and installing it into clean environments with uv (helpers for
the packaging tests and their fixtures)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A hang guard only: a build or an install that takes this long is stuck.
LIMIT = 600


def uv_command() -> str:
    """The uv that runs this suite (``uv run`` sets ``UV``), else the one on PATH."""
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        pytest.fail("the packaging tests need uv: run them with `uv run pytest`")
    return found


def clean_env() -> dict[str, str]:
    """This process's environment without what points uv or Python at the dev environment."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH", "PYTHONHOME")
    }
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def run(args: Sequence[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command to completion; fail the test with its output if it fails."""
    result = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr}")
    return result


@dataclass(frozen=True)
class Installed:
    """A virtual environment holding the wheel with some extras, and nothing else."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def call(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``args[0]`` from the environment's ``bin`` with the rest as arguments;
        the result is returned whatever the exit code."""
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            cwd=self.root,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=LIMIT,
            check=False,
        )

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return self.call("python", "-c", code)
