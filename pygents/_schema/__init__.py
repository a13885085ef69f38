"""JSON Schema (Draft 2020-12) descriptions of a tool's parameters and result.

Inferred from type hints once, when a tool is decorated, never per call. Best effort
and dependency free: an annotation nothing is known about gives ``{}`` (anything)
or an untyped object, never an error, because a schema must not stop a tool from
being defined.

Each schema is one self-contained document. Dataclasses, TypedDicts, NamedTuples and
any class with a ``model_json_schema()`` or ``schema()`` method (pydantic 2 or 1
models, by duck typing) become entries of ``$defs`` at the document's root,
referenced by ``$ref``: a class used twice is described once, a recursive class
refers to itself instead of being expanded without end, and a model's own
definitions are hoisted to the root so that the references they contain still
resolve once the model is nested.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pygents._schema._docstrings import parameter_docs
from pygents._schema._document import JSON, NO_DEFAULT, STREAMS, Document

__all__ = ["input_schema", "output_schema", "type_schema"]


def _with_extras(fn: Callable[..., Any], hints: Mapping[str, Any]) -> Mapping[str, Any]:
    """``hints`` with their ``Annotated`` metadata, which carries descriptions."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return hints  # resolved one by one by the caller, metadata kept


def type_schema(tp: Any) -> JSON:
    """The schema document of one type hint; ``{}`` (anything) where nothing is known."""
    document = Document()
    return document.finish(document.schema(tp))


def input_schema(
    fn: Callable[..., Any], hints: Mapping[str, Any], skip: frozenset[str] = frozenset()
) -> JSON:
    """The object schema of ``fn``'s parameters, leaving out ``skip`` and ``*args/**kwargs``.

    A parameter's description comes from ``Annotated[T, "text"]``, else from the
    docstring's Args / Parameters section (Google, NumPy or reST style).
    """
    document = Document()
    hints = _with_extras(fn, hints)
    docs = parameter_docs(getattr(fn, "__doc__", None))
    props: JSON = {}
    required: list[str] = []
    for name, p in inspect.signature(fn).parameters.items():
        if name in skip or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = NO_DEFAULT if p.default is p.empty else p.default
        props[name] = document.field(hints.get(name, Any), docs.get(name), default)
        if p.default is p.empty:
            required.append(name)
    schema: JSON = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return document.finish(schema)


def output_schema(fn: Callable[..., Any], hints: Mapping[str, Any], streaming: bool) -> JSON:
    """The schema of the return value, or for a generator of each yielded item."""
    hints = _with_extras(fn, hints)
    if "return" not in hints:
        return {}
    tp = hints["return"]
    if streaming and typing.get_origin(tp) in STREAMS:
        args = typing.get_args(tp)
        tp = args[0] if args else Any
    return type_schema(tp)
