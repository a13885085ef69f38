"""Helpers of `pygents._schema`: hoisting a model's ``$defs``, JSON defaults.

A class with ``model_json_schema()`` or ``schema()`` (a pydantic 2 or 1 model, by
duck typing) returns a complete document: its nested models are in its own ``$defs``
(``definitions`` in pydantic 1) and referenced as ``#/$defs/Name``
(``#/definitions/Name``). Nested inside a tool's schema that document's root is no longer
the root, so those references would dangle. Its entries are therefore moved to the
tool schema's ``$defs`` (renamed if a different schema already has the name) and
every reference to them rewritten. Entries identical to one already present,
including everything they refer to, are shared rather than repeated.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import ipaddress
import json
import math
import pathlib
import uuid
from collections.abc import Mapping
from typing import Any, Final, Protocol

__all__ = ["hoist_model_schema", "json_value"]

_REF: Final = "#/$defs/"
_SECTIONS: Final = ("$defs", "definitions")  # pydantic 2 and pydantic 1
_DATA: Final = frozenset({"const", "default", "enum", "examples"})  # values, not schemas
_NAMED: Final = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)
_MAX_DEPTH: Final = 32


class Definitions(Protocol):
    """The part of a schema document under construction that hoisting uses."""

    defs: dict[str, dict[str, Any]]
    fingerprints: dict[str, str]

    def new_key(self, name: str, qualified: str = "") -> str: ...


def hoist_model_schema(document: Definitions, cls: type, raw: object) -> str:
    """Put the schema ``raw`` of model ``cls`` into ``document``'s ``$defs``; its key."""
    root: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
    # Once nested, the document is no longer a resource of its own: an "$id" would
    # change what its references are resolved against.
    root.pop("$id", None)
    root.pop("$schema", None)
    local: dict[str, Any] = {}  # "#/$defs/Name" -> that entry, as the model wrote it
    names: dict[str, str] = {}
    for section in _SECTIONS:
        entries = root.pop(section, None)
        if isinstance(entries, Mapping):
            for name, body in entries.items():
                if isinstance(name, str):
                    local[f"#/{section}/{name}"] = body
                    names[f"#/{section}/{name}"] = name
    # A recursive model's document is only a reference to its own entry.
    alias = root.get("$ref") if list(root) == ["$ref"] and root.get("$ref") in local else None
    body = local[alias] if alias is not None else root
    printed = _fingerprint(body, local)
    key = document.fingerprints.get(printed)
    if key is not None:
        return key
    key = document.new_key(cls.__name__, f"{cls.__module__}.{cls.__qualname__}")
    document.defs[key] = {}
    document.fingerprints[printed] = key
    renames = {"#": key} | ({alias: key} if alias is not None else {})
    pending: list[tuple[str, Any]] = []
    for ref, entry in local.items():
        if ref == alias:
            continue
        printed = _fingerprint(entry, local)
        existing = document.fingerprints.get(printed)
        if existing is None:
            existing = document.new_key(names[ref])
            document.defs[existing] = {}
            document.fingerprints[printed] = existing
            pending.append((existing, entry))
        renames[ref] = existing
    for new_key, entry in pending:
        document.defs[new_key] = _walk(entry, renames, set())
    document.defs[key] = _walk(body, renames, set())
    return key


def _walk(node: Any, renames: Mapping[str, str], found: set[str], schema: bool = True) -> Any:
    """A copy of ``node`` with its references renamed; the references are added to ``found``.

    Only keywords holding schemas are searched, so a property or a default value
    that happens to be named ``$ref`` is left alone.
    """
    if isinstance(node, Mapping):
        copy: dict[str, Any] = {}
        for key, v in node.items():
            k = key if isinstance(key, str) else str(key)  # as JSON would write it
            if not schema:
                copy[k] = _walk(v, renames, found, False)
            elif k == "$ref" and isinstance(v, str):
                found.add(v)
                copy[k] = _REF + renames[v] if v in renames else v
            elif k in _NAMED and isinstance(v, Mapping):
                copy[k] = {str(n): _walk(s, renames, found) for n, s in v.items()}
            else:
                copy[k] = _walk(v, renames, found, k not in _DATA)
        return copy
    if isinstance(node, (list, tuple)):
        return [_walk(v, renames, found, schema) for v in node]
    return node


def _fingerprint(body: Any, local: Mapping[str, Any]) -> str:
    """A text equal for two entries exactly when they and all they refer to are equal."""
    closure: dict[str, Any] = {}
    pending: set[str] = set()
    _walk(body, {}, pending)
    while pending:
        ref = pending.pop()
        if ref in local and ref not in closure:
            closure[ref] = local[ref]
            _walk(local[ref], {}, pending)
    try:
        return json.dumps([body, sorted(closure.items())], sort_keys=True, default=repr)
    except (TypeError, ValueError):  # keys JSON cannot sort or hold: compare as written
        return repr([body, sorted(closure.items())])


def json_value(value: Any, depth: int = 0) -> tuple[bool, Any]:
    """``(True, value as JSON)`` for a value a schema can state (a default, a literal),
    values of the types given a ``format`` written in that format; else ``(False, None)``."""
    if depth > _MAX_DEPTH:
        return False, None
    if isinstance(value, enum.Enum):
        return json_value(value.value, depth + 1)
    if value is None or isinstance(value, (str, bool, int)):
        return True, value
    if isinstance(value, float):
        return (True, value) if math.isfinite(value) else (False, None)
    if isinstance(value, (dt.date, dt.time)):
        return True, value.isoformat()
    if isinstance(value, dt.timedelta):
        return _duration(value)
    if isinstance(value, decimal.Decimal):
        return (True, str(value)) if value.is_finite() else (False, None)
    if isinstance(
        value, (uuid.UUID, pathlib.PurePath, ipaddress.IPv4Address, ipaddress.IPv6Address)
    ):
        return True, str(value)
    if isinstance(value, (bytes, bytearray)):
        return True, base64.b64encode(value).decode("ascii")
    if isinstance(value, (set, frozenset)):
        try:
            value = sorted(value)
        except TypeError:
            return False, None
    if isinstance(value, (list, tuple)):
        items = [json_value(v, depth + 1) for v in value]
        return (True, [v for _, v in items]) if all(ok for ok, _ in items) else (False, None)
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        pairs = {k: json_value(v, depth + 1) for k, v in value.items()}
        if all(ok for ok, _ in pairs.values()):
            return True, {k: v for k, (_, v) in pairs.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_value(
            {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth + 1
        )
    return False, None


def _duration(value: dt.timedelta) -> tuple[bool, Any]:
    """RFC 3339's duration (whole seconds, never negative); other values are left out."""
    if value < dt.timedelta(0) or value.microseconds:
        return False, None
    return True, f"P{value.days}DT{value.seconds}S"
