"""The assistant is a project of its own (``pygents-assistant``, a member of the uv
workspace at the checkout's root): its wheel, built by hatchling, holds the package,
its ``py.typed`` marker and its console script, and requires the library by name."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = os.environ.get("UV") or shutil.which("uv")  # ``uv run`` sets UV
    if not uv:
        pytest.fail("building the assistant's wheel needs uv: run the tests with `uv run pytest`")
    out = tmp_path_factory.mktemp("assistant-dist")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    built = subprocess.run(
        [uv, "build", "--wheel", "--quiet", "--out-dir", str(out), str(PROJECT)],
        env={**env, "UV_PYTHON_DOWNLOADS": "never"},
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard only
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("pygents_assistant-*.whl")
    return found


def test_the_wheel_holds_the_package_and_its_type_marker(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
    assert {"assistant/__init__.py", "assistant/__main__.py", "assistant/py.typed"} <= files
    # Only the package: no tests, and none of the library's code.
    assert {name.split("/")[0] for name in files if not name.startswith("pygents_assistant-")} == {
        "assistant"
    }


def test_the_wheel_declares_the_console_script_and_requires_the_library(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        info = {
            name.rsplit("/", 1)[-1]: name for name in archive.namelist() if ".dist-info/" in name
        }
        scripts = archive.read(info["entry_points.txt"]).decode()
        metadata = email.message_from_bytes(archive.read(info["METADATA"]))
    assert "pygents-assistant = assistant.__main__:main" in scripts
    required = {
        Requirement(text).name: Requirement(text) for text in metadata.get_all("Requires-Dist", [])
    }
    assert required["pygents"].extras == {"otel", "tui"}
    assert str(required["openai"].specifier) == ">=3.19"
    assert metadata.get_all("Provides-Extra") is None
