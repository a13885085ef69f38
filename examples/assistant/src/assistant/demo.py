"""A scripted conversation, so the assistant runs offline (no model configured)."""

from __future__ import annotations

from collections.abc import Sequence

from .model import Message, Reply, ScriptedModel, ToolCall


def _call(n: int, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"call-{n}", name=name, arguments=dict(arguments))


def demo_model() -> ScriptedModel:
    """Writes notes, delegates two word counts, looks in on them, collects them, stops."""
    return ScriptedModel(
        [
            Reply(
                "I'll write the notes first.",
                (
                    _call(
                        1, "write_file", path="notes/tides.txt", content="tides follow the moon\n"
                    ),
                    _call(
                        2, "write_file", path="notes/dunes.txt", content="dunes walk with wind\n"
                    ),
                    _call(3, "list_files"),
                ),
            ),
            Reply(
                "Two helpers will count words while I look around.",
                (
                    _call(4, "delegate_task", task="count the words of a short poem"),
                    _call(5, "delegate_task", task="count the words of a proverb"),
                    _call(6, "bash", command="cat notes/*.txt | wc -w"),
                ),
            ),
            Reply(
                "Checking on them, then collecting their results.",
                (_call(7, "check_tasks"), _call(8, "wait_for_tasks")),
            ),
            Reply("All done.", (_call(9, "stop", summary="notes written, words counted"),)),
        ]
    )


def helper_model(task: str) -> ScriptedModel:
    """A delegated task: one command, then stop with its output."""

    def step(messages: Sequence[Message]) -> Reply:
        results = [m for m in messages if m.role == "tool"]
        if not results:
            words = len(task.split())
            return Reply(f"Counting for: {task}", (_call(1, "bash", command=f"echo {words}"),))
        return Reply("", (_call(2, "stop", summary=f"{task}: {results[-1].content.strip()}"),))

    return ScriptedModel(step)
