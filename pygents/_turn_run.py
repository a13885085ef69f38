"""The life of one run of a turn, shared by every driver.

``returning()``, ``yielding()`` and the agent loop all drive a `TurnRun`::

    BEFORE_RUN → tool invocation (→ ON_VALUE per streamed value) →
    AFTER_RUN | ON_TIMEOUT | ON_ERROR → ON_COMPLETE (always, exactly once)

The turn's deadline covers its own work up to the outcome, hooks included
(``BEFORE_RUN``, the tool's hooks, ``ON_VALUE``, ``AFTER_RUN``): hook code runs
as a step, so an overrun cancels it and the turn times out. The outcome's hooks
(``ON_TIMEOUT``/``ON_ERROR``) and ``ON_COMPLETE`` come after the outcome is
decided and are not cut, so that they always run to their end exactly once.
"""

from __future__ import annotations

import asyncio
from asyncio import current_task
from collections.abc import AsyncGenerator, Awaitable, Sequence
from contextvars import Token
from typing import TYPE_CHECKING, Any, Final

from pygents._deadline import Deadline, Watchdog
from pygents._enums import (
    COMPLETED,
    FAILED,
    TIMED_OUT,
    TURN_AFTER_RUN,
    TURN_BEFORE_RUN,
    TURN_ON_COMPLETE,
    StopReason,
    TurnHook,
)
from pygents._errors import TurnTimeoutError
from pygents._hooks import Hook, closing_hooks_bound, dispatch, fire
from pygents._invocation import Invocation
from pygents._observe import BUS, Subscriber
from pygents._scope import CURRENT, TURN_SCOPE, Frame, Scope, stop_reason_for

if TYPE_CHECKING:
    from pygents._turn import Turn

__all__ = ["Runner", "TurnRun"]

_NO_HOOKS: Final[tuple[Hook[Any], ...]] = ()


class Runner:
    """What a driver that runs many turns in a row (an agent run) lends each of them:
    its event loop, a shared `Watchdog` timer, and its frame (the value of the
    current-scope variable for the whole run, see `Frame`).
    """

    __slots__ = ("frame", "loop", "watchdog")

    def __init__(self, frame: Frame) -> None:
        self.loop = asyncio.get_running_loop()
        self.watchdog = Watchdog(self.loop)
        self.frame = frame


