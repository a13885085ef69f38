"""The one serialization mechanism: JSON checks on the way out, a strict reader on
the way in, and hooks stored by type and name.

``to_dict`` output is always JSON-ready (``json.dumps`` works on it). A value JSON
cannot represent raises ``TypeError`` at ``to_dict`` time, naming where it sits; a
value nested deeper than `MAX_DEPTH` or an int too long for JSON text raises
``ValueError``.

``from_dict`` accepts exactly what ``to_dict`` produces, and checks it at the door
with the same rules, so whatever it accepts can be written out again. Every key is
required (a default would silently lose state, such as a paused flag). Anything
missing or malformed raises ``ValueError`` (``UnregisteredToolError`` /
``UnregisteredHookError`` for an unknown name) whose message starts with the entry
point and the key path, e.g. ``Agent.from_dict(): queue[3].kwargs['x']: ...``, and
quotes the bad value only through `brief`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Final, TypeVar

from pygents._enums import parse_hook_type
from pygents._errors import UnregisteredError, brief
from pygents._hooks import Hook, HookRegistry
from pygents._registry import Registry

__all__ = ["MAX_DEPTH", "Reader", "from_timestamp", "hooks_to_data", "json_value", "to_iso"]

E = TypeVar("E", bound=Enum)
R = TypeVar("R")

MAX_DEPTH: Final = 100
"""How deeply a stored value (``args``, ``kwargs``, ``metadata``, ``output``, item
``content``) may nest lists and dicts, counting the value itself. Deeper data is
refused by ``to_dict`` and ``from_dict`` alike, before it can exhaust the stack."""

# -- JSON values --------------------------------------------------------------------------

_FIX_TYPE: Final = "convert it to str, int, float, bool, None, list or dict first"
_PLAIN: Final = frozenset({str, bool, type(None)})


def _plain(value: object) -> bool:
    """A scalar that is JSON-ready as it is (the common case, checked cheaply)."""
    if type(value) in _PLAIN:
        return True
    if type(value) is int:
        return -(2**63) < value < 2**63
    return type(value) is float and math.isfinite(value)


class _Refused(Exception):
    """Why a value is not JSON-ready, and where (key/index segments from its root)."""

    def __init__(self, path: list[str | int], problem: str, kind: type[Exception]) -> None:
        super().__init__(problem)
        self.path, self.problem, self.kind = list(path), problem, kind


def _path_text(path: Iterable[str | int]) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f"[{brief(p, 20)}]" for p in path]
    if len(parts) > 6:  # a deep path: its ends say where
        parts = [*parts[:2], f"...{len(parts) - 4} more...", *parts[-2:]]
    return "".join(parts)


def _json_copy(value: Any, path: list[str | int], active: set[int]) -> Any:
    """``value`` as JSON-ready data (tuples become lists), or `_Refused`."""
    kind = type(value)
    if (kind is dict or kind is list) and not value and len(active) < MAX_DEPTH:
        # Empty, as most turns' kwargs and metadata are: a fresh copy, without the
        # ABC checks below (each ``isinstance(x, Mapping)`` goes through ``abc``).
        return {} if kind is dict else []
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        limit = sys.get_int_max_str_digits()
        if limit and value.bit_length() > (limit - 1) * 3.32:
            raise _Refused(
                path,
                f"is an int of about {int(value.bit_length() * 0.30103)} digits, too long for "
                "JSON text; store it as a string",
                ValueError,
            )
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(
                path, f"is {value!r}, which JSON cannot represent; use None or a string", TypeError
            )
        return value
    mapping = kind is dict or (kind is not list and isinstance(value, Mapping))
    if not (mapping or isinstance(value, (list, tuple))):
        hint = (
            "an argument by reference cannot be stored; resolve it to a value first"
            if callable(value)
            else _FIX_TYPE
        )
        problem = f"is a {type(value).__name__}, which JSON cannot represent: {hint}"
        raise _Refused(path, problem, TypeError)
    if id(value) in active:
        raise _Refused(path, "contains itself; JSON cannot represent a cycle", TypeError)
    if len(active) >= MAX_DEPTH:
        raise _Refused(
            path,
            f"nests lists and dicts deeper than {MAX_DEPTH} levels; flatten it, or store the "
            "deep part as a JSON string",
            ValueError,
        )
    active.add(id(value))
    try:
        if mapping:
            out: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    problem = f"has the key {brief(key, 40)}; JSON object keys must be strings"
                    raise _Refused(path, problem, TypeError)
                if _plain(item):
                    out[key] = item
                else:
                    path.append(key)
                    out[key] = _json_copy(item, path, active)
                    path.pop()
            return out
        items: list[Any] = []
        for index, item in enumerate(value):
            if _plain(item):
                items.append(item)
            else:
                path.append(index)
                items.append(_json_copy(item, path, active))
                path.pop()
        return items
    finally:
        active.discard(id(value))


def json_value(value: Any, where: str | Callable[[], str]) -> Any:
    """A JSON-ready copy of ``value``; ``TypeError``/``ValueError`` naming the place
    (``where``, or what it returns: a place costly to name is named only on failure)."""
    try:
        return _json_copy(value, [], set())
    except _Refused as refused:
        place = where if isinstance(where, str) else where()
        raise refused.kind(f"{place}{_path_text(refused.path)} {refused.problem}") from None


def to_iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def from_timestamp(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC)


# -- reading ------------------------------------------------------------------------------


class Reader:
    """Reads one ``from_dict`` payload, or one part of it (``path``, e.g. ``queue[3]``).

    Every failure is a ``ValueError`` naming ``owner`` (the entry point called),
    the key path and the fix; nested parts are read by child readers, so an
    agent's turns report ``Agent.from_dict(): queue[3].timeout: ...``.
    """

    __slots__ = ("data", "owner", "path")

    def __init__(self, data: object, owner: str, path: str = "", what: str = "") -> None:
        self.owner = owner
        self.path = path
        if type(data) is not dict and not isinstance(data, Mapping):
            if path:
                raise ValueError(
                    f"{owner}.from_dict(): {path} must be {what}, got "
                    f"{brief(data, 50)}; pass data produced by {owner}.to_dict()"
                )
            raise ValueError(
                f"{owner}.from_dict() takes the dict produced by {owner}.to_dict(), "
                f"got {type(data).__name__}"
            )
        self.data = data

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path and key else (self.path or key)

    def fail(self, key: str, problem: str) -> ValueError:
        """A ``ValueError`` about ``key`` (``""``: about this part as a whole)."""
        at = self._at(key)
        if not at:
            return ValueError(f"{self.owner}.from_dict(): {problem}")
        return ValueError(f"{self.owner}.from_dict(): {at}{' ' if key else ': '}{problem}")

    def error(self, key: str, expected: str, got: object) -> ValueError:
        return self.fail(
            key,
            f"{expected}, got {brief(got, 50)}; pass data produced by {self.owner}.to_dict()",
        )

    def raw(self, key: str) -> Any:
        try:
            return self.data[key]
        except KeyError:
            raise self.fail(
                "", f"the key {key!r} is missing; pass data produced by {self.owner}.to_dict()"
            ) from None

    def text(self, key: str, *, optional: bool = False) -> Any:
        value = self.raw(key)
        if isinstance(value, str) or (optional and value is None):
            return value
        raise self.error(key, "must be a string" + (" or null" if optional else ""), value)

    def number(self, key: str) -> float:
        value = self.raw(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise self.error(key, "must be a number", value)

    def flag(self, key: str) -> bool:
        value = self.raw(key)
        if isinstance(value, bool):
            return value
        raise self.error(key, "must be true or false", value)

    def items(self, key: str) -> list[Any]:
        value = self.raw(key)
        if isinstance(value, (list, tuple)):
            return list(value)
        raise self.error(key, "must be a list", value)

    def strings(self, key: str) -> list[str]:
        values = self.items(key)
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise self.error(f"{key}[{i}]", "must be a string", value)
        return values

    def json(self, key: str, shape: str = "") -> Any:
        """A JSON value (a copy) checked by ``to_dict``'s rules; ``shape``: list/object."""
        value = self.raw(key)
        kind = type(value)
        if (shape == "list" and kind is not list and not isinstance(value, (list, tuple))) or (
            shape == "object" and kind is not dict and not isinstance(value, Mapping)
        ):
            raise self.error(key, f"must be a{'n' if shape == 'object' else ''} {shape}", value)
        if value is None or ((kind is dict or kind is list) and not value):
            return None if value is None else kind()  # null or empty, as most turns hold
        try:
            return _json_copy(value, [], set())
        except _Refused as refused:
            raise self.fail(key + _path_text(refused.path), refused.problem) from None

    def child(self, key: str, kind: str) -> Reader:
        """A reader for the ``kind`` (a class name) stored under ``key``."""
        return Reader(self.raw(key), self.owner, self._at(key), f"a dict from {kind}.to_dict()")

    def maybe_child(self, key: str, kind: str) -> Reader | None:
        """A reader for the ``kind`` stored under ``key``, or ``None`` if it is null."""
        return None if self.raw(key) is None else self.child(key, kind)

    def children(self, key: str, kind: str, what: str = "") -> list[Reader]:
        """A reader for each ``kind`` (or ``what``, if given) in the list under ``key``."""
        at, what = self._at(key), what or f"a dict from {kind}.to_dict()"
        return [Reader(v, self.owner, f"{at}[{i}]", what) for i, v in enumerate(self.items(key))]

    def enum(self, cls: type[E], key: str) -> E | None:
        value = self.raw(key)
        if value is None:
            return None
        try:
            return cls(value)
        except (ValueError, TypeError):
            choices = ", ".join(repr(m.value) for m in cls)
            raise self.error(key, f"must be null or one of {choices}", value) from None

    def time(self, key: str) -> float | None:
        """An ISO 8601 datetime with an offset, as a timestamp ``to_dict`` can write back."""
        value = self.raw(key)
        if value is None:
            return None
        expected = "must be an ISO 8601 datetime string or null"
        if not isinstance(value, str):
            raise self.error(key, expected, value)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise self.error(key, expected, value) from None
        if parsed.tzinfo is None:
            raise self.error(key, "must have a UTC offset (e.g. '...+00:00')", value)
        try:
            stamp = parsed.timestamp()
            datetime.fromtimestamp(stamp, UTC)  # in range once converted to UTC?
        except (ValueError, OverflowError, OSError):
            raise self.error(key, "must lie between years 1 and 9999 in UTC", value) from None
        return stamp

    def build(self, factory: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """``factory(*args, **kwargs)``, its refusal reported at this reader's path."""
        try:
            return factory(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            raise self.fail("", str(exc)) from None

    def lookup(self, registry: Registry[R], key: str, name: str) -> R:
        """``registry.get(name)``; the registry's own error, located at ``key``."""
        try:
            return registry.get(name)
        except UnregisteredError as exc:
            raise type(exc)(f"{self.owner}.from_dict(): {self._at(key)}: {exc}") from None

    def hooks(self, key: str = "hooks") -> list[Hook[Any]]:
        """Hooks stored by `hooks_to_data`, resolved from ``HookRegistry``."""
        hooks: list[Hook[Any]] = []
        stored = self.raw(key)
        if type(stored) is list and not stored:  # none, as most turns have
            return hooks
        for entry in self.children(key, "", "a hook entry {'type': ..., 'name': ...}"):
            name, stored = entry.text("name"), entry.text("type")
            try:
                event = parse_hook_type(stored)
            except ValueError:
                raise entry.error(
                    "type", "must be a hook type such as 'TurnHook.ON_ERROR'", stored
                ) from None
            h = entry.lookup(HookRegistry, "name", name)
            if event not in h.types:
                raise entry.fail(
                    "",
                    f"hook {brief(name, 50)} is registered for "
                    f"{', '.join(sorted(t.qualified for t in h.types))}, not {stored}; the data "
                    "was saved with a different hook under that name",
                )
            if h not in hooks:
                hooks.append(h)
        return hooks


def hooks_to_data(hooks: Iterable[Hook[Any]]) -> list[dict[str, str]]:
    """Hooks by type and name, in dispatch order: ``[{"type": ..., "name": ...}]``."""
    return [
        {"type": t.qualified, "name": h.metadata.name}
        for h in hooks
        for t in sorted(h.types, key=lambda t: t.qualified)
    ]
