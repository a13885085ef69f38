"""MkDocs build hook: the dashboard's screenshots are its snapshot tests' SVG files.

They live in ``tests/tui/__snapshots__/test_snapshots/`` (so a changed screen fails
a test); the site serves them as ``images/screens/<name>.svg`` without copies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

SNAPSHOTS = Path(__file__).resolve().parent.parent / "tests/tui/__snapshots__/test_snapshots"


def on_files(files: Files, config: Any) -> Files:
    for svg in sorted(SNAPSHOTS.glob("*.svg")):
        files.append(File.generated(config, f"images/screens/{svg.name}", abs_src_path=str(svg)))
    return files
