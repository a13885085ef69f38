"""The assistant on the command line (``pygents-assistant``, or ``python -m assistant``).

    pygents-assistant                     a conversation: one message per line, each a
                                          follow-up in the same session; exit or EOF ends
    pygents-assistant --once "task"       one task under the live dashboard
    pygents-assistant --once "task" --plain
                                          one task, its stream printed
    pygents-assistant "task"              the same as --once "task"

The model: with OPENAI_API_KEY set, the OpenAI API (OPENAI_MODEL, default gpt-4o-mini);
with OPENAI_BASE_URL, any OpenAI-compatible server; with neither, or with --scripted,
a scripted demo that runs offline. The first line says which. The standard OTEL_*
variables turn tracing on (OTEL_TRACES_EXPORTER=console prints the spans).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pygents_otel
from pygents_tui import run_dashboard

from .agent import Event, Session, build_session, close_session
from .demo import demo_model, helper_model
from .model import Message, Model, ModelError, Part, Reply, ScriptedModel, ToolCall
from .openai_model import OpenAIModel, model_from_env
from .tasks import TaskManager, enable_delegation
from .tracing import start_tracing

PROMPT = "you> "
INTERRUPTED = 130  # the shell's status for a program ended by Ctrl-C
EXITS = frozenset({"exit", "quit"})
SCRIPT = "pygents-assistant"  # the console script of examples/assistant/pyproject.toml
MakeModel = Callable[[str], Model]


# --------------------------------------------------------------------------- models


def _follow_up(messages: Sequence[Message]) -> Reply:
    """A scripted answer to a follow-up: list the files, then stop saying how many."""
    asked = [m for m in messages if m.role == "user"]
    last = messages[-1]
    n = len(asked)
    if last.role == "user":
        call = ToolCall(f"follow-{n}-1", "list_files", {})
        return Reply(f"Looking at the files for: {last.content}", (call,))
    files = len(last.content.splitlines()) if last.content != "(empty)" else 0
    summary = f"{asked[-1].content}: {files} file(s) in the working directory"
    return Reply("", (ToolCall(f"follow-{n}-2", "stop", {"summary": summary}),))


class ScriptedConversation:
    """Offline, for the prompt loop: the demo's scripted task for the first message,
    then, for each follow-up, a look at the session's files and a one-line answer."""

    def __init__(self) -> None:
        self.demo = demo_model()
        self.follow_ups = ScriptedModel(_follow_up)

    def __repr__(self) -> str:
        return f"ScriptedModel(offline, {self.demo.remaining} demo replies, then follow-ups)"

    def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Part]:
        model = self.demo if self.demo.remaining else self.follow_ups
        return model.stream(messages, tools)


def choose_models(scripted: bool, conversation: bool) -> tuple[Model, MakeModel, str]:
    """The session's model, what makes its helpers' models, and a note for the start line.

    Helpers of a real model share it (and its connection pool); the scripted demo
    gives each helper a scripted model of its own.
    """
    offline: Model = ScriptedConversation() if conversation else demo_model()
    model = offline if scripted else model_from_env(fallback=offline)
    if model is offline:
        note = "" if scripted else " (set OPENAI_API_KEY or OPENAI_BASE_URL for a real model)"
        return model, helper_model, note
    return model, lambda task: model, ""


async def close_model(model: Model) -> None:
    if isinstance(model, OpenAIModel):
        await model.aclose()


# --------------------------------------------------------------------------- running


class Printer:
    """Prints a session's events as plain text: model text as it streams, the rest a
    line each."""

    def __init__(self) -> None:
        self.mid_line = False

    def __call__(self, event: Event) -> None:
        if event.kind == "text":
            print(event.text, end="", flush=True)
            self.mid_line = not event.text.endswith("\n")
            return
        if self.mid_line:
            print()
        print(f"[{event.kind}] {event.text}", flush=True)
        self.mid_line = False


