"""The schema document under construction: one type hint at a time, ``$defs`` shared.

Private to `pygents._schema`; the package's ``__init__`` turns a function's
parameters and result into documents built here.
"""

from __future__ import annotations

import collections
import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import inspect
import ipaddress
import pathlib
import re
import sys
import types
import typing
import uuid
from typing import Any, Final

from pygents._schema._docstrings import parameter_docs
from pygents._schema._models import hoist_model_schema, json_value

__all__ = ["JSON", "NO_DEFAULT", "STREAMS", "Document"]

JSON = dict[str, Any]
_REF: Final = "#/$defs/"
NO_DEFAULT: Final = object()
# Decimal: a JSON number may be read back as a binary float and lose digits, so a
# string of digits is accepted as well, which keeps every one of them.
_DECIMAL_PATTERN: Final = r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$"
_BYTES: Final[JSON] = {"type": "string", "contentEncoding": "base64"}
# Checked in order with issubclass: bool before int, datetime before date.
_SCALARS: Final[tuple[tuple[type, JSON], ...]] = (
    (bool, {"type": "boolean"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (str, {"type": "string"}),
    (bytes, _BYTES),
    (bytearray, _BYTES),
    (dt.datetime, {"type": "string", "format": "date-time"}),
    (dt.date, {"type": "string", "format": "date"}),
    (dt.time, {"type": "string", "format": "time"}),
    (dt.timedelta, {"type": "string", "format": "duration"}),
    (uuid.UUID, {"type": "string", "format": "uuid"}),
    (pathlib.PurePath, {"type": "string", "format": "path"}),
    (ipaddress.IPv4Address, {"type": "string", "format": "ipv4"}),
    (ipaddress.IPv6Address, {"type": "string", "format": "ipv6"}),
    (
        decimal.Decimal,
        {"anyOf": [{"type": "number"}, {"type": "string", "pattern": _DECIMAL_PATTERN}]},
    ),
)
_ARRAYS: Final = (
    list,
    collections.deque,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Iterable,
    cabc.Iterator,
    cabc.Collection,
)
_SETS: Final = (set, frozenset, cabc.Set, cabc.MutableSet)
_MAPPINGS: Final = (dict, cabc.Mapping, cabc.MutableMapping)
STREAMS: Final = (cabc.AsyncIterator, cabc.AsyncIterable, cabc.AsyncGenerator)
_UNIONS: Final = (typing.Union, types.UnionType)
_WRAPPERS: Final = (typing.Required, typing.NotRequired, typing.Final, typing.ClassVar)
_JSON_TYPES: Final = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


class Document:
    """One schema document under construction: the ``$defs`` it collects and which
    class each entry describes, so that every class is described once per document."""

    def __init__(self) -> None:
        self.defs: dict[str, JSON] = {}
        self.keys: dict[Any, str] = {}
        self.fingerprints: dict[str, str] = {}

    def finish(self, root: JSON) -> JSON:
        if self.defs:
            root["$defs"] = self.defs
        return root

    def schema(self, tp: Any) -> JSON:
        """The schema of one type hint (a fresh dict the caller may change)."""
        if tp is None or tp is type(None):
            return {"type": "null"}
        if tp is Any or tp is object:
            return {}
        if tp is typing.Tuple:  # noqa: UP006  # bare: any tuple, unlike tuple[()]
            return {"type": "array"}
        if isinstance(tp, typing.TypeVar):
            if tp.__bound__ is not None:
                return self.schema(tp.__bound__)
            return self._union(tp.__constraints__) if tp.__constraints__ else {}
        supertype = getattr(tp, "__supertype__", None)  # typing.NewType
        if supertype is not None:
            return self.schema(supertype)
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            schema = self.schema(args[0])
            text = _annotated_text(args[1:])
            return {**schema, "description": text} if text else schema
        if origin in _WRAPPERS:
            return self.schema(args[0]) if args else {}
        if origin in _UNIONS:
            return self._union(args)
        if origin is typing.Literal:
            return _literal(args)
        if origin is not None:
            return self._generic(origin, args)
        if isinstance(tp, type):
            return self._class(tp)
        return {}

    def field(self, tp: Any, doc: str | None, default: Any = NO_DEFAULT) -> JSON:
        """A property's schema: its type's, a description, and a JSON default."""
        schema = self.schema(tp)
        if doc and "description" not in schema:
            schema["description"] = doc
        if default is not NO_DEFAULT:
            ok, value = json_value(default)
            if ok:
                schema["default"] = value
        return schema

    def _union(self, args: tuple[Any, ...]) -> JSON:
        options = [self.schema(a) for a in args]
        if any(o == {} for o in options):
            return {}
        return {"anyOf": options}

    def _generic(self, origin: Any, args: tuple[Any, ...]) -> JSON:
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.schema(args[0])}
            return _fixed_array([self.schema(a) for a in args], len(args))
        if origin in _SETS:
            schema: JSON = {"type": "array", "uniqueItems": True}
            if args:
                schema["items"] = self.schema(args[0])
            return schema
        if origin in _MAPPINGS:
            schema = {"type": "object"}
            if len(args) == 2:
                schema["additionalProperties"] = self.schema(args[1])
            return schema
        if origin in _ARRAYS:
            return {"type": "array", "items": self.schema(args[0])} if args else {"type": "array"}
        return self.schema(origin)  # a generic class: described without its parameters

    def _class(self, cls: type) -> JSON:
        if issubclass(cls, enum.Enum):
            return _enum(cls)
        if callable(getattr(cls, "model_json_schema", None)):
            return self._model(cls, "model_json_schema")
        if dataclasses.is_dataclass(cls) or typing.is_typeddict(cls) or _is_namedtuple(cls):
            return self._ref(cls)
        if callable(getattr(cls, "schema", None)):  # pydantic 1; after the dataclass check,
            return self._model(cls, "schema")  # whose fields say more than a method so named
        for base, schema in _SCALARS:
            if issubclass(cls, base):
                return dict(schema)
        if issubclass(cls, (list, tuple, collections.deque)) or cls in _ARRAYS:
            return {"type": "array"}
        if issubclass(cls, (set, frozenset)) or cls in _SETS:
            return {"type": "array", "uniqueItems": True}
        if issubclass(cls, dict) or cls in _MAPPINGS:
            return {"type": "object"}
        return {"type": "object", "title": cls.__name__}

    def _ref(self, cls: type) -> JSON:
        """A ``$ref`` to ``cls``'s entry, reserved before its fields are described so
        that a class reaching itself (directly or not) meets the reference."""
        key = self.keys.get(cls)
        if key is None:
            key = self.keys[cls] = self.new_key(
                cls.__name__, f"{cls.__module__}.{cls.__qualname__}"
            )
            self.defs[key] = {}
            self.defs[key] = self._struct(cls)
        return {"$ref": _REF + key}

    def new_key(self, name: str, qualified: str = "") -> str:
        """A ``$defs`` key not taken yet: the name, else the qualified name, else numbered."""
        base = _key(name) or "Schema"
        if base not in self.defs:
            return base
        if qualified and _key(qualified) not in self.defs:
            return _key(qualified)
        n = 2
        while f"{base}_{n}" in self.defs:
            n += 1
        return f"{base}_{n}"

    def _struct(self, cls: type) -> JSON:
        hints = _class_hints(cls)
        doc = cls.__dict__.get("__doc__")
        if not isinstance(doc, str) or doc.startswith(f"{cls.__name__}("):
            doc = None  # the signature dataclass and namedtuple write when there is none
        docs = parameter_docs(doc)
        schema: JSON = {"type": "object", "title": cls.__name__}
        if doc and (summary := inspect.cleandoc(doc).split("\n\n")[0].strip()):
            schema["description"] = summary
        if _is_namedtuple(cls):
            names: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]  # namedtuple API
            defaults: dict[str, Any] = cls._field_defaults  # type: ignore[attr-defined]
            items = [
                self.field(hints.get(n, Any), docs.get(n), defaults.get(n, NO_DEFAULT))
                for n in names
            ]
            return {k: v for k, v in schema.items() if k != "type"} | _fixed_array(
                items, len(names) - len(defaults)
            )
        props: JSON = {}
        required: list[str]
        if dataclasses.is_dataclass(cls):
            required = []
            for f in dataclasses.fields(cls):
                default = NO_DEFAULT if f.default is dataclasses.MISSING else f.default
                text = docs.get(f.name) or _text(f.metadata.get("description"))
                props[f.name] = self.field(hints.get(f.name, Any), text, default)
                if default is NO_DEFAULT and f.default_factory is dataclasses.MISSING:
                    required.append(f.name)
        else:  # TypedDict
            keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
            props = {n: self.field(tp, docs.get(n)) for n, tp in hints.items()}
            required = [n for n in hints if n in keys]
        schema["properties"] = props
        if required:
            schema["required"] = required
        return schema

    def _model(self, cls: type, method: str) -> JSON:
        """A class describing itself (``model_json_schema()`` of pydantic 2, ``schema()``
        of pydantic 1): that schema in ``$defs``, its own definitions hoisted."""
        key = self.keys.get(cls)
        if key is None:
            try:
                raw = getattr(cls, method)()
            except Exception:
                raw = {"type": "object", "title": cls.__name__}
            key = self.keys[cls] = hoist_model_schema(self, cls, raw)
        return {"$ref": _REF + key}


