"""The site shows every screenshot a page links: the build hook (``docs/_hooks.py``)
maps each snapshot a page names by its repository path to a file the site serves.
A link it does not map is a broken image on the site (``mkdocs build --strict`` in
CI counts it too; this finds it in ``uv run pytest``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType, SimpleNamespace

from doc_blocks import ROOT

DOCS = ROOT / "docs"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "_hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_snapshot_a_page_links_is_served_by_the_site() -> None:
    hooks = _hooks()
    served = {hooks.site_path(svg) for svg in hooks.snapshots()}
    linked = 0
    for page in sorted(DOCS.rglob("*.md")):
        source = page.relative_to(DOCS).as_posix()
        markdown = page.read_text()
        rendered = hooks.on_page_markdown(
            markdown, SimpleNamespace(file=SimpleNamespace(src_uri=source)), None, None
        )
        assert "__snapshots__" not in rendered, f"{source}: a snapshot link the hook left"
        for target in re.findall(r"\]\(([^)\s]*images/screens/[^)\s]+)\)", rendered):
            linked += 1
            site = Path(source).parent / target
            assert Path(*(p for p in site.parts if p != "..")).as_posix() in served, target
    assert linked >= 15  # dashboard.md alone links more than that


def test_snapshots_of_any_test_module_and_parametrized_names_are_mapped() -> None:
    hooks = _hooks()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="guides/page.md"))
    link = "![x](../../tests/tui/listen/__snapshots__/test_listen_attention/a[80x24].svg)"
    assert hooks.on_page_markdown(link, page, None, None) == (
        "![x](../images/screens/listen/test_listen_attention/a[80x24].svg)"
    )
