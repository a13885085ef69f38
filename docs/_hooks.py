"""MkDocs build hook: the dashboard's screenshots are its snapshot tests' SVG files.

They live in ``tests/tui/__snapshots__/test_snapshots/`` and, for listen mode,
``tests/tui/listen/__snapshots__/test_listen_snapshots/`` (so a changed screen fails
a test); the site serves them as ``images/screens/<name>.svg`` without copies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

TESTS = Path(__file__).resolve().parent.parent / "tests/tui"
SNAPSHOTS = (
    TESTS / "__snapshots__/test_snapshots",
    TESTS / "listen/__snapshots__/test_listen_snapshots",
)


def on_files(files: Files, config: Any) -> Files:
    for svg in sorted(svg for folder in SNAPSHOTS for svg in folder.glob("*.svg")):
        files.append(File.generated(config, f"images/screens/{svg.name}", abs_src_path=str(svg)))
    return files