def _key(name: str) -> str:
    """``name`` made safe for a JSON pointer inside a URI fragment."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _fixed_array(items: list[JSON], min_items: int) -> JSON:
    if not items:  # prefixItems may not be empty
        return {"type": "array", "maxItems": 0}
    return {"type": "array", "prefixItems": items, "minItems": min_items, "maxItems": len(items)}


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _json_type(values: list[Any]) -> JSON:
    """``{"type": t}`` when every value has the same JSON type, else ``{}``."""
    found = set()
    for value in values:
        found.add(
            "null"
            if value is None
            else next((t for c, t in _JSON_TYPES if isinstance(value, c)), "")
        )
    return {"type": found.pop()} if len(found) == 1 and "" not in found else {}


def _enum(cls: type[enum.Enum]) -> JSON:
    converted = [json_value(m.value) for m in cls]
    # Values JSON cannot hold (objects, tuples of them): the member names stand for them.
    ok = all(ok for ok, _ in converted)
    values = [v for _, v in converted] if ok else [m.name for m in cls]
    return {"title": cls.__name__, **_json_type(values), "enum": values}


def _literal(args: tuple[Any, ...]) -> JSON:
    converted = [json_value(a) for a in args]
    if not all(ok for ok, _ in converted):
        return {}
    values = [v for _, v in converted]
    if len(values) == 1:
        return {**_json_type(values), "const": values[0]}
    return {**_json_type(values), "enum": values}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _annotated_text(metadata: tuple[Any, ...]) -> str | None:
    """A description from ``Annotated[T, "text"]`` or an object carrying one
    (``description`` as pydantic's ``Field`` has, ``documentation`` as ``Doc``)."""
    for item in metadata:
        if isinstance(item, str):
            return item
        for attribute in ("description", "documentation"):
            try:
                text = getattr(item, attribute, None)
            except Exception:  # a property of somebody else's object that fails
                continue
            if isinstance(text, str):
                return text
    return None


def _class_hints(cls: type) -> dict[str, Any]:
    """``cls``'s field annotations; one that cannot be resolved does not cost the others."""
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:
        pass
    hints: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        module = sys.modules.get(base.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        for name, annotation in inspect.get_annotations(base).items():
            if isinstance(annotation, str):
                try:
                    annotation = eval(annotation, namespace, dict(vars(base)))  # as typing does
                except Exception:
                    continue
            hints[name] = annotation
    return hints