class TurnRun(Scope):
    """One run of a turn: its scope and lifecycle. See the module docstring."""

    __slots__ = (
        "_deadline",
        "_entered",
        "_extra_hooks",
        "_frame",
        "_frame_token",
        "_inv",
        "_keep",
        "_runner",
        "_started",
        "_step_token",
        "_timed_out",
    )

    def __init__(
        self,
        turn: Turn,
        parent: Scope | None,
        extra_hooks: list[Hook[Any]] | None,
        runner: Runner | None = None,
    ) -> None:
        super().__init__(TURN_SCOPE, turn, parent, turn=turn)
        self._extra_hooks = extra_hooks
        self._runner = runner
        self._inv = Invocation(turn._tool, self)
        self._deadline: Deadline | None = None
        self._started = False
        self._timed_out: TurnTimeoutError | None = None
        self._frame: Frame | None = None
        self._frame_token: Token[Scope | Frame | None] | None = None
        self._step_token: Token[Scope | Frame | None] | None = None
        self._entered: tuple[Subscriber, ...] = ()

    def hooks(self) -> Sequence[Hook[Any]]:
        """The turn's own hooks, then those the running agent adds for every turn.

        A hook in both lists runs once, in the turn's place: attaching an agent's
        hook to one of its turns as well must not make it fire twice.
        """
        own = self.target._hooks
        extra = self._extra_hooks
        if extra:
            return [*own, *(h for h in extra if h not in own)] if own else extra
        return own or _NO_HOOKS

    def timeout_error(self) -> TurnTimeoutError:
        """This run's own timeout (a ``TurnTimeoutError`` from a nested turn is an error)."""
        turn: Turn = self.target
        # Named by its tool (a turn has no name of its own), not by its repr, which
        # would call it "running"; "give it more time" because "raise" reads as Python's.
        name = turn._tool.name
        self._timed_out = TurnTimeoutError(
            f"turn of tool {name!r} timed out after {turn._timeout:g} s; give it more time "
            f"with Turn(timeout=...), or make {name!r} (or the turn's hooks) faster"
        )
        return self._timed_out

    def _reason(self, error: BaseException | None) -> StopReason:
        if error is not None and error is self._timed_out:
            return TIMED_OUT
        return stop_reason_for(error)

    def _arm(self) -> None:
        runner = self._runner
        if runner is None:
            self._deadline = Deadline(self.target._timeout, asyncio.get_running_loop())
        else:
            self._deadline = Deadline(self.target._timeout, runner.loop, runner.watchdog)
        self._deadline.enter()

    def _begin(self) -> Awaitable[Any] | None:
        """Arm the deadline, fire ``BEFORE_RUN``, bind the tool's arguments and fire
        ``BEFORE_INVOKE``: all of it at once when no hook is bound to either event
        (subscribers are told synchronously), else the rest is returned to await."""
        turn: Turn = self.target
        self._arm()
        hooks = self.hooks()
        if hooks or BUS.hot:
            pending = dispatch(TURN_BEFORE_RUN, turn, hooks, (turn,), None, self)
            if pending is not None:
                return self._begin_after(pending)
        self._started = True
        return self._inv.prepare(turn._args, turn._kwargs)

    async def _begin_after(self, hooks: Awaitable[Any]) -> None:
        await hooks
        self._started = True
        turn: Turn = self.target
        pending = self._inv.prepare(turn._args, turn._kwargs)
        if pending is not None:
            await pending

    async def call(self) -> Any:
        """Run a coroutine turn up to its result, under the deadline."""
        try:
            pending = self._begin()
            if pending is not None:
                await pending
            result = await self._inv.call(None if self._runner is None else self._runner.frame)
        except BaseException as exc:
            self._settle(exc)
            raise
        self._settle(None)
        return result

    async def start_stream(self) -> None:
        """Run a streaming turn up to its first value, under the deadline."""
        try:
            pending = self._begin()
            if pending is not None:
                await pending
            await self._inv.open_stream()
        except BaseException as exc:
            self._settle(exc)
            raise
        self._settle(None)
        self._frame = Frame(CURRENT.get())
        self._frame_token = CURRENT.set(self._frame)
        self._keep = self._inv._values.append
        self.target.output = self._inv._values  # live: grows as values arrive

    def _settle(self, exc: BaseException | None) -> None:
        deadline = self._deadline
        if deadline is not None and deadline.settle(exc):
            raise self.timeout_error() from exc

    def _release(self, exc: BaseException | None) -> BaseException | None:
        """End the deadline's watch over closing hooks that raised ``exc`` (or nothing):
        ``exc``, or this run's timeout if the deadline cut them."""
        deadline = self._deadline
        assert deadline is not None
        deadline.close()
        if deadline.settle(exc):
            timeout = self.timeout_error()
            timeout.__cause__ = exc
            return timeout
        return exc

    # The steps of a stream are bracketed synchronously, so that the drivers (``yielding()``
    # and the agent loop) let ``async for`` step the tool's generator with no layer
    # between — streaming is the hot path:
    #
    #     run.resume()
    #     try:
    #         async for value in run.agen:
    #             if run.step_done(value):
    #                 await run.value_hooks(value)
    #             ... hand the value on ...
    #             run.resume()
    #         run.step_failed(None)
    #     except BaseException as exc:
    #         run.step_failed(exc)        # only acts if a step was in progress
    #         raise

    @property
    def agen(self) -> AsyncGenerator[Any, None]:
        agen = self._inv._agen
        assert agen is not None
        return agen

    def resume(self) -> None:
        """Before a step: the deadline watches this task, the tool's scope is current."""
        deadline = self._deadline
        assert deadline is not None
        if deadline.expired:
            deadline.settle(None)
            raise self.timeout_error()
        task = current_task(deadline.loop)
        if task is not deadline.task:
            deadline.task = task
            deadline.baseline = task.cancelling() if task is not None else 0
        deadline.stepping = True
        frame = self._frame
        if frame is not None and CURRENT.get() is frame:
            frame.scope = self._inv
        else:  # a step run from a task whose context lacks the frame
            self._step_token = CURRENT.set(self._inv)
        if BUS.enterers:
            self._entered = BUS.announce_enter(self._inv)

    def _end_step(self) -> None:
        if self._step_token is None:
            if self._frame is not None:
                self._frame.scope = None
        else:
            try:
                CURRENT.reset(self._step_token)
            except ValueError:
                pass
            self._step_token = None
        if self._entered:
            BUS.announce_exit(self._inv, self._entered)
            self._entered = ()

    def step_done(self, value: Any) -> bool:
        """After a step produced ``value``; True if per-value hooks must run."""
        self._deadline.stepping = False  # type: ignore[union-attr]  # armed in _begin
        if self._step_token is None and not self._entered:
            self._frame.scope = None  # type: ignore[union-attr]  # set in start_stream
        else:
            self._end_step()
        self._keep(value)
        turn: Turn = self.target
        return BUS.hot or bool(turn._hooks or self._extra_hooks or self._inv.target._hooks)

    def step_failed(self, exc: BaseException | None) -> None:
        """After the stream ended (``None``) or raised; raises this turn's timeout if
        a step was cut by it. Does nothing if no step was in progress."""
        deadline = self._deadline
        if deadline is None or not deadline.stepping:
            return
        self._end_step()
        self._settle(exc)

    async def value_hooks(self, value: Any) -> None:
        """``ON_YIELD`` (tool hooks) then ``ON_VALUE`` (turn hooks) for one value,
        under the deadline like a step of the tool."""
        deadline = self._deadline
        assert deadline is not None
        if deadline.expired:
            deadline.settle(None)
            raise self.timeout_error()
        deadline.enter()
        try:
            await self._inv.value(value)
            hooks = self.hooks()
            if hooks or BUS.hot:
                await fire(TurnHook.ON_VALUE, self.target, hooks, (self.target, value), None, self)
        except BaseException as exc:
            self._settle(exc)
            raise
        self._settle(None)

    def finish_quietly(self, result: Any) -> bool:
        """End a successful coroutine run that has no hooks to await, without
        awaiting: subscribers are told ``AFTER_INVOKE``, ``AFTER_RUN`` and
        ``ON_COMPLETE`` synchronously, in `finish`'s order.

        Returns False (having done nothing) when `finish` is needed instead.
        """
        turn: Turn = self.target
        if (
            turn._hooks
            or self._extra_hooks
            or closing_hooks_bound()
            or not self._inv.finish_quietly(result)
        ):
            return False
        assert self._deadline is not None
        self._deadline.close()
        self.stop_reason = COMPLETED
        if BUS.hot:  # someone follows per-turn events; no hook is bound to these two
            turn._settle(result, COMPLETED, None)
            dispatch(TURN_AFTER_RUN, turn, _NO_HOOKS, (turn, result), None, self)
            turn._detach()
            dispatch(TURN_ON_COMPLETE, turn, _NO_HOOKS, (turn, COMPLETED), None, self)
        else:
            turn._settle(result, COMPLETED, None, detach=True)
        if self._observers:
            BUS.end(self)
        return True

    async def finish(self, error: BaseException | None, result: Any = None) -> None:
        """End the run: the tool's closing hooks, ``AFTER_RUN`` on success, the
        outcome's hook, then ``ON_COMPLETE``.

        Until the outcome is decided the deadline still runs: a closing hook
        (``AFTER_INVOKE``, ``AFTER_RUN``) that overruns it makes the outcome a timeout.
        Raises only what a hook raised, or that timeout; the caller re-raises
        ``error`` itself.
        """
        turn: Turn = self.target
        if self._frame_token is not None:
            try:
                CURRENT.reset(self._frame_token)
            except ValueError:
                pass  # finalised in another context (an abandoned stream)
            self._frame_token = None
        hooks = self.hooks()
        raised: BaseException | None = None
        bounded = False  # closing hooks run under the deadline
        deadline = self._deadline
        if deadline is not None:
            if error is None and (hooks or BUS.hot or self._inv.target._hooks):
                if deadline.expired:  # it passed just as the tool finished
                    deadline.close()
                    raised = error = self.timeout_error()
                else:
                    deadline.enter()
                    bounded = True
            else:
                deadline.close()
        reason = COMPLETED if error is None else self._reason(error)
        try:
            if self._started and not (error is None and self._inv.finish_quietly(result)):
                try:
                    await self._inv.finish(result, error, reason)
                except BaseException as exc:
                    raised = error = self._release(exc) if bounded else exc
                    bounded = False
                    reason = self._reason(error)
            turn._settle(self._inv._values if turn._tool.streaming else result, reason, error)
            if reason is COMPLETED and (hooks or BUS.hot):
                try:
                    pending = dispatch(TURN_AFTER_RUN, turn, hooks, (turn, turn.output), None, self)
                    if pending is not None:
                        await pending
                except BaseException as exc:
                    raised = error = self._release(exc) if bounded else exc
                    bounded = False
            if bounded:  # a closing hook swallowed the deadline's cancellation
                raised = error = self._release(None)
            if error is not turn.error:  # a closing hook changed the outcome
                reason = self._reason(error)
                turn._settle(turn.output, reason, error)
            hooks = self.hooks()  # closing hooks may have attached more
            if hooks or BUS.any:
                if reason is TIMED_OUT:
                    await fire(TurnHook.ON_TIMEOUT, turn, hooks, (turn,), None, self)
                elif reason is FAILED:
                    await fire(TurnHook.ON_ERROR, turn, hooks, (turn, error), None, self)
        finally:
            turn._detach()
            self.stop_reason = turn.stop_reason
            self.error = turn.error
            try:
                hooks = self.hooks()
                if (hooks or BUS.hot) and (
                    pending := dispatch(
                        TURN_ON_COMPLETE, turn, hooks, (turn, turn.stop_reason), None, self
                    )
                ):
                    await pending
            finally:
                if self._observers:
                    BUS.end(self)
        if raised is not None:
            raise raised
