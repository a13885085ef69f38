"""What the fleet model reads out of received attributes: each a value of the type
it needs or ``None``, never an error (a sender may send anything under any name)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pygents import StopReason
from pygents_otel import _names as k
from pygents_tui.listen.decode import ResourceInfo, Value
from pygents_tui.state import Capacity, Run

__all__ = [
    "as_capacity",
    "as_float",
    "as_int",
    "as_tags",
    "as_text",
    "run_of",
    "stop_reason",
    "tool_of",
]


def as_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return None


def as_float(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def as_tags(value: Value | None) -> tuple[str, ...]:
    if isinstance(value, tuple):
        return tuple(str(v) for v in value)
    return (value,) if isinstance(value, str) else ()


def tool_of(attributes: Mapping[str, Value]) -> str | None:
    return as_text(attributes.get(k.TOOL_NAME)) or as_text(attributes.get(k.PYGENTS_TOOL))


def as_capacity(attributes: Mapping[str, Value], size: str, limit: str) -> Capacity | None:
    """A store's size and limit (no limit: unbounded), if its size was sent."""
    found = as_int(attributes.get(size))
    return Capacity(found, as_int(attributes.get(limit))) if found is not None else None


def run_of(resource: ResourceInfo) -> Run:
    return resource.pid, resource.created


def stop_reason(value: object, error_type: str | None, failed: bool = False) -> StopReason:
    """The stop reason sent, else the one the error implies."""
    if isinstance(value, str):
        try:
            return StopReason(value)
        except ValueError:
            pass
    if error_type == "TurnTimeoutError":
        return StopReason.TIMEOUT
    if error_type or failed:
        return StopReason.ERROR
    return StopReason.COMPLETED
