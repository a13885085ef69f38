"""Text from the program or the network made safe to draw: every control character is
shown as a visible stand-in and never reaches the terminal.

Why the dashboard does this itself: Rich's ``Text`` and Textual's ``Content`` drop only
BEL, BS, VT, FF and CR, and Textual's ``Log`` replaces only U+0000..U+0014. ESC, the
other C0 codes, DEL and the C1 codes (U+0080..U+009F: U+009B is a one-byte CSI) pass
through to the terminal, which obeys them: ``ESC ] 0 ; … BEL`` renames the window,
``ESC ] 52 ; …`` writes the clipboard, ``ESC [ 2 J`` clears the screen. A name, a value
or a message sent over OTLP (or made by a tool) must never do that, so every place that
hands such text to a widget goes through `visible` (or `pygents_tui._plain.plain`,
which builds the Rich ``Text``). This module uses the standard library only: the
dashboard's model, which runs without the 'tui' extra, cuts previews with it.

How each is shown:

- C0 codes and DEL as their Unicode control pictures: ``␛`` for ESC, ``␇`` for BEL,
  ``␀`` for NUL, ``␡`` for DEL (one cell each, so columns and cut widths still hold);
- C1 codes, which have no pictures, as Python-style escapes: ``\\x9b``;
- on one line (the default): a line break (``\\n``, ``\\r\\n`` or a lone ``\\r``) as
  ``⏎`` and a tab as a space;
- with ``lines=True`` (the inspector, tracebacks, a toast): ``\\n`` and ``\\r\\n`` are
  line breaks, tabs are expanded to spaces, a lone ``\\r`` is ``␍``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["visible"]

_PICTURES: Final = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
_C1: Final = {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}
_ONE_LINE: Final = str.maketrans(_PICTURES | _C1 | {0x09: " ", 0x0A: "⏎", 0x0D: "⏎"})
_LINES: Final = str.maketrans(_PICTURES | _C1 | {0x09: "\t", 0x0A: "\n"})
_TAB: Final = 4  # columns between tab stops where a tab is kept as layout


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character made visible (see the module docstring);
    ``lines``: keep its line breaks and tabs as layout."""
    if text.isprintable():
        return text  # the usual case, checked in C
    if lines:
        return text.replace("\r\n", "\n").translate(_LINES).expandtabs(_TAB)
    return text.replace("\r\n", "⏎").translate(_ONE_LINE)
