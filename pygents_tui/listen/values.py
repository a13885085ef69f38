"""Bounded copies of OTLP values: every string cut to a limit, every nested value
rendered as short text, never recursing however deep the sender nested it.

Two things are bounded here, separately: what is *kept* (``Limits``) and the work
spent *reading* a request (`Reads`). They differ because a sender can make reading
expensive without anything being kept: two million copies of one attribute key keep
one key. So every attribute entry and every nested value read is paid for, kept or
not, and a request that would read more than its budget is refused.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, Final

from pygents_tui.text._cut import cut_middle

__all__ = [
    "Limits",
    "OverBudget",
    "Reads",
    "Scalar",
    "Value",
    "attributes_of",
    "cut_middle",
    "name_of",
    "size_of",
    "value_of",
]

Scalar = str | bool | int | float
Value = Scalar | tuple[Scalar, ...]

_SLOT: Final = 40  # a dict entry beyond its key and value objects (measured)
_getsizeof: Final = sys.getsizeof


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a request is kept, and how much the receiver takes on at once.
    Strings longer than their limit are cut in the middle (head … tail), as
    ``reprlib`` does, so both ends stay readable."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_name: int = 256  # names, keys, ids of services and agents
    max_value: int = 1024  # attribute values, bodies, previews
    max_attributes: int = 64  # per span, record or resource
    # Items kept of an array or key-value list: at least a live snapshot's lists
    # (`SNAPSHOT_ITEMS`, 50 waiting turns or context items).
    max_items: int = 64
    max_depth: int = 4  # nesting levels of arrays and key-value lists rendered
    # Spans, records or metrics (and the groups around them) in one request: each
    # costs decoding time on the event loop, and a request of empty items is tiny.
    max_items_per_request: int = 20_000
    # Attribute entries and nested values read in one request, duplicates and the
    # ones not kept included: each costs about a microsecond on the event loop.
    # Pygents' own batches read a few thousand; past this the request is refused.
    max_reads_per_request: int = 50_000
    # The receiver's admission (see `pygents_tui.listen.admission`): how long a
    # request's message or body may take to arrive once its call or headers have; how
    # long a connection may sit idle; the bytes of bodies received or decoded at once,
    # across both transports (a gRPC message is charged once it has arrived, an HTTP
    # body from its headers and again at its inflated size), and the share of them one
    # gRPC connection may hold; the gRPC calls one connection may hold open waiting for
    # their message; connections per transport (None: from the open-files limit).
    receive_timeout: float = 10.0
    idle_timeout: float = 30.0
    max_in_flight_bytes: int = 64 * 1024 * 1024
    max_in_flight_bytes_per_connection: int = 16 * 1024 * 1024
    max_calls_per_connection: int = 8
    max_connections: int | None = None
    # Protobuf requests decoded at once, each in a process of its own (OTLP/JSON has
    # one more), off the event loop and its interpreter: the dashboard must answer keys
    # meanwhile. Also the threads that inflate gzipped bodies.
    max_concurrent_decodes: int = 2


class OverBudget(Exception):
    """A request read more values than ``Limits.max_reads_per_request``."""


class Reads:
    """What is left of one request's reading budget; `spend` raises `OverBudget`
    when it runs out."""

    __slots__ = ("left",)

    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise OverBudget


def size_of(value: Value) -> int:
    """The bytes ``value`` holds: the object itself and, for an array, its items.
    ``sys.getsizeof`` counts what the text really costs (four bytes a character
    for some), where ``len`` would not."""
    if isinstance(value, tuple):
        return _getsizeof(value) + sum(map(_getsizeof, value))
    return _getsizeof(value)


def _scalar(value: Any, kind: str, limits: Limits) -> Scalar | None:
    if kind == "string_value":
        text: str = value.string_value
        return text if len(text) <= limits.max_value else cut_middle(text, limits.max_value)
    if kind == "bytes_value":
        return f"<{len(value.bytes_value)} bytes>"
    if kind in ("bool_value", "int_value", "double_value"):
        scalar: Scalar = getattr(value, kind)
        return scalar
    return None


def value_of(value: Any, limits: Limits, reads: Reads) -> Value:
    """An ``AnyValue``: scalars as they are, an array of scalars as a tuple, anything
    nested as bounded text. Every value read is paid for from ``reads``."""
    reads.spend(1)
    return _value(value, limits, reads)


def _value(value: Any, limits: Limits, reads: Reads) -> Value:
    """`value_of` with ``value`` itself already paid for (its nested items are paid
    for here)."""
    kind = value.WhichOneof("value")
    scalar = _scalar(value, kind, limits) if kind else ""
    if scalar is not None:
        return scalar
    if kind == "array_value":
        items = value.array_value.values
        kept: list[Scalar] = []
        reads.spend(min(len(items), limits.max_items))
        for item in items[: limits.max_items]:
            item_kind = item.WhichOneof("value")
            found = _scalar(item, item_kind, limits) if item_kind else ""
            if found is None:
                return _text(value, limits, reads)
            kept.append(found)
        return tuple(kept)
    return _text(value, limits, reads)


def _text(value: Any, limits: Limits, reads: Reads) -> str:
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
                    reads.spend(min(len(items), limits.max_items))
                    parts: list[tuple[Any, int] | str] = [opening]
                    for index, item in enumerate(items[: limits.max_items]):
                        if index:
                            parts.append(", ")
                        if kind == "kvlist_value":
                            parts.append(f"{cut_middle(item.key, limits.max_name)}: ")
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
    return cut_middle("".join(out), limits.max_value)


def attributes_of(pairs: Any, limits: Limits, reads: Reads) -> tuple[dict[str, Value], int, int]:
    """Bounded attributes, how many were left out, and the bytes the kept ones hold.

    Only the first ``max_attributes`` entries are read: the rest are counted as
    dropped unread (``pairs`` is a protobuf repeated field, whose length costs
    nothing). A key sent twice keeps its last value and counts once as dropped."""
    sent = len(pairs)
    read = pairs[: limits.max_attributes]
    reads.spend(len(read))  # one per value read, as value_of would, paid at once
    found: dict[str, Value] = {}
    size = _SLOT * len(read)  # a key sent twice is counted twice: an upper bound
    max_name = limits.max_name
    for pair in read:
        key: str = pair.key
        if len(key) > max_name:
            key = cut_middle(key, max_name)
        value = found[key] = _value(pair.value, limits, reads)
        size += _getsizeof(key) + (size_of(value) if type(value) is tuple else _getsizeof(value))
    return found, sent - len(found), size + _getsizeof(found)


def name_of(value: object, limits: Limits) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limits.max_name else cut_middle(text, limits.max_name)
