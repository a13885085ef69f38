"""The install commands of the documentation's code blocks, and fresh virtual
environments that run them as written.

Every install command in a code block of the README, docs/ or examples/ is either run
as written in a fresh virtual environment by one of `RUNNERS` (its block says so:
``<!-- example: run by tests/docs/<runner>.py -->``), or its block is a fragment that
says why it is `NOT_RUN` here (``pip install uv``: it installs the tool these tests
run with). ``test_install_commands.py`` checks that, and runs the wheel's lines;
``test_other_frameworks_guide.py`` runs the other frameworks' lines.

The other frameworks' lines install from the package index with pip, which takes
minutes: those run under ``CI=true`` only (`in_ci_only`), and are skipped elsewhere
with the command that runs them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from doc_blocks import Block, blocks

__all__ = [
    "INSTALL",
    "NOT_RUN",
    "RUNNERS",
    "SHELL",
    "Venv",
    "in_ci_only",
    "install_blocks",
    "is_install",
]

# An installer and its install verb: pip, pip3, python -m pip, uv pip, uv add, uv tool,
# pipx, poetry, pdm, conda, ...
INSTALL = re.compile(
    r"\b(?:(?:python3?\s+-m\s+)?pip3?|uv\s+pip|uv\s+tool|uv|pipx|poetry|pdm|conda|mamba"
    r"|rye|hatch)\s+(?:install|add)\b(?P<args>[^`\n]*)"
)
SHELL = frozenset({"console", "bash", "sh", "shell"})
RUNNERS = frozenset(
    {"tests/docs/test_install_commands.py", "tests/docs/test_other_frameworks_guide.py"}
)
NOT_RUN = "not run here"
"""What a fragment's reason says when it holds an install command no test runs."""
LIMIT = 900  # seconds: a hang guard only, for one install from the package index


def is_install(command: str) -> bool:
    return INSTALL.search(command) is not None


def install_blocks(page: Path) -> list[Block]:
    """The shell blocks of ``page`` that hold an install command."""
    return [b for b in blocks(page) if b.language in SHELL and is_install(b.code)]


def in_ci_only(module: str) -> pytest.MarkDecorator:
    """Skip unless ``CI=true``: the test installs from the package index."""
    return pytest.mark.skipif(
        os.environ.get("CI", "").lower() != "true",
        reason="installs from the package index into fresh virtual environments; "
        f"run it with: CI=true uv run pytest {module}",
    )


@dataclass(frozen=True)
class Venv:
    """A fresh virtual environment, and commands run in it as in a shell where it is
    activated (``. .venv/bin/activate``)."""

    root: Path

    @classmethod
    def create(cls, root: Path, *, uv: bool = False) -> Venv:
        """``python -m venv ROOT`` (``uv venv ROOT`` for a page that says uv), with this
        suite's Python."""
        if uv:
            command = [_uv(), "venv", "--quiet", "--python", sys.executable, str(root)]
        else:
            command = [sys.executable, "-m", "venv", str(root)]
        done = subprocess.run(
            command, env=_clean(), capture_output=True, text=True, timeout=LIMIT, check=False
        )
        assert done.returncode == 0, done.stderr
        return cls(root)

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def environment(self, **settings: str) -> dict[str, str]:
        """The activated environment: its ``bin`` first on ``PATH`` (and not this suite's
        environment's), ``VIRTUAL_ENV`` set, none of the caller's ``OTEL_*``,
        ``PYGENTS_*`` or ``OPENAI_*`` settings; then ``settings``."""
        env = {
            key: value
            for key, value in _clean().items()
            if not key.startswith(("OTEL_", "PYGENTS_", "OPENAI_"))
        }
        ours = str(Path(sys.executable).parent)
        path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
        # The uv that runs this suite, for a page's uv commands (last: the reader's own).
        uv = [str(Path(os.environ["UV"]).parent)] if os.environ.get("UV") else []
        env["PATH"] = os.pathsep.join([str(self.root / "bin"), *path, *uv])
        env["VIRTUAL_ENV"] = str(self.root)
        env.update(settings)
        return env

    def run(self, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """``command`` as written, by ``bash`` in the activated environment."""
        return subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=self.environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=LIMIT,
            check=False,
        )


def _uv() -> str:
    """The uv that runs this suite (``uv run`` sets ``UV``), else the one on PATH."""
    return os.environ.get("UV") or "uv"


def _clean() -> dict[str, str]:
    """This process's environment without what points Python or uv at this checkout's
    environment (``uv run`` sets them)."""
    drop = ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH", "PYTHONHOME")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env
