"""Text from the program or the network made safe to draw: every control character and
every invisible format character is shown as a visible stand-in and never reaches the
terminal.

Why the dashboard does this itself: Rich's ``Text`` and Textual's ``Content`` drop only
BEL, BS, VT, FF and CR, and Textual's ``Log`` replaces only U+0000..U+0014. ESC, the
other C0 codes, DEL and the C1 codes (U+0080..U+009F: U+009B is a one-byte CSI) pass
through to the terminal, which obeys them: ``ESC ] 0 ; … BEL`` renames the window,
``ESC ] 52 ; …`` writes the clipboard, ``ESC [ 2 J`` clears the screen. A name, a value
or a message sent over OTLP (or made by a tool) must never do that, so every place that
hands such text to a widget goes through `visible` (or `pygents_tui.text._plain.plain`,
which builds the Rich ``Text``). This module uses the standard library only: the
dashboard's model, which runs without the 'tui' extra, cuts previews with it.

Format characters (Unicode category Cf) are the other half of that: bidi controls
(U+202A..U+202E, U+2066..U+2069) reorder what follows them, and zero-width ones
(U+200B..U+200F, U+2060, U+FEFF...) draw nothing, so ``billing\u200b`` looks exactly
like ``billing``, in a table and in a confirmation naming what it acts on. Rich and
Textual pass them all through.

How each is shown:

- C0 codes and DEL as their Unicode control pictures: ``␛`` for ESC, ``␇`` for BEL,
  ``␀`` for NUL, ``␡`` for DEL (one cell each, so columns and cut widths still hold);
- C1 codes, which have no pictures, as Python-style escapes: ``\\x9b``;
- format characters as Python-style escapes too: ``\\u200b``, ``\\u202e``,
  ``\\U000e0041`` (ASCII, so a cell a character: cut what `visible` returned, and
  its length is its width);
- on one line (the default): a line break (``\\n``, ``\\r\\n`` or a lone ``\\r``) as
  ``⏎`` and a tab as a space;
- with ``lines=True`` (the inspector, tracebacks, a toast): ``\\n`` and ``\\r\\n`` are
  line breaks, tabs are expanded to spaces, a lone ``\\r`` is ``␍``.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["visible"]

_PICTURES: Final = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
_C1: Final = {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}
_REMEMBERED: Final = 4096  # characters a table learns before it starts afresh


class _Table(dict[int, str]):
    """A ``str.translate`` table: the fixed stand-ins (``fixed``), and each other
    character as it is met: a format character as its escape, any other as itself.
    Worked out at first sight (``unicodedata``, so it follows the running Python's
    Unicode) instead of a table of every code point at import, then remembered, so
    that text in any script translates at C speed after its first characters.

    Bounded: past ``_REMEMBERED`` learnt characters the table forgets them and starts
    again from ``fixed``, so that a sender cycling through every code point costs a
    lookup per character, never memory."""

    def __init__(self, fixed: dict[int, str]) -> None:
        super().__init__(fixed)
        self.fixed = fixed

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if unicodedata.category(char) == "Cf":
            found = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
        else:
            found = char
        if len(self) >= len(self.fixed) + _REMEMBERED:
            self.clear()
            self.update(self.fixed)
        self[code] = found
        return found


_ONE_LINE: Final = _Table(str.maketrans(_PICTURES | _C1 | {0x09: " ", 0x0A: "⏎", 0x0D: "⏎"}))
_LINES: Final = _Table(str.maketrans(_PICTURES | _C1 | {0x09: "\t", 0x0A: "\n"}))
_TAB: Final = 4  # columns between tab stops where a tab is kept as layout


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control and format character made visible (see the module
    docstring); ``lines``: keep its line breaks and tabs as layout."""
    if text.isprintable():
        return text  # the usual case, checked in C (a format character is not printable)
    if lines:
        return text.replace("\r\n", "\n").translate(_LINES).expandtabs(_TAB)
    return text.replace("\r\n", "⏎").translate(_ONE_LINE)
