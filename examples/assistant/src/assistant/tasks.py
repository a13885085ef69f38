"""Background sub-assistants for ``delegate_task``, and watching them work.

Each delegated task runs a new session — its own agent, model, runtime and limits,
with the :data:`~persona.HELPER` persona by default — as an asyncio task, so several
run at once while the parent keeps working. The parent can look in on them with
``check_tasks`` (status, tool calls so far, the latest text and the last few results,
without waiting) and collect their summaries with ``wait_for_tasks``.

Bounds: at most ``max_tasks`` run at once, each task's progress keeps a fixed amount of
text, and a helper delegates further only if its persona may and ``depth`` allows.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from .events import Event
from .limits import Limits
from .model import Model
from .persona import HELPER, Persona
from .session import Session, build_session, close_session
from .tools import clip

__all__ = ["Progress", "TaskManager", "enable_delegation"]

#: Characters of a task's latest text kept for ``check_tasks``.
TEXT_TAIL: Final = 300
#: Latest tool results kept per task, and characters of each.
RECENT: Final = 3
RECENT_CHARS: Final = 120
#: Tasks a ``check_tasks`` of every task reports (the latest ones).
CHECKED: Final = 8
#: Characters of each summary ``wait_for_tasks`` returns.
SUMMARY_CHARS: Final = 2000


@dataclass
class Progress:
    """What one delegated task has done so far, bounded whatever it does."""

    task: str
    status: str = "running"
    tool_calls: int = 0
    text: str = ""  # the tail of the model's latest text, from a word's start
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT))
    _in_text: bool = False

    def record(self, event: Event) -> None:
        if event.kind == "text":
            text = (self.text if self._in_text else "") + event.text
            self.text = clip(text, TEXT_TAIL, keep="tail")
            self._in_text = True
            return
        self._in_text = False
        if event.kind == "tool":
            self.tool_calls += 1
            self.recent.append(clip(event.text.replace("\n", " "), RECENT_CHARS))
        elif event.kind == "limit":
            self.recent.append(clip(f"limit: {event.text}", RECENT_CHARS))

    def report(self, task_id: str) -> str:
        lines = [f"{task_id} [{self.status}] {clip(self.task, 100)}"]
        lines.append(f"  tool calls so far: {self.tool_calls}")
        if self.text:
            lines.append(f"  latest text: {self.text!r}")
        lines.extend(f"  recent: {entry}" for entry in self.recent)
        return "\n".join(lines)


class TaskManager:
    """Starts, watches and collects the sub-assistants of one parent session."""

    def __init__(
        self,
        parent: Session,
        make_model: Callable[[str], Model],
        *,
        persona: Persona = HELPER,
        limits: Limits | None = None,
        max_tasks: int = 4,
        depth: int = 1,
    ) -> None:
        if max_tasks < 1 or depth < 1:
            raise ValueError(f"max_tasks and depth must be at least 1, got {max_tasks}, {depth}")
        self.parent = parent
        self.make_model = make_model
        self.persona = persona
        self.limits = limits or parent.limits
        self.max_tasks = max_tasks
        self.depth = depth
        self.children: dict[str, Session] = {}
        self.running: dict[str, asyncio.Task[str]] = {}  # started and not collected yet
        self.progress: dict[str, Progress] = {}
        self._ids = itertools.count(1)
        self._closed = False

    async def start(self, task: str) -> str:
        """Start a helper on ``task``; returns at once with its id."""
        if self._closed:
            raise RuntimeError(f"the task manager of {self.parent.name!r} is closed")
        busy = sum(not running.done() for running in self.running.values())
        if busy >= self.max_tasks:
            return (
                f"not started: {busy} tasks are already running (at most {self.max_tasks}); "
                "use check_tasks or wait_for_tasks first"
            )
        task_id = f"t{next(self._ids)}"
        child = build_session(
            self.make_model(task),
            name=f"{self.parent.name}.{task_id}",
            persona=self.persona,
            limits=self.limits,
            clock=self.parent.clock,
        )
        if self.persona.may_delegate and self.depth > 1:
            enable_delegation(
                child,
                self.make_model,
                persona=self.persona,
                limits=self.limits,
                max_tasks=self.max_tasks,
                depth=self.depth - 1,
            )
        self.children[task_id] = child
        self.progress[task_id] = Progress(task)
        self.running[task_id] = asyncio.create_task(self._work(task_id, child, task))
        return f"started {task_id}: {task}"

    async def _work(self, task_id: str, child: Session, task: str) -> str:
        progress = self.progress[task_id]
        try:
            async for event in child.run(task):
                progress.record(event)
        except asyncio.CancelledError:
            progress.status = "cancelled"
            raise
        except Exception as exc:
            progress.status = f"failed: {type(exc).__name__}"
            raise
        outcome = child.outcome
        limit = outcome.limit if outcome is not None else None
        progress.status = f"stopped by the {limit} limit" if limit else "done"
        return child.summary or "(no summary)"

    def check(self, task_id: str = "") -> str:
        """Each task's (or one task's) progress, now, without waiting."""
        if not self.progress:
            return "no tasks were delegated"
        if task_id:
            found = self.progress.get(task_id)
            if found is None:
                known = ", ".join(self.progress)
                return f"no task {clip(repr(task_id), 40)}; the tasks are: {known}"
            return found.report(task_id)
        shown = list(self.progress.items())[-CHECKED:]
        reports = [progress.report(tid) for tid, progress in shown]
        if len(self.progress) > CHECKED:
            earlier = len(self.progress) - CHECKED
            reports.insert(0, f"({earlier} earlier tasks not shown: pass a task_id)")
        return "\n".join(reports)

    async def wait_all(self) -> str:
        """Every task not collected yet: its summary (or failure), once all have finished."""
        if not self.running:
            return "no tasks are waiting to be collected"
        ids = list(self.running)
        results = await asyncio.gather(*self.running.values(), return_exceptions=True)
        self.running.clear()
        lines = []
        for task_id, result in zip(ids, results, strict=True):
            if isinstance(result, BaseException):
                why = f"{type(result).__name__}: {clip(str(result), 300)}"
                lines.append(f"{task_id}: failed ({why})")
            else:
                lines.append(f"{task_id}: {clip(result, SUMMARY_CHARS)}")
        return "\n".join(lines)

    async def close(self) -> None:
        """Cancel the tasks still running and close every helper's session (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for running in self.running.values():
            running.cancel()
        await asyncio.gather(*self.running.values(), return_exceptions=True)
        for child in self.children.values():
            await close_session(child)


def enable_delegation(
    session: Session,
    make_model: Callable[[str], Model],
    *,
    persona: Persona = HELPER,
    limits: Limits | None = None,
    max_tasks: int = 4,
    depth: int = 1,
) -> TaskManager:
    """Let ``session`` delegate tasks to helpers whose models ``make_model`` builds.

    The helpers get ``persona`` (default :data:`~persona.HELPER`, which may not
    delegate) and ``limits`` (default: the session's). A helper persona that may
    delegate gets a task manager of its own only while ``depth`` is above 1.
    """
    if not session.persona.may_delegate:
        raise ValueError(
            f"session {session.name!r} has persona {session.persona.name!r}, which may not "
            "delegate; build it with a persona whose may_delegate is True"
        )
    if session.background is not None:
        raise ValueError(f"delegation is already enabled in session {session.name!r}")
    manager = TaskManager(
        session, make_model, persona=persona, limits=limits, max_tasks=max_tasks, depth=depth
    )
    session.background = manager
    return manager
