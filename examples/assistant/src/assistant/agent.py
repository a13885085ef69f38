"""The assistant's loop, as pygents tools, turns and an agent.

* ``respond`` (a streaming tool) asks the model for the next step: its text (and any
  token usage) streams to the caller as it arrives; its message goes into the
  conversation (the agent's context queue); the reply itself goes to the session.
* The session (:mod:`session`) checks each call the reply makes — a tool the persona
  enables, arguments valid for its schema, within the limits — and queues one
  ``Turn`` per call, one at a time, then another ``respond`` so the model sees the
  results. Calls that cannot run are answered with an error the model can act on.
* ``bash``, ``read_file``, ``write_file``, ``list_files`` act in the session's
  isolated :class:`~runtime.Runtime`; ``delegate_task`` / ``check_tasks`` /
  ``wait_for_tasks`` run and watch sub-assistants in the background (:mod:`tasks`).
* ``stop`` is a completion check: calling it ends the run (after the other calls of
  the same reply).

The tools are defined once (:mod:`tools`) with the names the model sees, and find their
session through the conversation pygents injects. A session is one assistant
definition (:mod:`persona`) with its limits (:mod:`limits`).

This module gathers the names the rest of the example (and its users) import.
"""

from __future__ import annotations

from .events import Event, Outcome, TokenUsage
from .limits import MAX_COMMAND_TIMEOUT, Limits
from .persona import ASSISTANT, HELPER, Persona
from .runtime import PathEscapeError
from .session import Session, build_session, close_session
from .tasks import TaskManager, enable_delegation
from .tools import Conversation, toolset

__all__ = [
    "ASSISTANT",
    "HELPER",
    "MAX_COMMAND_TIMEOUT",
    "Conversation",
    "Event",
    "Limits",
    "Outcome",
    "PathEscapeError",
    "Persona",
    "Session",
    "TaskManager",
    "TokenUsage",
    "build_session",
    "close_session",
    "enable_delegation",
    "toolset",
]
