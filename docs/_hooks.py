"""MkDocs build hook: the dashboard's screenshots are its snapshot tests' SVG files.

They live in ``tests/tui/__snapshots__/test_snapshots/`` and, for listen mode,
``tests/tui/listen/__snapshots__/test_listen_snapshots/`` (so a changed screen fails
a test); the site serves them as ``images/screens/<name>.svg`` without copies.

The pages link them by their path in the repository (``../tests/tui/...``), which is
what a reader browsing the repository on the forge follows; the site has no
``tests/`` folder, so this hook points those links at ``images/screens/`` before the
page is rendered (and before MkDocs checks its links).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

TESTS = Path(__file__).resolve().parent.parent / "tests/tui"
SNAPSHOTS = (
    TESTS / "__snapshots__/test_snapshots",
    TESTS / "listen/__snapshots__/test_listen_snapshots",
)
# A link target, from any page, into one of SNAPSHOTS: its file name is group 1.
_SNAPSHOT_LINK = re.compile(
    r"\]\((?:\.\./)+tests/tui/(?:listen/)?__snapshots__/test_(?:listen_)?snapshots/"
    r"([\w-]+\.svg)\)"
)


def on_files(files: Files, config: Any) -> Files:
    for svg in sorted(svg for folder in SNAPSHOTS for svg in folder.glob("*.svg")):
        files.append(File.generated(config, f"images/screens/{svg.name}", abs_src_path=str(svg)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Links to a snapshot by its repository path, pointed at the site's copy."""
    screens = posixpath.relpath("images/screens", posixpath.dirname(page.file.src_uri) or ".")
    return _SNAPSHOT_LINK.sub(lambda found: f"]({screens}/{found[1]})", markdown)
