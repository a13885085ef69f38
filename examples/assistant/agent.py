"""The assistant's loop, as pygents tools, turns and an agent.

* ``respond`` (a streaming tool) asks the model for the next step: its text streams
  to the caller as it arrives; its message goes into the conversation (the agent's
  context queue); each tool call becomes a queued ``Turn``, followed by another
  ``respond`` so the model sees the results.
* ``bash``, ``read_file``, ``write_file``, ``list_files`` act in the session's
  isolated :class:`~runtime.Runtime`; ``delegate_task`` / ``wait_for_tasks`` run
  sub-assistants in the background (:mod:`tasks`).
* ``stop`` is a completion check: calling it ends the run.

Tool results reach the conversation through the driver, :meth:`Session.run`, which
consumes ``agent.run()``: each ``(turn, value)`` of a tool turn becomes a ``tool``
message answering the call id kept in ``turn.metadata``.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pygents import (
    Agent,
    AgentRegistry,
    ContextItem,
    ContextQueue,
    DecoratedTool,
    ToolType,
    Turn,
    tool,
)

from .model import Message, Model, Reply, TextDelta, tool_definitions
from .runtime import LocalRuntime, PathEscapeError, Runtime

SYSTEM = (
    "You are a careful assistant working in an isolated directory. Use the tools to act; "
    "call `stop` with a short summary when the task is done."
)
_ids = itertools.count(1)


@dataclass
class Event:
    """What :meth:`Session.run` streams to its caller."""

    kind: str  # "text" (a streamed piece), "tool" (a call and its result), "done"
    text: str
    session: str


@dataclass
class Session:
    """One assistant: an agent, a model, a runtime, its tools, its background tasks."""

    name: str
    model: Model
    runtime: Runtime
    agent: Agent | None = None
    tools: dict[str, DecoratedTool[..., Any]] = field(default_factory=dict)
    definitions: list[dict[str, Any]] = field(default_factory=list)
    summary: str | None = None
    background: Any = None  # a tasks.TaskManager when delegation is enabled
    failed: list[str] = field(default_factory=list)  # call ids of failed tool turns

    @property
    def memory(self) -> ContextQueue[Message]:
        assert self.agent is not None
        return self.agent.context_queue

    async def run(self, task: str, *, max_errors: int = 5) -> AsyncIterator[Event]:
        """Work on ``task`` until the model calls ``stop``; stream what happens."""
        agent = self.agent
        assert agent is not None
        await self.memory.append(ContextItem(content=Message("user", task)))
        await agent.put(Turn(self.tools["respond"], timeout=600))
        errors = 0
        while self.summary is None and agent.queue_depth:
            try:
                async for turn, value in agent.run():
                    if isinstance(value, TextDelta):
                        yield Event("text", value.text, self.name)
                        continue
                    call_id = turn.metadata.get("tool_call_id")
                    if call_id is not None:
                        text = _as_text(value)
                        await self._tool_result(call_id, text)
                        yield Event("tool", f"{turn.tool.metadata.name}: {text[:200]}", self.name)
            except Exception as exc:  # a failed tool call is reported back to the model
                errors += 1
                call_id = self.failed.pop() if self.failed else None
                if call_id is None or errors > max_errors:
                    raise
                await self._tool_result(call_id, f"error: {type(exc).__name__}: {exc}")
                yield Event("tool", f"error: {type(exc).__name__}: {exc}", self.name)
        yield Event("done", self.summary or "", self.name)

    async def _tool_result(self, call_id: str, text: str) -> None:
        await self.memory.append(ContextItem(content=Message("tool", text, tool_call_id=call_id)))


def _as_text(value: Any) -> str:
    summary = getattr(value, "summary", None)
    if callable(summary):
        return str(summary())
    return value if isinstance(value, str) else repr(value)


def build_session(
    model: Model, runtime: Runtime | None = None, *, name: str | None = None
) -> Session:
    """A new assistant session with its own tools, registered under unique names.

    Each session's tools are subtools of a root tool named ``assistant_<n>``, so many
    sessions coexist in the registries; the model sees the short names.
    """
    number = next(_ids)
    name = name or f"assistant-{number}"
    session = Session(name, model, runtime if runtime is not None else LocalRuntime(name=name))

    async def root() -> None:
        """The assistant's tools."""

    root.__name__ = f"assistant_{number}"
    tools_root = tool()(root)

    @tools_root.subtool()
    async def bash(command: str, timeout: float = 30.0) -> Any:  # noqa: ASYNC109 - for the model
        """Run a shell command in the working directory; returns its output."""
        return await session.runtime.run(command, timeout=timeout)

    @tools_root.subtool()
    async def read_file(path: str) -> str:
        """Read a text file from the working directory."""
        return await session.runtime.read_file(path)

    @tools_root.subtool()
    async def write_file(path: str, content: str) -> str:
        """Write a text file in the working directory."""
        return await session.runtime.write_file(path, content)

    @tools_root.subtool()
    async def list_files() -> str:
        """List the files of the working directory."""
        return "\n".join(await session.runtime.list_files()) or "(empty)"

    @tools_root.subtool()
    async def delegate_task(task: str) -> str:
        """Start a sub-assistant on `task` in the background; returns its task id."""
        if session.background is None:
            return "error: delegation is not available in this session"
        result: str = await session.background.start(task)
        return result

    @tools_root.subtool()
    async def wait_for_tasks() -> str:
        """Wait for every delegated task and return their summaries."""
        if session.background is None:
            return "no tasks"
        result: str = await session.background.wait_all()
        return result

    @tools_root.subtool()
    async def respond(memory: ContextQueue) -> AsyncIterator[Any]:
        """Ask the model for the next step (streams its text, queues its tool calls)."""
        messages = [Message("system", SYSTEM), *(item.content for item in memory.items)]
        reply = Reply("")
        async for part in session.model.stream(messages, session.definitions):
            if isinstance(part, Reply):
                reply = part
            else:
                yield part  # text as it streams, and the call's Usage: values of this turn
        yield ContextItem(content=Message("assistant", reply.text, reply.tool_calls))
        if not reply.tool_calls:
            yield Turn(stop, kwargs={"summary": reply.text})
            return
        for call in reply.tool_calls:
            target = session.tools.get(call.name)
            if target is None or call.name == "respond":
                message = Message(
                    "tool", f"error: no tool named {call.name!r}", tool_call_id=call.id
                )
                yield ContextItem(content=message)
                continue
            seconds = 300.0
            if call.name == "bash":
                seconds = float(call.arguments.get("timeout", 30.0)) + 5
            meta = {"tool_call_id": call.id}
            yield Turn(target, kwargs=dict(call.arguments), timeout=seconds, metadata=meta)
        yield Turn(respond, timeout=600)

    @tools_root.subtool()
    async def stop(summary: str = "") -> bool:
        """Finish the task: give a short summary of what was done."""
        session.summary = summary or "(done)"
        return True

    stop.type = ToolType.COMPLETION_CHECK  # ends the agent's run when it returns True

    agent = Agent(name, "A model-driven assistant", [tools_root], ContextQueue(limit=500))

    async def note_failure(turn: Turn, *_: Any) -> None:
        call_id = turn.metadata.get("tool_call_id")
        if call_id is not None:
            session.failed.append(call_id)

    note_failure.__name__ = f"assistant_{number}_failure"
    agent.on_error(note_failure)
    agent.on_timeout(note_failure)

    session.agent = agent
    session.tools = {t.metadata.name: t for t in tools_root.subtools}
    session.definitions = [
        definition
        for definition in tool_definitions(tools_root.subtools)
        if definition["function"]["name"].rpartition(".")[2] != "respond"
    ]
    for definition in session.definitions:
        definition["function"]["name"] = definition["function"]["name"].rpartition(".")[2]
    return session


async def close_session(session: Session) -> None:
    """Remove the session's agent from the registry and its runtime's directory."""
    if session.agent is not None:
        AgentRegistry.discard(session.name, session.agent)
    await session.runtime.close()


__all__ = ["Event", "PathEscapeError", "Session", "build_session", "close_session"]
