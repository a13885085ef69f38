"""Tools: the async functions that say *how* something is done.

``@tool`` accepts an ``async def`` (one result, run by ``Turn.returning()``) or an
``async def`` generator (a stream, run by ``Turn.yielding()``). Each call runs the
``ToolHook`` lifecycle of `pygents._invocation`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import (
    Any,
    Final,
    Generic,
    ParamSpec,
    Protocol,
    TypeVar,
    cast,
    overload,
    runtime_checkable,
)

from pygents._calling import CallShape, LoopLock
from pygents._enums import HookType, ToolHook, ToolType
from pygents._errors import UnregisteredToolError, brief
from pygents._guard import validated
from pygents._hooklist import HookList
from pygents._hooks import Hook, HookSlot, normalize_tags
from pygents._invocation import call_directly, stream_directly
from pygents._registry import Registry
from pygents._schema import input_schema, output_schema
from pygents._scope import current_scope

__all__ = [
    "CompletionCheckTool",
    "DecoratedTool",
    "Tool",
    "ToolMetadata",
    "ToolRegistry",
    "tool",
]

P = ParamSpec("P")
R = TypeVar("R")
# A subtool's own signature: P and R inside DecoratedTool are its parent's.
SubP = ParamSpec("SubP")
SubR = TypeVar("SubR")


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


@dataclass(slots=True)
class ToolMetadata:
    """A tool's description, schemas, and the timing of its latest invocation."""

    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    _start: float | None = field(default=None, repr=False)
    _end: float | None = field(default=None, repr=False)

    @property
    def start_time(self) -> datetime | None:
        """When the latest invocation started (UTC), ``None`` before the first."""
        return None if self._start is None else datetime.fromtimestamp(self._start, UTC)

    @property
    def end_time(self) -> datetime | None:
        """When the latest invocation ended (UTC), ``None`` before the first."""
        return None if self._end is None else datetime.fromtimestamp(self._end, UTC)

    def dict(self) -> dict[str, Any]:
        """A JSON-ready copy, datetimes as ISO strings."""
        return {
            "name": self.name,
            "description": self.description,
            "start_time": _iso(self._start),
            "end_time": _iso(self._end),
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
        }


@runtime_checkable
class Tool(Protocol):
    """The shape every decorated tool has."""

    metadata: ToolMetadata
    hooks: list[Hook[Any]]
    tags: frozenset[str]
    type: ToolType

    @property
    def name(self) -> str: ...
    @property
    def fn(self) -> Callable[..., Any]: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class CompletionCheckTool(Protocol):
    """A tool whose boolean result tells an agent whether its run is complete."""

    metadata: ToolMetadata
    type: ToolType

    @property
    def name(self) -> str: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, bool]: ...


def _only_streams(tool: Any, event: HookType) -> None:
    if not tool.streaming:
        raise TypeError(
            f"tool {brief(tool.name, 60)} returns a single value, so it never fires {event}; "
            "use after_invoke for its result"
        )


