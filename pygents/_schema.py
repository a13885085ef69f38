"""JSON-schema-like descriptions of parameters and results, inferred from type hints.

Best effort and dependency free: primitives, containers, unions and optionals,
literals, enums, dataclasses and TypedDicts, async generators' item type, and any
class with a ``model_json_schema()`` method (pydantic models, by duck typing).
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["input_schema", "output_schema", "type_schema"]

JSON = dict[str, Any]
_PRIMITIVES: dict[Any, JSON] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    bytes: {"type": "string", "contentEncoding": "base64"},
    type(None): {"type": "null"},
    None: {"type": "null"},
}
_ARRAYS = (list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection)
_SETS = (set, frozenset, cabc.Set, cabc.MutableSet)
_MAPPINGS = (dict, cabc.Mapping, cabc.MutableMapping)
_STREAMS = (cabc.AsyncIterator, cabc.AsyncIterable, cabc.AsyncGenerator)


def type_schema(tp: Any) -> JSON:
    """The schema of one type hint; ``{}`` (anything) where nothing better is known."""
    if tp in _PRIMITIVES:
        return dict(_PRIMITIVES[tp])
    if tp is Any or tp is object:
        return {}
    model_schema = getattr(tp, "model_json_schema", None)
    if isinstance(tp, type) and callable(model_schema):
        try:
            result = model_schema()
        except Exception:
            return {"type": "object", "title": tp.__name__}
        return dict(result) if isinstance(result, Mapping) else {}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return type_schema(args[0])
    if origin in (typing.Union, types.UnionType):
        return _union(args)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in _ARRAYS:
        return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0])}
        items = [type_schema(a) for a in args]
        return {
            "type": "array",
            "prefixItems": items,
            "minItems": len(items),
            "maxItems": len(items),
        }
    if origin in _SETS:
        schema: JSON = {"type": "array", "uniqueItems": True}
        if args:
            schema["items"] = type_schema(args[0])
        return schema
    if origin in _MAPPINGS:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    if origin is not None:
        return type_schema(origin)
    if isinstance(tp, type):
        return _class_schema(tp)
    return {}


def _union(args: tuple[Any, ...]) -> JSON:
    options = [type_schema(a) for a in args]
    if any(o == {} for o in options):
        return {}
    return {"anyOf": options}


def _class_schema(cls: type) -> JSON:
    if issubclass(cls, enum.Enum):
        return {"enum": [m.value for m in cls]}
    if cls in (list, tuple):
        return {"type": "array"}
    if cls in (set, frozenset):
        return {"type": "array", "uniqueItems": True}
    if cls is dict:
        return {"type": "object"}
    hints = _safe_hints(cls)
    if dataclasses.is_dataclass(cls):
        fields = dataclasses.fields(cls)
        required = [
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        return _object(cls.__name__, {f.name: hints.get(f.name, Any) for f in fields}, required)
    if typing.is_typeddict(cls):
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
        return _object(cls.__name__, hints, [k for k in hints if k in required_keys])
    return {"type": "object", "title": cls.__name__}


def _object(title: str, props: Mapping[str, Any], required: list[str]) -> JSON:
    schema: JSON = {
        "type": "object",
        "title": title,
        "properties": {name: type_schema(tp) for name, tp in props.items()},
    }
    if required:
        schema["required"] = required
    return schema


def _safe_hints(obj: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception:
        return {}


def _json_default(value: Any) -> tuple[bool, Any]:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True, value
    if isinstance(value, (list, tuple)) and all(_json_default(v)[0] for v in value):
        return True, list(value)
    return False, None


def input_schema(
    fn: Callable[..., Any], hints: Mapping[str, Any], skip: frozenset[str] = frozenset()
) -> JSON:
    """The object schema of ``fn``'s parameters, leaving out ``skip`` and ``*args/**kwargs``."""
    props: JSON = {}
    required: list[str] = []
    for name, p in inspect.signature(fn).parameters.items():
        if name in skip or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        prop = type_schema(hints.get(name, Any))
        if p.default is p.empty:
            required.append(name)
        else:
            ok, default = _json_default(p.default)
            if ok:
                prop["default"] = default
        props[name] = prop
    schema: JSON = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def output_schema(hints: Mapping[str, Any], streaming: bool) -> JSON:
    """The schema of the return value, or for a generator of each yielded item."""
    if "return" not in hints:
        return {}
    tp = hints["return"]
    if streaming and typing.get_origin(tp) in _STREAMS:
        args = typing.get_args(tp)
        return type_schema(args[0]) if args else {}
    return type_schema(tp)
