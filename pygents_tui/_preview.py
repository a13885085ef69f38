"""Safe, one-line previews of arbitrary values: huge, binary, multi-line, or with a
``repr`` that raises — the dashboard must show anything without breaking."""

from __future__ import annotations

from typing import Any

__all__ = ["preview"]

_MAX_REPR = 4096


def preview(value: Any, width: int = 80) -> str:
    """At most ``width`` characters on one line; never raises."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value[:64])
        text = f"<{len(value)} bytes> {raw!r}"
    else:
        try:
            text = repr(value)
        except Exception as exc:  # a broken __repr__ must not break the dashboard
            text = f"<{type(value).__name__}: repr failed ({type(exc).__name__})>"
    if len(text) > _MAX_REPR:
        text = text[:_MAX_REPR]
    text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎").replace("\t", " ")
    text = "".join(ch if ch.isprintable() else "·" for ch in text)
    if len(text) > width:
        return text[: max(width - 1, 0)] + "…"
    return text