class DecoratedTool(Generic[P, R]):
    """What ``@tool`` returns: the function plus its metadata, hooks, lock and subtools.

    Calling it invokes the function with the full tool lifecycle (hooks, lock, fixed
    kwargs, dropped extras); ``Turn`` adds timeouts and turn hooks on top.
    """

    _pygents_value: Final = True

    before_invoke = HookSlot(ToolHook.BEFORE_INVOKE)
    on_yield = HookSlot(ToolHook.ON_YIELD, check=_only_streams)
    after_invoke = HookSlot(ToolHook.AFTER_INVOKE)
    on_error = HookSlot(ToolHook.ON_ERROR)

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str,
        parent: DecoratedTool[..., Any] | None,
        lock: bool,
        tags: frozenset[str],
        type: ToolType,
        fixed_kwargs: Mapping[str, Any],
    ) -> None:
        self.streaming = inspect.isasyncgenfunction(fn)
        label = f"tool {brief(name, 60)}"
        if not self.streaming and not inspect.iscoroutinefunction(fn):
            raise TypeError(
                f"{label} is a plain function; tools must be 'async def' functions or "
                "'async def' generators"
            )
        self._shape = CallShape(fn, label, fixed_kwargs)
        hints = self._shape.hints
        if type is ToolType.COMPLETION_CHECK:
            if self.streaming:
                raise TypeError(f"{label}: a completion check must return one bool, not stream")
            if hints.get("return") is not bool:
                raise TypeError(
                    f"{label}: a completion-check tool must be annotated '-> bool' "
                    f"(found {brief(hints.get('return', 'no return annotation'))})"
                )
        functools.update_wrapper(self, fn)
        self.__name__ = name
        self.__qualname__ = name
        self._fn = fn
        self.type = type
        self.tags = tags
        self.parent = parent
        self.subtools: list[DecoratedTool[..., Any]] = []
        self._hooks = HookList(DecoratedTool, "hooks")
        self._lock = LoopLock() if lock else None
        skip = frozenset(self._shape.fixed) | {n for n, _, _ in self._shape.injectables}
        self.metadata = ToolMetadata(
            name=getattr(fn, "__name__", name),
            description=inspect.getdoc(fn),
            input_schema=input_schema(fn, hints, skip),
            output_schema=output_schema(fn, hints, self.streaming),
        )

    @property
    def fn(self) -> Callable[P, R]:
        """The decorated function itself."""
        return self._fn

    hooks = validated(HookList.validator("hooks"))
    """This tool's own hooks, fired before global ones; only hooks may go in."""

    @property
    def name(self) -> str:
        """The registry key: the function name, ``"parent.child"`` for subtools."""
        return self.__name__

    @property
    def lock(self) -> Any:
        """The ``asyncio.Lock`` serializing invocations, or ``None`` without ``lock=True``."""
        return None if self._lock is None else self._lock.get()

    @property
    def fixed_kwargs(self) -> Mapping[str, Any]:
        return self._shape.fixed

    def __repr__(self) -> str:
        kind = "stream" if self.streaming else "coroutine"
        return f"<Tool {brief(self.name, 60)} ({kind}, {self.type.value})>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        parent = current_scope()
        if self.streaming:
            return cast(R, stream_directly(self, args, kwargs, parent))
        return cast(R, call_directly(self, args, kwargs, parent))

    @overload
    def subtool(self, fn: Callable[SubP, SubR], /) -> DecoratedTool[SubP, SubR]: ...
    @overload
    def subtool(
        self,
        /,
        *,
        lock: bool = ...,
        tags: Iterable[str] | None = ...,
        type: ToolType = ...,
        **fixed_kwargs: Any,
    ) -> Callable[[Callable[SubP, SubR]], DecoratedTool[SubP, SubR]]: ...
    def subtool(
        self,
        fn: Callable[SubP, SubR] | None = None,
        /,
        *,
        lock: bool = False,
        tags: Iterable[str] | None = None,
        type: ToolType = ToolType.ACTION,
        **fixed_kwargs: Any,
    ) -> DecoratedTool[SubP, SubR] | Callable[[Callable[SubP, SubR]], DecoratedTool[SubP, SubR]]:
        """Register a full tool under the scoped name ``"<this tool>.<function>"``.

        It takes the options of ``@tool``, checked the same way: a completion-check
        subtool must be a coroutine annotated ``-> bool``.
        """
        where = f"{self.name}.subtool()"
        _check_type(type, where)
        tag_set = normalize_tags(tags, where)

        def decorate(f: Callable[SubP, SubR]) -> DecoratedTool[SubP, SubR]:
            return _create(f, self, lock, tag_set, type, fixed_kwargs)

        return decorate if fn is None else decorate(fn)

    def doc_tree(self) -> dict[str, Any]:
        """``{"name", "description", "subtools": [...]}``, recursively, short names."""
        return {
            "name": self.metadata.name,
            "description": self.metadata.description,
            "subtools": [sub.doc_tree() for sub in self.subtools],
        }

    def walk(self) -> Iterable[DecoratedTool[..., Any]]:
        """This tool and all its subtools, depth first."""
        yield self
        for sub in self.subtools:
            yield from sub.walk()


class _ToolRegistry(Registry[DecoratedTool[..., Any]]):
    __slots__ = ()

    def definitions(self) -> list[dict[str, Any]]:
        """``doc_tree()`` of every root tool (subtools appear inside their parent)."""
        return [t.doc_tree() for t in self.all() if t.parent is None]


ToolRegistry: Final = _ToolRegistry("tool", UnregisteredToolError)
"""Every tool by name (scoped ``"parent.child"`` names for subtools)."""


def _check_type(type: object, where: str) -> None:
    """``type=`` of ``@tool`` and ``subtool()``: a ``ToolType`` member, checked before
    the function is even seen."""
    if not isinstance(type, ToolType):
        raise TypeError(
            f"{where} takes type=ToolType.ACTION or ToolType.COMPLETION_CHECK, got {brief(type)}"
        )


def _create(
    fn: Callable[P, R],
    parent: DecoratedTool[..., Any] | None,
    lock: bool,
    tags: frozenset[str],
    type: ToolType,
    fixed_kwargs: Mapping[str, Any],
) -> DecoratedTool[P, R]:
    short = getattr(fn, "__name__", None)
    if not isinstance(short, str):
        raise TypeError(f"@tool needs a named async function, got {brief(fn)}")
    name = short if parent is None else f"{parent.name}.{short}"
    if name in ToolRegistry:
        raise ValueError(
            f"a tool named {brief(name, 60)} is already registered; rename the function, or "
            "clear ToolRegistry first (pygents.testing.isolated_registries() in tests)"
        )
    created = DecoratedTool(
        fn, name=name, parent=parent, lock=lock, tags=tags, type=type, fixed_kwargs=fixed_kwargs
    )
    ToolRegistry.add(name, created)
    if parent is not None:
        parent.subtools.append(created)
    return created


@overload
def tool(fn: Callable[P, R], /) -> DecoratedTool[P, R]: ...
@overload
def tool(
    *,
    lock: bool = ...,
    tags: Iterable[str] | None = ...,
    type: ToolType = ...,
    **fixed_kwargs: Any,
) -> Callable[[Callable[P, R]], DecoratedTool[P, R]]: ...
def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    lock: bool = False,
    tags: Iterable[str] | None = None,
    type: ToolType = ToolType.ACTION,
    **fixed_kwargs: Any,
) -> DecoratedTool[P, R] | Callable[[Callable[P, R]], DecoratedTool[P, R]]:
    """Declare a tool. Use as ``@tool`` or ``@tool(lock=..., tags=..., type=..., **fixed)``."""
    _check_type(type, "@tool")
    tag_set = normalize_tags(tags, "@tool")

    def decorate(f: Callable[P, R]) -> DecoratedTool[P, R]:
        return _create(f, None, lock, tag_set, type, fixed_kwargs)

    return decorate if fn is None else decorate(fn)
