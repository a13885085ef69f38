"""Bounded copies of OTLP values: every string cut to a limit, every nested value
rendered as short text, never recursing however deep the sender nested it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Limits", "Scalar", "Value", "attributes_of", "cut", "name_of", "value_of"]

Scalar = str | bool | int | float
Value = Scalar | tuple[Scalar, ...]

_OVERHEAD: Final = 100  # bytes an attribute costs beyond its characters (key, value, slot)


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a request is kept. Strings longer than their limit are cut in the
    middle (head … tail), as ``reprlib`` does, so both ends stay readable."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_name: int = 256  # names, keys, ids of services and agents
    max_value: int = 1024  # attribute values, bodies, previews
    max_attributes: int = 64  # per span, record or resource
    max_items: int = 32  # items kept of an array or key-value list
    max_depth: int = 4  # nesting levels of arrays and key-value lists rendered
    # Spans, records or metrics (and the groups around them) in one request: each
    # costs decoding time on the event loop, and a request of empty items is tiny.
    max_items_per_request: int = 20_000


def cut(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters long, cut in the middle."""
    if len(text) <= limit:
        return text
    if limit < 3:
        return text[:limit]
    head = (limit - 1) // 2
    tail = limit - 1 - head
    return text[:head] + "…" + text[len(text) - tail :]


def _scalar(value: Any, kind: str, limits: Limits) -> Scalar | None:
    if kind == "string_value":
        text: str = value.string_value
        return text if len(text) <= limits.max_value else cut(text, limits.max_value)
    if kind == "bytes_value":
        return f"<{len(value.bytes_value)} bytes>"
    if kind in ("bool_value", "int_value", "double_value"):
        scalar: Scalar = getattr(value, kind)
        return scalar
    return None


def value_of(value: Any, limits: Limits) -> Value:
    """An ``AnyValue``: scalars as they are, an array of scalars as a tuple, anything
    nested as bounded text."""
    kind = value.WhichOneof("value")
    scalar = _scalar(value, kind, limits) if kind else ""
    if scalar is not None:
        return scalar
    if kind == "array_value":
        items = value.array_value.values
        kept: list[Scalar] = []
        for item in items[: limits.max_items]:
            item_kind = item.WhichOneof("value")
            found = _scalar(item, item_kind, limits) if item_kind else ""
            if found is None:
                return _text(value, limits)
            kept.append(found)
        return tuple(kept)
    return _text(value, limits)


def _text(value: Any, limits: Limits) -> str:
    """A nested value as compact text, at most ``max_depth`` levels, ``max_items``
    items per level and ``max_value`` characters in all (iterative: no recursion)."""
    out: list[str] = []
    size = 0
    stack: list[tuple[Any, int] | str] = [(value, 0)]
    while stack and size <= limits.max_value:
        top = stack.pop()
        if isinstance(top, str):
            piece = top
        else:
            node, depth = top
            kind = node.WhichOneof("value")
            if kind == "array_value" or kind == "kvlist_value":
                if depth >= limits.max_depth:
                    piece = "[…]" if kind == "array_value" else "{…}"
                else:
                    opening, closing = ("[", "]") if kind == "array_value" else ("{", "}")
                    items = getattr(node, kind).values
                    parts: list[tuple[Any, int] | str] = [opening]
                    for index, item in enumerate(items[: limits.max_items]):
                        if index:
                            parts.append(", ")
                        if kind == "kvlist_value":
                            parts.append(f"{cut(item.key, limits.max_name)}: ")
                            parts.append((item.value, depth + 1))
                        else:
                            parts.append((item, depth + 1))
                    if len(items) > limits.max_items:
                        parts.append(", …")
                    parts.append(closing)
                    stack.extend(reversed(parts))
                    continue
            else:
                found = _scalar(node, kind, limits) if kind else None
                piece = json.dumps(found, ensure_ascii=False) if found is not None else "null"
        out.append(piece)
        size += len(piece)
    return cut("".join(out), limits.max_value)


def attributes_of(pairs: Iterable[Any], limits: Limits) -> tuple[dict[str, Value], int, int]:
    """Bounded attributes, how many were left out, and their size estimate."""
    found: dict[str, Value] = {}
    dropped = 0
    size = 0
    for pair in pairs:
        if len(found) >= limits.max_attributes:
            dropped += 1
            continue
        key: str = pair.key
        if len(key) > limits.max_name:
            key = cut(key, limits.max_name)
        value = value_of(pair.value, limits)
        found[key] = value
        size += len(key) + (len(value) if isinstance(value, str) else 16) + _OVERHEAD
    return found, dropped, size


def name_of(value: object, limits: Limits) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limits.max_name else cut(text, limits.max_name)
