"""Background sub-assistants for ``delegate_task`` (seed 003's TaskManager).

Each delegated task runs a new session — its own agent, model and runtime — as an
asyncio task, so several run at once while the parent keeps working; the parent
collects their summaries with ``wait_for_tasks``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

from .agent import Session, build_session, close_session
from .model import Model

__all__ = ["TaskManager", "enable_delegation"]


class TaskManager:
    """Starts, tracks and collects the sub-assistants of one parent session."""

    def __init__(self, parent: Session, make_model: Callable[[str], Model]) -> None:
        self.parent = parent
        self.make_model = make_model
        self.children: dict[str, Session] = {}
        self.running: dict[str, asyncio.Task[str]] = {}
        self.progress: dict[str, str] = {}
        self._ids = itertools.count(1)

    async def start(self, task: str) -> str:
        task_id = f"t{next(self._ids)}"
        child = build_session(self.make_model(task), name=f"{self.parent.name}.{task_id}")
        self.children[task_id] = child
        self.running[task_id] = asyncio.create_task(self._work(task_id, child, task))
        return f"started {task_id}: {task}"

    async def _work(self, task_id: str, child: Session, task: str) -> str:
        async for event in child.run(task):
            self.progress[task_id] = f"{event.kind}: {event.text[:80]}"
        return child.summary or "(no summary)"

    async def wait_all(self) -> str:
        """Every delegated task's summary (or failure), once all have finished."""
        if not self.running:
            return "no tasks were delegated"
        ids = list(self.running)
        results = await asyncio.gather(*self.running.values(), return_exceptions=True)
        self.running.clear()
        lines = []
        for task_id, result in zip(ids, results, strict=True):
            if isinstance(result, BaseException):
                lines.append(f"{task_id}: failed ({type(result).__name__}: {result})")
            else:
                lines.append(f"{task_id}: {result}")
        return "\n".join(lines)

    async def close(self) -> None:
        for running in self.running.values():
            running.cancel()
        await asyncio.gather(*self.running.values(), return_exceptions=True)
        for child in self.children.values():
            await close_session(child)


def enable_delegation(session: Session, make_model: Callable[[str], Model]) -> TaskManager:
    """Let ``session`` delegate tasks to sub-assistants whose models ``make_model`` builds."""
    manager = TaskManager(session, make_model)
    session.background = manager
    return manager
