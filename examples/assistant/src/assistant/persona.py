"""Assistant definitions: who an assistant is and which tools it may use.

A :class:`Persona` replaces one fixed system prompt and toolset: each session is built
with one, and only its tools are offered to the model or accepted from it. Delegation
(``delegate_task``, ``check_tasks``, ``wait_for_tasks``) is not listed among the tools:
it comes with ``may_delegate`` and a task manager (``enable_delegation``). Delegated
sub-assistants get a persona of their own — :data:`HELPER` by default, which may not
delegate further, so a task cannot fan out without bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["ASSISTANT", "HELPER", "TASK_TOOLS", "WORK_TOOLS", "Persona"]

#: The tools a persona may list: they act in the session's runtime.
WORK_TOOLS: Final = ("bash", "read_file", "write_file", "list_files")
#: The delegation tools, offered when the persona may delegate and delegation is enabled.
TASK_TOOLS: Final = ("delegate_task", "check_tasks", "wait_for_tasks")


@dataclass(frozen=True)
class Persona:
    """An assistant definition: a name, a system prompt, its tools, and whether it may
    delegate. ``stop`` is always offered; the task tools follow ``may_delegate``."""

    name: str
    system_prompt: str
    tools: tuple[str, ...] = WORK_TOOLS
    may_delegate: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"Persona.name must be a non-empty string, got {self.name!r:.40}")
        if not isinstance(self.system_prompt, str) or not self.system_prompt.strip():
            raise ValueError(f"Persona {self.name!r:.40} needs a non-empty system_prompt")
        if not isinstance(self.tools, tuple):
            raise TypeError(
                f"Persona {self.name!r:.40}: tools must be a tuple of tool names, "
                f"e.g. ('bash', 'read_file'); got {type(self.tools).__name__}"
            )
        for name in self.tools:
            if name in TASK_TOOLS:
                raise ValueError(
                    f"Persona {self.name!r:.40}: {name!r} is not listed in tools; "
                    "set may_delegate=True to offer the task tools"
                )
            if name not in WORK_TOOLS:
                raise ValueError(
                    f"Persona {self.name!r:.40}: unknown tool {name!r:.40}; "
                    f"choose from {', '.join(WORK_TOOLS)}"
                )
        if len(set(self.tools)) != len(self.tools):
            raise ValueError(f"Persona {self.name!r:.40}: a tool is listed twice in {self.tools}")
        if not isinstance(self.may_delegate, bool):
            raise TypeError(f"Persona {self.name!r:.40}: may_delegate must be True or False")


ASSISTANT: Final = Persona(
    name="assistant",
    system_prompt=(
        "You are a careful assistant working in an isolated directory. Use the tools to "
        "act; call `stop` with a short summary when the task is done."
    ),
    may_delegate=True,
)

HELPER: Final = Persona(
    name="helper",
    system_prompt=(
        "You are a helper working on one delegated sub-task in a directory of your own. "
        "Do it with the tools, then call `stop` with a summary that states the result: "
        "it is all the assistant that delegated the task will see."
    ),
)
