"""The one serialization mechanism: JSON checks on the way out, a strict reader on
the way in, and hooks stored by type and name.

``to_dict`` output is always JSON-ready (``json.dumps`` works on it). A value JSON
cannot represent raises ``TypeError`` at ``to_dict`` time, naming where it sits.
``from_dict`` accepts exactly what ``to_dict`` produces: every key is required, and
anything missing or malformed raises ``ValueError`` naming the object, the key and
what was expected (a default would silently lose state, such as a paused flag).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Final, TypeVar

from pygents._enums import parse_hook_type
from pygents._errors import brief
from pygents._hooks import Hook, HookRegistry

__all__ = ["Reader", "from_timestamp", "hooks_from_data", "hooks_to_data", "json_value", "to_iso"]

E = TypeVar("E", bound=Enum)
_MISSING: Final = object()


def json_value(value: Any, where: str, _path: frozenset[int] = frozenset()) -> Any:
    """A JSON-ready copy of ``value`` (tuples become lists); ``TypeError`` otherwise."""
    if isinstance(value, (Mapping, list, tuple)):
        if id(value) in _path:
            raise TypeError(f"{where} contains itself; JSON cannot represent a cycle")
        _path = _path | {id(value)}
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(
                f"{where} is {value!r}, which JSON cannot represent; use None or a string"
            )
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where} has the key {key!r}; JSON object keys must be strings")
            out[key] = json_value(item, f"{where}[{key!r}]", _path)
        return out
    if isinstance(value, (list, tuple)):
        return [json_value(item, f"{where}[{i}]", _path) for i, item in enumerate(value)]
    hint = (
        "an argument by reference cannot be stored; resolve it to a value first"
        if callable(value)
        else "convert it to str, int, float, bool, None, list or dict first"
    )
    raise TypeError(f"{where} is a {type(value).__name__}, which JSON cannot represent: {hint}")


def to_iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def from_timestamp(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC)


class Reader:
    """Reads one ``from_dict`` payload; every failure names ``owner`` and the key."""

    __slots__ = ("data", "owner")

    def __init__(self, data: object, owner: str) -> None:
        if not isinstance(data, Mapping):
            raise ValueError(
                f"{owner}.from_dict() takes the dict produced by {owner}.to_dict(), "
                f"got {type(data).__name__}"
            )
        self.data = data
        self.owner = owner

    def _bad(self, key: str, expected: str, got: object) -> ValueError:
        return ValueError(
            f"{self.owner}.from_dict(): {key!r} must be {expected}, got {brief(got, 50)}; "
            f"pass data produced by {self.owner}.to_dict()"
        )

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise ValueError(
                f"{self.owner}.from_dict(): the key {key!r} is missing; "
                f"pass data produced by {self.owner}.to_dict()"
            )
        return default

    def text(self, key: str, default: Any = _MISSING, *, optional: bool = False) -> Any:
        value = self.raw(key, default)
        if isinstance(value, str) or (optional and value is None):
            return value
        raise self._bad(key, "a string" + (" or null" if optional else ""), value)

    def number(self, key: str, default: Any = _MISSING) -> float:
        value = self.raw(key, default)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise self._bad(key, "a number", value)

    def flag(self, key: str, default: Any = _MISSING) -> bool:
        value = self.raw(key, default)
        if isinstance(value, bool):
            return value
        raise self._bad(key, "true or false", value)

    def items(self, key: str, default: Any = _MISSING) -> list[Any]:
        value = self.raw(key, default)
        if isinstance(value, (list, tuple)):
            return list(value)
        raise self._bad(key, "a list", value)

    def mapping(self, key: str, default: Any = _MISSING, *, optional: bool = False) -> Any:
        value = self.raw(key, default)
        if optional and value is None:
            return None
        if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
            return dict(value)
        raise self._bad(key, "an object with string keys", value)

    def strings(self, key: str, default: Any = _MISSING) -> list[str]:
        values = self.items(key, default)
        for value in values:
            if not isinstance(value, str):
                raise self._bad(key, "a list of strings", values)
        return values

    def enum(self, cls: type[E], key: str, default: Any = _MISSING) -> E | None:
        value = self.raw(key, default)
        if value is None:
            return None
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in cls)
            raise self._bad(key, f"null or one of {choices}", value) from None

    def time(self, key: str, default: Any = _MISSING) -> float | None:
        value = self.raw(key, default)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(key, "an ISO 8601 datetime string or null", value)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise self._bad(key, "an ISO 8601 datetime string or null", value) from None
        if parsed.tzinfo is None:
            raise self._bad(key, "a datetime with a UTC offset (e.g. '...+00:00')", value)
        try:
            stamp = parsed.timestamp()
            datetime.fromtimestamp(stamp, UTC)  # in range once converted to UTC?
        except (ValueError, OverflowError, OSError):
            raise self._bad(key, "a datetime between years 1 and 9999 in UTC", value) from None
        return stamp

    def hooks(self, key: str = "hooks") -> list[Hook[Any]]:
        return hooks_from_data(self.items(key), f"{self.owner}.from_dict()")


def hooks_to_data(hooks: Iterable[Hook[Any]]) -> list[dict[str, str]]:
    """Hooks by type and name, in dispatch order: ``[{"type": ..., "name": ...}]``."""
    return [
        {"type": t.qualified, "name": h.metadata.name}
        for h in hooks
        for t in sorted(h.types, key=lambda t: t.qualified)
    ]


def hooks_from_data(data: Sequence[Any], where: str) -> list[Hook[Any]]:
    """Resolve hooks from :data:`HookRegistry`, checking each stored type is theirs."""
    hooks: list[Hook[Any]] = []
    for entry in data:
        if not (isinstance(entry, Mapping) and isinstance(entry.get("name"), str)):
            raise ValueError(
                f"{where}: each hook entry must be {{'type': ..., 'name': ...}}, got {entry!r}"
            )
        stored_type = entry.get("type")
        if not isinstance(stored_type, str):
            raise ValueError(f"{where}: hook entry {entry!r} lacks its 'type' string")
        event = parse_hook_type(stored_type)
        h = HookRegistry.get(entry["name"])
        if event not in h.types:
            raise ValueError(
                f"{where}: hook {h.metadata.name!r} is registered for "
                f"{sorted(t.qualified for t in h.types)}, not {stored_type}; the data was "
                "saved with a different hook under that name"
            )
        if h not in hooks:
            hooks.append(h)
    return hooks
