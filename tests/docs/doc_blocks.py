"""The fenced code blocks of the README and the documentation, as readers see them.

One parser for every page, so that every test of the documentation reads the same
blocks the same way. A block may carry a marker on the line just before its fence,
an HTML comment that the rendered page does not show but that anyone editing the
page does:

* ``<!-- example: complete -->``: a whole program; the suite runs it as written.
* ``<!-- example: pytest -->``: a test module; the suite runs it with pytest, beside
  the page's own ``conftest.py`` block if it has one.
* ``<!-- example: run by tests/<path>.py -->``: that test module runs it (a program
  with a file name in its first comment line, or a command that runs one).
* ``<!-- example: fragment: <why> -->``: not meant to run on its own, on purpose,
  and the reason is given. A Python fragment must still compile.

A block in a language that runs (``python``, ``console``, ...) must carry one of them:
``test_code_blocks.py`` fails otherwise, so a new snippet is either run or declared
a fragment by the person who wrote it.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ROOT",
    "RUNNABLE",
    "Block",
    "blocks",
    "commands",
    "named_files",
    "pages",
    "reader_environment",
    "shell_commands",
]

ROOT = Path(__file__).resolve().parents[2]
# Languages whose blocks are programs or commands, as opposed to output or config.
RUNNABLE = frozenset({"python", "py", "console", "bash", "sh", "shell", "pycon"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^`\n]*)$")
_MARKER = re.compile(
    r"^\s*<!--\s*example:\s*(?P<kind>complete|pytest|fragment|run by)\b:?\s*"
    r"(?P<detail>.*?)\s*-->\s*$"
)
_FILE_NAME = re.compile(r"^#\s*(?P<name>[\w./-]+\.py)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text, and its marker."""

    page: Path
    line: int  # of the opening fence, counted from 1
    language: str
    code: str
    marker: str | None  # "complete", "pytest", "fragment", "run by" or None
    detail: str  # a fragment's reason, or the module that runs the block

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def file_name(self) -> str | None:
        """The file a block says it is, in its first line (``# clerk.py — ...``)."""
        first = self.code.split("\n", 1)[0]
        found = _FILE_NAME.match(first)
        return found["name"] if found else None

    @property
    def runner(self) -> Path | None:
        """The test module a ``run by`` marker names."""
        return ROOT / self.detail if self.marker == "run by" and self.detail else None


def pages(*, examples: bool = False) -> list[Path]:
    """The README and every page under docs/ (and examples/**/README* if asked)."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    if examples:
        found += sorted(p for p in (ROOT / "examples").rglob("README*") if p.is_file())
    return found


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order, with the indentation of a block inside
    a list item removed (what a reader would paste)."""
    lines = page.read_text().split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        start = index
        fence, indent = opening["fence"], opening["indent"]
        body: list[str] = []
        index += 1
        while index < len(lines) and not re.match(
            rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[index]
        ):
            body.append(lines[index].removeprefix(indent))
            index += 1
        index += 1  # the closing fence
        previous = next((line for line in reversed(lines[:start]) if line.strip()), "")
        marker = _MARKER.match(previous)
        found.append(
            Block(
                page=page,
                line=start + 1,
                language=opening["info"].strip().split(" ")[0].lower(),
                code=textwrap.dedent("\n".join(body) + "\n"),
                marker=marker["kind"] if marker else None,
                detail=marker["detail"] if marker else "",
            )
        )
    return found


def named_files(page: Path) -> dict[str, str]:
    """The Python blocks of ``page`` that name their file in their first line, by
    name: what a reader saves to run the page's programs."""
    named: dict[str, str] = {}
    for block in blocks(page):
        if block.language == "python" and block.file_name is not None:
            assert block.file_name not in named, f"{block.where}: {block.file_name} twice"
            named[block.file_name] = block.code
    return named


def commands(block: Block) -> list[str]:
    """The commands of a console block, continuation lines joined and comments and
    prompts dropped, as a reader would type them (none for another language)."""
    if block.language != "console":
        return []
    found: list[str] = []
    joined = re.sub(r"\\\n\s*", "", block.code)
    for line in joined.split("\n"):
        command = re.sub(r"\s+#.*$", "", line.removeprefix("$ ")).strip()
        if command and not command.startswith("#"):
            found.append(command)
    return found


def shell_commands(page: Path) -> list[str]:
    """Every command in the console blocks of ``page`` (`commands`), in order."""
    return [command for block in blocks(page) for command in commands(block)]


def reader_environment(**settings: str) -> dict[str, str]:
    """The environment of a reader who runs a page's commands: this environment's
    ``python`` and ``pygents-tui`` first on ``PATH`` (as in an activated virtual
    environment), none of the caller's ``OTEL_*`` or ``PYGENTS_*`` settings, and then
    ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYGENTS_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(settings)
    return env
