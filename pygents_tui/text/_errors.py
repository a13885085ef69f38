"""Exceptions as the dashboard shows them: one bounded line that names an exception
group's leaves, and a bounded traceback. Previews, never the exception itself.

An ``ExceptionGroup`` says only "unhandled errors in a TaskGroup (5 sub-exceptions)":
what went wrong is in its leaves, possibly inside nested groups. So the line names
the first few leaves (nested groups flattened) and counts the rest, and the traceback
follows the group with the first few leaves' own tracebacks. Everything is cut to a
width: an exception's message is the program's text, of any size.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Final

from pygents_tui.text._preview import preview

__all__ = ["Traceback", "describe", "leaves", "summary"]

LEAVES_NAMED: Final = 3  # leaves named in a one-line summary
LEAVES_TRACED: Final = 5  # leaves whose tracebacks are kept
LEAF_WIDTH: Final = 100  # characters per leaf named in a summary
FRAMES: Final = 20  # innermost frames kept per traceback
_DEPTH: Final = 32  # nested groups walked before a group is taken as a leaf
_LINE: Final = 300  # characters per traceback line
# Where the frames that run the program come from (the event loop, Textual's worker,
# this dashboard): the outermost frames of a workload's traceback, none the program's.
# Textual's place is looked up, not imported: the state package uses this module and
# imports no UI library.
_TEXTUAL = importlib.util.find_spec("textual")
_RUNNERS: Final = tuple(
    os.path.dirname(path) + os.sep
    for path in (
        asyncio.__file__,
        _TEXTUAL.origin if _TEXTUAL else None,
        os.path.dirname(os.path.dirname(__file__)) + os.sep + "__init__.py",  # pygents_tui
    )
    if path
)


def leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``error``, nested groups flattened, in order; ``error``
    itself when it is no group."""
    stack: list[tuple[BaseException, int]] = [(error, 0)]
    while stack:
        exc, depth = stack.pop()
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions and depth < _DEPTH:
            stack.extend((inner, depth + 1) for inner in reversed(exc.exceptions))
        else:
            yield exc


def _message(error: BaseException) -> str:
    try:
        return str(error)
    except Exception as exc:  # the program's __str__ is the program's
        return f"<str() failed ({type(exc).__name__})>"


def describe(error: BaseException, width: int = 120) -> str:
    """``Type: message`` on one line, at most ``width`` characters."""
    name = preview(type(error).__name__, 60)
    message = _message(error)
    if not message:
        return name
    return f"{name}: {preview(message, max(width - len(name) - 2, 10))}"


def summary(
    error: BaseException,
    width: int = 300,
    brief: Callable[[BaseException, int], str] = describe,
) -> str:
    """One line for ``error``: ``brief(error, width)``, or for a group its message
    followed by its first leaves (each ``brief``) and how many more there are.

    ``brief`` is how one exception is shown: `describe` (``Type: message``) or
    `preview` (its ``repr``), as the place showing it already does."""
    if not isinstance(error, BaseExceptionGroup):
        return preview(brief(error, width), width)
    found = leaves(error)
    named = [brief(leaf, LEAF_WIDTH) for leaf in islice(found, LEAVES_NAMED)]
    more = sum(1 for _ in found)  # counted, not kept
    if more:
        named.append(f"+{more} more")
    return preview(f"{describe(error, width)}: {'; '.join(named)}", width)


def _shown(filename: str) -> str:
    """A file under the current directory by its relative path, as pytest shows it:
    shorter in a narrow panel, and the same wherever the project is checked out."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if relative.startswith(os.pardir) else relative


def _frames(error: BaseException) -> tuple[traceback.StackSummary, int]:
    """The innermost frames of ``error``'s traceback (their source lines are read only
    when shown), and how many outer ones were left out: at most `FRAMES`, and not
    the outermost ones that merely run the program (Textual's worker, asyncio)."""
    walked = list(traceback.walk_tb(error.__traceback__))
    runners = 0
    while runners < len(walked) - 1 and walked[runners][0].f_code.co_filename.startswith(_RUNNERS):
        runners += 1
    walked = walked[runners:]
    kept = traceback.StackSummary.from_list(
        [
            traceback.FrameSummary(
                _shown(frame.f_code.co_filename), line, frame.f_code.co_name, lookup_line=False
            )
            for frame, line in walked[-FRAMES:]
        ]
    )  # built by hand: `StackSummary.extract` would also stat every file, now
    return kept, runners + len(walked) - len(kept)


@dataclass(frozen=True, slots=True)
class Traceback:
    """Where an exception was raised, kept as file names, line numbers and function
    names (no frames, no locals, no exception): the exception itself and, for a
    group, its first leaves, each with at most `FRAMES` frames."""

    parts: tuple[tuple[str, traceback.StackSummary, int], ...]  # heading, frames, left out
    leaves: int  # a group's leaves in all (0: no group)

    @classmethod
    def of(cls, error: BaseException) -> Traceback:
        parts = [(describe(error, _LINE), *_frames(error))]
        count = 0
        if isinstance(error, BaseExceptionGroup):
            for count, leaf in enumerate(leaves(error), start=1):
                if count <= LEAVES_TRACED:
                    parts.append((describe(leaf, _LINE), *_frames(leaf)))
        return cls(tuple(parts), count)

    def lines(self) -> list[str]:
        """The traceback as text lines, most recent call last, as Python prints it.
        Source lines are read from the files now."""
        out: list[str] = []
        for index, (heading, frames, left_out) in enumerate(self.parts):
            if index:
                out.append(f"── exception {index} of {self.leaves} in the group ──")
            if frames or left_out:
                out.append("Traceback (most recent call last):")
            if left_out:
                out.append(f"  … {left_out} earlier frame(s)")
            for block in frames.format():
                out.extend(preview(line, _LINE) for line in block.rstrip("\n").split("\n"))
            out.append(heading)
        shown = len(self.parts) - 1
        if self.leaves > shown:
            out.append(f"── and {self.leaves - shown} more in the group ──")
        return out
