"""The dashboard's state package stays pure: no Textual, no Rich, no OpenTelemetry,
so that any source can feed it and anything can read it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pygents_tui.state

STATE = Path(pygents_tui.state.__file__).parent
FORBIDDEN = ("textual", "rich", "opentelemetry", "pygents_otel", "grpc", "aiohttp", "google")


def test_the_state_package_imports_no_ui_and_no_telemetry_library() -> None:
    code = (
        "import sys, pygents_tui.state\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_no_module_of_the_state_package_names_a_ui_or_telemetry_library() -> None:
    """Also the imports a first import would not run (under ``TYPE_CHECKING``, say)."""
    named: dict[str, str] = {}
    for path in sorted(STATE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                modules = [node.module]
            for module in modules:
                if module.split(".")[0] in FORBIDDEN or module.startswith("pygents_tui.listen"):
                    named[path.name] = module
    assert named == {}
    walked = {path.name for path in STATE.glob("*.py")}
    # The walk did look at the package, the sources' seam and contents' bounds included.
    assert {"_view.py", "_sources.py", "_contents.py", "_capabilities.py"} <= walked
