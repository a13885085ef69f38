"""One invocation of a tool: the ``ToolHook`` lifecycle, as a scope.

``BEFORE_INVOKE`` → the function (under the tool's lock, if any; for a stream the
whole iteration, ``ON_YIELD`` included) → ``AFTER_INVOKE`` on success or early stop,
``ON_ERROR`` if the function raised. Turns drive an `Invocation`; so does
calling a tool directly (`call_directly`, `stream_directly`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable
from typing import TYPE_CHECKING, Any

from pygents._calling import resolve_arguments
from pygents._enums import COMPLETED, TOOL_AFTER_INVOKE, TOOL_BEFORE_INVOKE, StopReason, ToolHook
from pygents._hooks import GLOBAL_HOOKS, dispatch, fire
from pygents._observe import BUS
from pygents._scope import CURRENT, TOOL_SCOPE, Frame, Scope, stop_reason_for

if TYPE_CHECKING:
    from pygents._tool import DecoratedTool

__all__ = ["Invocation", "call_directly", "stream_directly"]


class Invocation(Scope):
    """One call of a tool: the ``ToolHook`` lifecycle as a scope.

    Drivers (a turn, or a direct call) use it as::

        inv = Invocation(tool, parent)
        try:
            await inv.begin(args, kwargs)
            result = await inv.call()            # or: agen = await inv.open_stream()
        except BaseException as exc:
            await inv.finish(None, exc)
            raise
        await inv.finish(result, None)
    """

    __slots__ = ("_agen", "_args", "_kwargs", "_lock", "_values")

    def __init__(self, tool: DecoratedTool[..., Any], parent: Scope | None) -> None:
        super().__init__(TOOL_SCOPE, tool, parent)
        self._args: tuple[Any, ...] = ()
        self._kwargs: dict[str, Any] = {}
        self._values: list[Any] = []
        self._agen: AsyncGenerator[Any, None] | None = None
        self._lock: Any = None

    async def begin(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Evaluate arguments by reference, bind, and fire ``BEFORE_INVOKE``."""
        pending = self.prepare(args, kwargs)
        if pending is not None:
            await pending

    def prepare(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Awaitable[Any] | None:
        """The synchronous part of `begin`: bind, and tell subscribers about
        ``BEFORE_INVOKE``; returns its hooks' run to await, if a hook is bound."""
        tool: DecoratedTool[..., Any] = self.target
        if observers := BUS.scopers_by_kind[TOOL_SCOPE]:
            BUS.start(self, observers)
        tool.metadata._start = time.time()
        tool.metadata._end = None
        self._args, self._kwargs = tool._shape.bind(*resolve_arguments(args, kwargs), self)
        if BUS.hot or tool._hooks:
            return dispatch(TOOL_BEFORE_INVOKE, tool, tool._hooks, self._args, self._kwargs, self)
        return None

    async def call(self, frame: Frame | None = None) -> Any:
        """Run a coroutine tool's function (under its lock) with this scope current.

        Given the driver's ``frame`` (current in this task), the scope is made current
        by setting ``frame.scope`` instead of the context variable, which is cheaper.
        """
        tool: DecoratedTool[..., Any] = self.target
        lock = tool._lock
        flip = frame is not None and not BUS.enterers and CURRENT.get() is frame
        if flip:
            assert frame is not None
            outer, frame.scope = frame.scope, self
        else:
            entered = BUS.enter(self)
        try:
            if lock is None:
                return await tool._fn(*self._args, **self._kwargs)
            async with lock.get():
                return await tool._fn(*self._args, **self._kwargs)
        finally:
            if flip:
                frame.scope = outer  # type: ignore[union-attr]
            else:
                BUS.exit(self, entered)

    async def open_stream(self) -> AsyncGenerator[Any, None]:
        """Take the lock (held until `finish`) and create the tool's generator."""
        tool: DecoratedTool[..., Any] = self.target
        agen: AsyncGenerator[Any, None] = tool._fn(*self._args, **self._kwargs)  # runs nothing yet
        self._agen = agen
        if tool._lock is not None:
            lock = tool._lock.get()
            await lock.acquire()
            self._lock = lock
        return agen

    async def value(self, value: Any) -> None:
        """Fire ``ON_YIELD`` for one streamed value (callers check for hooks first)."""
        tool: DecoratedTool[..., Any] = self.target
        await fire(ToolHook.ON_YIELD, tool, tool._hooks, (value,), None, self)

    def finish_quietly(self, result: Any) -> bool:
        """End a successful coroutine invocation whose tool has no hooks, without
        awaiting (subscribers still see ``AFTER_INVOKE``); False, and nothing done,
        if `finish` is needed. The caller checks global hooks first."""
        tool: DecoratedTool[..., Any] = self.target
        if self._agen is not None or tool._hooks or TOOL_AFTER_INVOKE in GLOBAL_HOOKS:
            return False
        tool.metadata._end = time.time()
        self.stop_reason = COMPLETED
        if BUS.hot:  # someone follows per-turn events; no hook is bound to it
            dispatch(TOOL_AFTER_INVOKE, tool, (), (result,), None, self)
        if self._observers:
            BUS.end(self)
        return True

    async def finish(
        self, result: Any, error: BaseException | None, reason: StopReason | None = None
    ) -> None:
        """Close the stream, release the lock, fire ``AFTER_INVOKE``/``ON_ERROR``, end."""
        tool: DecoratedTool[..., Any] = self.target
        try:
            try:
                if self._agen is not None:
                    entered = BUS.enter(self)
                    try:
                        await self._agen.aclose()
                    finally:
                        BUS.exit(self, entered)
                    result = self._values
            finally:
                if self._lock is not None:
                    self._lock.release()
                    self._lock = None
            tool.metadata._end = time.time()
            self.error = error
            self.stop_reason = reason if reason is not None else stop_reason_for(error)
            if isinstance(error, Exception):
                if tool._hooks or BUS.any:
                    await fire(ToolHook.ON_ERROR, tool, tool._hooks, (), {"exc": error}, self)
            elif (error is None or self._agen is not None) and (tool._hooks or BUS.hot):
                await fire(ToolHook.AFTER_INVOKE, tool, tool._hooks, (result,), None, self)
        finally:
            if self._observers:
                BUS.end(self)


async def call_directly(
    tool: DecoratedTool[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    parent: Scope | None,
) -> Any:
    inv = Invocation(tool, parent)
    try:
        await inv.begin(args, kwargs)
        result = await inv.call()
    except BaseException as exc:
        await inv.finish(None, exc)
        raise
    await inv.finish(result, None)
    return result


async def stream_directly(
    tool: DecoratedTool[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    parent: Scope | None,
) -> AsyncGenerator[Any, None]:
    inv = Invocation(tool, parent)
    error: BaseException | None = None
    try:
        await inv.begin(args, kwargs)
        agen = await inv.open_stream()
        while True:
            entered = BUS.enter(inv)
            try:
                value = await agen.__anext__()
            except StopAsyncIteration:
                break
            finally:
                BUS.exit(inv, entered)
            inv._values.append(value)
            if tool._hooks or BUS.hot:
                await inv.value(value)
            yield value
    except BaseException as exc:
        error = exc
        raise
    finally:
        await inv.finish(None, error)
