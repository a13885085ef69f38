"""The README and the documentation link only to files that exist, and every page of
docs/ can be found.

The pages are read in two places: the built site (``mkdocs build --strict`` checks
links between pages there) and the repository on the forge, which renders each
Markdown file on its own. Only a path that exists in the repository works in the
second one, so a link or image is checked here against the checkout itself. Code
(fenced blocks and inline spans) is not text a reader clicks, and is left out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from doc_blocks import ROOT, pages

DOCS = ROOT / "docs"
_FENCED = re.compile(r"^([ \t]*)(```+|~~~+).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)[^`].*?\1", re.DOTALL)
# [text](target) and ![alt](target), with an optional "title" after the target.
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def link_targets(text: str) -> list[str]:
    """The targets of the links and images of Markdown ``text``, outside code."""
    prose = _INLINE_CODE.sub("", _FENCED.sub("", text))
    return _LINK.findall(prose)


def local_path(page: Path, target: str) -> Path | None:
    """The file a relative ``target`` of ``page`` names; ``None`` for a web address
    or an anchor of the page itself."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
        return None
    path = re.split(r"[#?]", target, maxsplit=1)[0]
    return (page.parent / path).resolve()


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The links of ``page`` to a file that does not exist in the tree under ``root``."""
    broken = []
    for target in link_targets(page.read_text()):
        path = local_path(page, target)
        if path is None:
            continue
        if not path.exists() or not path.is_relative_to(root):
            broken.append(f"{page.relative_to(root)}: {target}")
    return broken


def nav_pages(nav: Any) -> set[str]:
    """Every page the mkdocs ``nav`` names, however deep its sections go."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(nav_pages(value) for value in nav.values()))
    return set()


def docs_pages() -> set[str]:
    return {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}


def test_every_relative_link_and_image_points_at_a_file_in_the_repository() -> None:
    broken = [line for page in pages(examples=True) for line in broken_links(page)]
    assert not broken, "these links name no file of the repository:\n" + "\n".join(broken)


def test_the_link_check_sees_links_and_images_and_skips_code() -> None:
    """A parser that found nothing would pass the test above vacuously."""
    text = (
        'See [a](a.md#part), ![b](img/b.svg "title") and [web](https://x.org).\n'
        "Not `[c](c.md)`, nor:\n\n```text\n[d](d.md)\n```\n"
    )
    assert link_targets(text) == ["a.md#part", "img/b.svg", "https://x.org"]
    assert len(link_targets((ROOT / "README.md").read_text())) >= 10
    assert any(".svg" in target for target in link_targets((DOCS / "dashboard.md").read_text()))


def test_a_link_to_a_missing_file_or_out_of_the_repository_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "there.md").write_text("# here\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "[ok](../there.md#here) [web](https://example.org/gone.md) [self](#top)\n"
        "![gone](images/screens/x.svg) [out](../../elsewhere.md)\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "docs/page.md: images/screens/x.svg",
        "docs/page.md: ../../elsewhere.md",
    ]


def test_every_page_under_docs_is_in_the_site_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    missing = docs_pages() - nav_pages(config["nav"])
    assert not missing, f"add these pages to the nav of mkdocs.yml: {sorted(missing)}"


def test_every_page_under_docs_is_linked_from_the_index() -> None:
    """The forge has no nav: docs/index.md is the table of contents a reader of the
    repository sees (README.md links it)."""
    index = DOCS / "index.md"
    linked = {
        path.relative_to(DOCS).as_posix()
        for target in link_targets(index.read_text())
        if (path := local_path(index, target)) is not None and path.is_relative_to(DOCS)
    }
    missing = docs_pages() - linked - {"index.md"}
    assert not missing, f"link these pages from docs/index.md: {sorted(missing)}"
