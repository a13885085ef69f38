"""MkDocs build hook: the dashboard's screenshots are its snapshot tests' SVG files.

They live in the ``__snapshots__/<test module>/`` folders under ``tests/tui/`` (so a
changed screen fails a test); the site serves each as
``images/screens/<its path under tests/tui, less "__snapshots__/">`` without copies:
``tests/tui/listen/__snapshots__/test_listen_attention/x.svg`` is
``images/screens/listen/test_listen_attention/x.svg``.

The pages link them by their path in the repository (``../tests/tui/...``), which is
what a reader browsing the repository on the forge follows; the site has no
``tests/`` folder, so this hook points those links at ``images/screens/`` before the
page is rendered (and before MkDocs checks its links). Every snapshot folder is
mapped, whatever test module made it, and a file name may hold the ``[80x24]`` a
parametrized test gives it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

TESTS = Path(__file__).resolve().parent.parent / "tests/tui"
# A link target, from any page, into a snapshot folder under tests/tui: group 1 is the
# folders between tests/tui/ and __snapshots__/ (with their slash), group 2 the rest.
_SNAPSHOT_LINK = re.compile(
    r"\]\((?:\.\./)+tests/tui/((?:[\w-]+/)*)__snapshots__/([\w-]+/[^()\s/]+\.svg)\)"
)


def site_path(svg: Path) -> str:
    """Where the site serves the snapshot ``svg`` (a file under `TESTS`)."""
    parts = [part for part in svg.relative_to(TESTS).parts if part != "__snapshots__"]
    return posixpath.join("images/screens", *parts)


def snapshots() -> list[Path]:
    """Every snapshot SVG under `TESTS`, in a stable order."""
    return sorted(TESTS.rglob("__snapshots__/*/*.svg"))


def on_files(files: Files, config: Any) -> Files:
    for svg in snapshots():
        files.append(File.generated(config, site_path(svg), abs_src_path=str(svg)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Links to a snapshot by its repository path, pointed at the site's copy."""
    screens = posixpath.relpath("images/screens", posixpath.dirname(page.file.src_uri) or ".")
    return _SNAPSHOT_LINK.sub(lambda found: f"]({screens}/{found[1]}{found[2]})", markdown)
