"""The assistant's tools, defined once for every session, and what the model may pass them.

Tool names are stable: ``bash``, ``read_file``, ... are the same pygents tools in every
session (so traces have one ``execute_tool bash`` operation, not one per session), and
each finds its session at call time through the one thing pygents injects into a tool:
the running agent's context queue. A session's queue is a :class:`Conversation`, which
knows its session, and each tool declares a ``conversation: Conversation`` parameter.

Each tool the model may call has a :class:`ToolSpec`: the JSON Schema (draft 2020-12)
it is offered — the schema pygents infers from the signature, made strict (no extra
keys) and bounded where the signature cannot say it (``bash``'s ``timeout``) — and a
validator for that schema. :func:`check_arguments` runs it on every call before a turn
is made, so malformed arguments go back to the model as an error it can act on and
never reach the tool.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

# jsonschema ships no type hints (types-jsonschema is not a dependency of the example).
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import relevance  # type: ignore[import-untyped]

from pygents import ContextItem, ContextQueue, DecoratedTool, ToolRegistry, ToolType, tool

from .limits import DEFAULT_COMMAND_TIMEOUT, MAX_COMMAND_TIMEOUT
from .model import Message, Reply

if TYPE_CHECKING:
    from .session import Session
    from .tasks import TaskManager

__all__ = [
    "Conversation",
    "ToolSpec",
    "Toolset",
    "check_arguments",
    "clip",
    "toolset",
]

#: Seconds a command's turn may outlast the command's own timeout (killing it, reading
#: what is left of its output).
COMMAND_GRACE: Final = 5.0
#: The longest a model call (one ``respond`` turn) may take, in seconds.
RESPOND_TIMEOUT: Final = 600.0
#: The longest any other tool's turn may take, in seconds.
TOOL_TIMEOUT: Final = 120.0
_ERRORS_SHOWN: Final = 3
_WHITESPACE: Final = re.compile(r"\s+")


def clip(text: str, limit: int, keep: Literal["head", "tail"] = "head") -> str:
    """``text`` in at most ``limit`` characters: its head (or its ``tail``), with "…"
    where the rest was left out.

    The cut falls between words when a word boundary lies in the half of the kept text
    nearest the cut: the model (and whoever reads a tool's output) would otherwise
    take the half word for a typo. One long token, a path or a hash, is cut as it is.
    """
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[: max(limit, 0)]
    room = limit - 1
    if keep == "tail":
        kept = text[len(text) - room :]
        if not text[len(text) - room - 1].isspace():  # the cut is inside a word
            gap = _WHITESPACE.search(kept, 0, room // 2)
            kept = kept[gap.end() :] if gap else kept
        return "…" + kept.lstrip()
    kept = text[:room]
    if not text[room].isspace():
        gaps = [gap.start() for gap in _WHITESPACE.finditer(kept, room // 2)]
        kept = kept[: gaps[-1]] if gaps else kept
    return kept.rstrip() + "…"


class Conversation(ContextQueue[Message]):
    """A session's conversation: its agent's context queue, which also names the session.

    pygents hands a running agent's context queue to any tool parameter annotated with
    it (or a subclass), so the shared tools find their session here instead of in
    per-session closures.
    """

    def __init__(
        self,
        limit: int = 2000,
        tags: Iterable[str] | None = None,
        *,
        session: Session | None = None,
    ) -> None:
        super().__init__(limit, tags)
        self.session = session


def _session(conversation: Conversation) -> Session:
    session = conversation.session
    if session is None:
        raise RuntimeError(
            "this assistant tool runs inside a session's agent; build one with build_session()"
        )
    return session


def _tasks(conversation: Conversation) -> TaskManager:
    manager = _session(conversation).background
    if manager is None:
        raise RuntimeError("delegation is not enabled in this session (enable_delegation)")
    return manager


# -- the tools (plain functions; toolset() decorates them) -------------------------------


async def respond(conversation: Conversation) -> AsyncIterator[Any]:
    """Ask the model for the next step: stream its reply, add it to the conversation.

    Every part the model streams that is not the reply (text pieces, token usage) is
    yielded as it arrives; then the assistant message goes into the conversation and
    the :class:`~model.Reply` itself is yielded, for the session to act on its calls.
    """
    session = _session(conversation)
    history = [item.content for item in conversation.items]
    # A window that lost its oldest messages must still start at a user message, or
    # tool results would answer calls the model no longer sees.
    first = next((i for i, message in enumerate(history) if message.role == "user"), 0)
    messages = [Message("system", session.persona.system_prompt), *history[first:]]
    reply: Reply | None = None
    async for part in session.model.stream(messages, session.offered()):
        if isinstance(part, Reply):
            reply = part
        else:
            yield part
    if reply is None:
        raise RuntimeError(f"{session.model!r} ended its stream without a Reply")
    yield ContextItem(content=Message("assistant", reply.text, reply.tool_calls))
    yield reply


async def stop(conversation: Conversation, summary: str = "") -> bool:
    """Finish the task: give a short summary of what was done.

    Args:
        summary: what was done, for the user.
    """
    _session(conversation).summary = summary or "(done)"
    return True


async def bash(
    conversation: Conversation,
    command: str,
    timeout: float = DEFAULT_COMMAND_TIMEOUT,  # noqa: ASYNC109 - the model's argument
) -> Any:
    """Run a shell command in the working directory; returns its exit code and output.

    Args:
        command: the command line, run by /bin/sh.
        timeout: seconds before the command and its child processes are killed.
    """
    return await _session(conversation).runtime.run(command, timeout=timeout)


async def read_file(conversation: Conversation, path: str) -> str:
    """Read a text file from the working directory.

    Args:
        path: the file's path, relative to the working directory.
    """
    return await _session(conversation).runtime.read_file(path)


async def write_file(conversation: Conversation, path: str, content: str) -> str:
    """Write a text file in the working directory (parent directories are created).

    Args:
        path: the file's path, relative to the working directory.
        content: the whole new text of the file.
    """
    return await _session(conversation).runtime.write_file(path, content)


async def list_files(conversation: Conversation) -> str:
    """List the files of the working directory."""
    return "\n".join(await _session(conversation).runtime.list_files()) or "(empty)"


async def delegate_task(conversation: Conversation, task: str) -> str:
    """Start a sub-assistant on a task in the background; returns its task id at once.

    Args:
        task: what the sub-assistant should do, with everything it needs to know.
    """
    return await _tasks(conversation).start(task)


async def check_tasks(conversation: Conversation, task_id: str = "") -> str:
    """Report delegated tasks' progress and latest output, without waiting for them.

    Args:
        task_id: one task's id (as delegate_task returned it); empty for every task.
    """
    return _tasks(conversation).check(task_id)


async def wait_for_tasks(conversation: Conversation) -> str:
    """Wait until every delegated task has finished; returns their summaries."""
    return await _tasks(conversation).wait_all()


# -- specs: what the model is offered and may pass ----------------------------------------

# Constraints the signatures cannot express, by tool and parameter.
_BOUNDS: Final[dict[str, dict[str, dict[str, Any]]]] = {
    "bash": {
        "command": {"minLength": 1},
        "timeout": {"exclusiveMinimum": 0, "maximum": MAX_COMMAND_TIMEOUT},
    },
    "read_file": {"path": {"minLength": 1}},
    "write_file": {"path": {"minLength": 1}},
    "delegate_task": {"task": {"minLength": 1}},
}


def _strict(decorated: DecoratedTool[..., Any]) -> dict[str, Any]:
    """The tool's inferred input schema, closed to extra keys and bounded by ``_BOUNDS``."""
    schema = copy.deepcopy(decorated.metadata.input_schema)
    schema["additionalProperties"] = False
    for name, bounds in _BOUNDS.get(decorated.name, {}).items():
        schema["properties"][name].update(bounds)
    Draft202012Validator.check_schema(schema)
    return schema


def _turn_timeout(name: str) -> Callable[[Mapping[str, Any]], float]:
    if name == "bash":
        return lambda args: float(args.get("timeout", DEFAULT_COMMAND_TIMEOUT)) + COMMAND_GRACE
    if name in ("wait_for_tasks", "stop"):
        return lambda args: math.inf  # bounded by the run's time left
    return lambda args: TOOL_TIMEOUT


@dataclass(frozen=True)
class ToolSpec:
    """One tool the model may call: the tool, its definition, its argument validator,
    and its turn's timeout for given (valid) arguments."""

    tool: DecoratedTool[..., Any]
    definition: dict[str, Any]
    validator: Draft202012Validator
    turn_timeout: Callable[[Mapping[str, Any]], float]

    @classmethod
    def of(cls, decorated: DecoratedTool[..., Any]) -> ToolSpec:
        schema = _strict(decorated)
        description = (decorated.metadata.description or "").split("\n\n", 1)[0]
        definition = {
            "type": "function",
            "function": {"name": decorated.name, "description": description, "parameters": schema},
        }
        validator = Draft202012Validator(schema)
        return cls(decorated, definition, validator, _turn_timeout(decorated.name))


def _non_finite(value: Any) -> str | None:
    """The path of the first NaN or infinite number in ``value``, if any (JSON has none,
    but Python's parser accepts ``NaN`` and ``Infinity``, and schemas cannot refuse them)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path or "arguments"
        if isinstance(item, dict):
            stack.extend((f"{path}/{key}".lstrip("/"), v) for key, v in item.items())
        elif isinstance(item, list):
            stack.extend((f"{path}/{i}".lstrip("/"), v) for i, v in enumerate(item))
    return None


def check_arguments(spec: ToolSpec, arguments: object) -> str | None:
    """Why ``arguments`` are not acceptable for ``spec``'s tool, or ``None`` if they are.

    The text is for the model: which argument is wrong and how, bounded in length.
    """
    if not isinstance(arguments, dict):
        return f"the arguments must be a JSON object, got {type(arguments).__name__}"
    if "_raw" in arguments:  # what the model layer keeps of arguments that are not JSON
        return f"the arguments are not valid JSON: {clip(repr(arguments['_raw']), 120)}"
    path = _non_finite(arguments)
    if path is not None:
        return f"{clip(path, 60)}: must be a finite number"
    errors = sorted(spec.validator.iter_errors(arguments), key=relevance)[:_ERRORS_SHOWN]
    if not errors:
        return None
    problems = []
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        problems.append(f"{clip(where, 60)}: {clip(error.message, 160)}")
    return "; ".join(problems)


@dataclass(frozen=True)
class Toolset:
    """The decorated tools: ``respond`` (internal) and the specs of the model's tools."""

    respond: DecoratedTool[..., Any]
    specs: dict[str, ToolSpec]

    @property
    def stop(self) -> DecoratedTool[..., Any]:
        return self.specs["stop"].tool

    def all(self) -> list[DecoratedTool[..., Any]]:
        return [self.respond, *(spec.tool for spec in self.specs.values())]


_MODEL_TOOLS: Final = (
    bash,
    read_file,
    write_file,
    list_files,
    delegate_task,
    check_tasks,
    wait_for_tasks,
)
_current: list[Toolset] = []


def toolset() -> Toolset:
    """The tools, decorated (and registered) on first use.

    Decorated again if the registry no longer holds them (a test's isolated registries
    were restored, or someone cleared them), so sessions built later still get
    registered tools.
    """
    if _current and all(ToolRegistry.find(t.name) is t for t in _current[0].all()):
        return _current[0]
    decorated: list[DecoratedTool[..., Any]] = [tool()(fn) for fn in _MODEL_TOOLS]
    decorated.append(tool(type=ToolType.COMPLETION_CHECK)(stop))
    built = Toolset(tool()(respond), {t.name: ToolSpec.of(t) for t in decorated})
    _current[:] = [built]
    return built
