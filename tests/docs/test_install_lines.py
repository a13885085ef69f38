"""No page tells its reader to install ``pygents`` from the package index.

The name ``pygents`` on the public index belongs to an unrelated project: ``pip
install pygents`` (or ``uv add "pygents[redis]"``, ...) installs that one, and in a
checkout uv refuses the self-dependency. The README and docs/getting-started.md say
how to install this project (a wheel built in a checkout, or ``-e .``); every other
install line must follow them.

A page may still *name* such a command to warn against it: in prose (not in a code
block), in a paragraph that says the name belongs to an unrelated project.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from doc_blocks import ROOT, blocks, pages
from install_commands import INSTALL

# A requirement naming this project's distribution, extras and version allowed.
PYGENTS = re.compile(r"^pygents(?:\s*\[[^\]]*\])?\s*(?:[<>=!~]=?.*|@.*)?$", re.IGNORECASE)
WARNING = "unrelated project"


def index_installs(text: str) -> list[str]:
    """The install commands in ``text`` that fetch ``pygents`` from an index."""
    found: list[str] = []
    for match in INSTALL.finditer(text):
        try:
            words = shlex.split(match["args"], comments=True)
        except ValueError:  # an unbalanced quote: fall back to plain words
            words = match["args"].split()
        if any(PYGENTS.match(word.strip("\"'")) for word in words):
            found.append(match.group(0).strip())
    return found


def _prose(page: Path) -> str:
    """``page`` without its code blocks, and without the paragraphs that warn about
    the unrelated project of the same name."""
    text = page.read_text()
    for block in blocks(page):
        text = text.replace(block.code, "")
    kept = [p for p in re.split(r"\n\s*\n", text) if WARNING not in p]
    return "\n\n".join(kept)


def _offences(page: Path) -> list[str]:
    where = page.relative_to(ROOT)
    found = [
        f"{block.where}: {command}"
        for block in blocks(page)
        for command in index_installs(block.code)
    ]
    found += [f"{where}: {command}" for command in index_installs(_prose(page))]
    return found


ALL_PAGES = pages(examples=True)


@pytest.mark.parametrize("page", ALL_PAGES, ids=[str(p.relative_to(ROOT)) for p in ALL_PAGES])
def test_no_page_installs_pygents_from_the_package_index(page: Path) -> None:
    offences = _offences(page)
    assert not offences, (
        "these lines install the unrelated 'pygents' of the package index; install the "
        f"wheel built in a checkout instead (see README.md): {offences}"
    )


@pytest.mark.parametrize(
    "line",
    [
        'uv add "pygents[redis]"        # or: pip install "pygents[redis]"',
        "pip install pygents",
        "pip3 install -U 'pygents[otel,tui]'",
        "python -m pip install pygents==0.1.0",
        "uv pip install pygents",
        "uv add pygents",
        "pipx install pygents",
        "poetry add pygents@^0.1",
        "PIP_INDEX_URL=https://pypi.org/simple pip install --upgrade pygents",
    ],
)
def test_the_check_catches_every_way_of_installing_from_the_index(line: str) -> None:
    assert index_installs(line), line


@pytest.mark.parametrize(
    "line",
    [
        'uv pip install "dist/pygents-0.1.0-py3-none-any.whl[redis]"',
        'uv pip install -e ".[all]"',
        "pip install uv",
        "uv add opentelemetry-distro",
        "uv tool install pygents-tui-helper",
        "pip install ./pygents",
        "uv build --wheel",
    ],
)
def test_the_check_leaves_installs_from_a_checkout_alone(line: str) -> None:
    assert not index_installs(line), line


def test_the_warnings_about_the_name_are_the_only_mentions_allowed() -> None:
    """The README warns with the very commands; only its warning paragraph is exempt."""
    readme = ROOT / "README.md"
    assert index_installs(readme.read_text())  # the warning names them ...
    assert not _offences(readme)  # ... and is the only place that does