async def open_session(model: Model, helpers: MakeModel) -> tuple[Session, TaskManager]:
    session = build_session(model, name="assistant")
    return session, enable_delegation(session, helpers)


async def shut(session: Session, manager: TaskManager, model: Model) -> None:
    try:
        await manager.close()
        await close_session(session)
    finally:
        await close_model(model)


async def ask(session: Session, message: str, show: Callable[[Event], None] | None) -> str:
    """One message to the session, run until the model stops; its summary."""
    async for event in session.run(message):
        if show is not None:
            show(event)
    return session.summary or ""


async def assist(task: str, model: Model, helpers: MakeModel, *, plain: bool) -> str:
    """One task in a new session, closed afterwards (the dashboard's workload)."""
    session, manager = await open_session(model, helpers)
    try:
        return await ask(session, task, Printer() if plain else None)
    finally:
        await shut(session, manager, model)


def converse(model: Model, helpers: MakeModel) -> int:
    """The prompt loop: each line a follow-up in one session, until ``exit`` or EOF.

    ``input()`` runs between the session's runs, on an event loop kept across them
    (``asyncio.Runner``): so Ctrl-C at the prompt or during a run ends the loop at
    once, and the session is closed (background tasks cancelled, runtime removed).
    """
    status = 0
    with asyncio.Runner() as runner:
        session, manager = runner.run(open_session(model, helpers))
        try:
            while True:
                try:
                    line = input(PROMPT).strip()
                except EOFError:
                    print()
                    break
                if line.lower() in EXITS:
                    break
                if not line:
                    continue
                try:
                    summary = runner.run(ask(session, line, Printer()))
                except ModelError as exc:  # the endpoint failed: say so, keep the session
                    print(f"\nassistant: model error: {exc}", file=sys.stderr)
                    continue
                print(f"summary: {summary}", flush=True)
        except KeyboardInterrupt:
            print("\nassistant: interrupted", file=sys.stderr)
            status = INTERRUPTED
        finally:
            runner.run(shut(session, manager, model))
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        # Usage lines name the command as it was typed: the script, or the module.
        prog=SCRIPT if os.path.basename(sys.argv[0]) == SCRIPT else "python -m assistant",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("task", nargs="?", help='one task, as with --once "task"')
    parser.add_argument("--once", metavar="TASK", help="run one task and exit")
    parser.add_argument("--plain", action="store_true", help="print the stream, no dashboard")
    parser.add_argument(
        "--scripted", action="store_true", help="the offline scripted demo, whatever is set"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.task is not None and args.once is not None:
        parser.error('give the task once: either "task" or --once "task"')
    task: str | None = args.once if args.once is not None else args.task
    try:
        model, helpers, note = choose_models(args.scripted, conversation=task is None)
    except ValueError as exc:  # a malformed OPENAI_BASE_URL, say
        print(f"assistant: error: {exc}", file=sys.stderr)
        return 2
    tracing = start_tracing()
    traced = f"; traces to {tracing.exporters}" if tracing is not None else ""
    print(f"assistant: model {model!r}{note}{traced}", file=sys.stderr, flush=True)
    try:
        if task is None:
            return converse(model, helpers)
        if args.plain:
            try:
                summary = asyncio.run(assist(task, model, helpers, plain=True))
            except ModelError as exc:
                print(f"\nassistant: model error: {exc}", file=sys.stderr)
                return 1
            except KeyboardInterrupt:
                print("\nassistant: interrupted", file=sys.stderr)
                return INTERRUPTED
            print(f"\nsummary: {summary}")
            return 0
        options: dict[str, Any] = {"title": task}
        if tracing is not None:
            options["trace_id"] = pygents_otel.trace_id_of
        return run_dashboard(lambda: assist(task, model, helpers, plain=False), **options)
    finally:
        if tracing is not None:
            tracing.shutdown()


if __name__ == "__main__":
    sys.exit(main())
