"""Parameter descriptions read from a docstring, for the tool schemas.

People already document parameters in their docstrings, in one of three common
layouts; reading them means a tool's schema describes its parameters without the
author repeating themselves. Recognised:

- Google style: an ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Keyword Args:``,
  ``Attributes:``...) header, then ``name (type): text`` entries, continuation lines
  indented further;
- NumPy style: a ``Parameters`` header underlined with dashes, then ``name : type``
  lines with the text indented below (``x, y : float`` describes both);
- reST / Sphinx: ``:param name: text`` or ``:param type name: text`` fields.

Anything else is ignored: this is a best-effort reader, never an error.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parameter_docs"]

_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "attributes",
        "keyword args",
        "keyword arguments",
        "other parameters",
        "parameters",
        "params",
    }
)
# Each written so that a line has one way to match: no two neighbouring parts can
# take the same characters, so a long line that fails does not backtrack for ages.
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\)\s*)?:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_REST_FIELD = re.compile(r"^:(?:param|parameter|arg|argument|key|keyword)\s([^:]*):(.*)$")
_IDENTIFIER = re.compile(r"^\*{0,2}(\w+)$")
_UNDERLINE = re.compile(r"^-{3,}$")


def parameter_docs(doc: str | None) -> dict[str, str]:
    """``{parameter name: description}`` from ``doc``; ``{}`` when it documents none."""
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    found: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        title = line.strip().lower()
        if title.rstrip(":") in _SECTIONS:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _UNDERLINE.match(nxt):
                i = _numpy_section(lines, i + 2, _indent(line), found)
                continue
            if title.endswith(":"):
                i = _google_section(lines, i + 1, _indent(line), found)
                continue
        i += 1
    _rest_fields(lines, found)
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _add(found: dict[str, str], names: list[str], text: list[str]) -> None:
    description = " ".join(" ".join(text).split())
    for name in names:
        if description and name not in found:
            found[name] = description


def _google_section(lines: list[str], i: int, header: int, found: dict[str, str]) -> int:
    """Read entries until a line indented no deeper than the header; the next index."""
    entry_indent: int | None = None
    names: list[str] = []
    text: list[str] = []
    while i < len(lines):
        line = lines[i]
        if line.strip():
            indent = _indent(line)
            if indent <= header:
                break
            if entry_indent is None:
                entry_indent = indent
            match = _GOOGLE_ENTRY.match(line.strip()) if indent <= entry_indent else None
            if match:
                _add(found, names, text)
                names, text = [match.group(1)], [match.group(2) or ""]
            else:
                text.append(line.strip())
        i += 1
    _add(found, names, text)
    return i


def _numpy_section(lines: list[str], i: int, header: int, found: dict[str, str]) -> int:
    """Read entries until the next underlined header; the index of that header."""
    names: list[str] = []
    text: list[str] = []
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and _UNDERLINE.match(nxt):
            break
        if line.strip():
            match = _NUMPY_ENTRY.match(line.strip()) if _indent(line) <= header else None
            if match:
                _add(found, names, text)
                names = [n.strip().lstrip("*") for n in match.group(1).split(",")]
                text = []
            elif names:
                text.append(line.strip())
        i += 1
    _add(found, names, text)
    return i


def _rest_fields(lines: list[str], found: dict[str, str]) -> None:
    names: list[str] = []
    text: list[str] = []
    field_indent = 0
    for line in lines:
        field = _REST_FIELD.match(line.strip())
        words = field.group(1).split() if field else []  # "[type] name"
        name = _IDENTIFIER.match(words[-1]) if words else None
        if field and name:
            _add(found, names, text)
            names, text, field_indent = [name.group(1)], [field.group(2)], _indent(line)
        elif names and line.strip() and _indent(line) > field_indent:
            text.append(line.strip())
        else:
            _add(found, names, text)
            names, text = [], []
    _add(found, names, text)
