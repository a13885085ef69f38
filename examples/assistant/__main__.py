"""``python -m assistant "task"`` (from ``examples/``): run the assistant.

With ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` set it talks to that
OpenAI-compatible endpoint; otherwise it plays a scripted demo offline. By default it
runs under the live dashboard (``--plain`` prints the stream instead); with the
standard ``OTEL_*`` variables set it is traced too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import pygents_otel
from pygents_tui import run_dashboard

from .agent import build_session, close_session
from .demo import demo_model, helper_model
from .model import model_from_env
from .tasks import enable_delegation


async def assist(task: str, *, plain: bool) -> str:
    model = model_from_env(fallback=demo_model())
    session = build_session(model, name="assistant")
    scripted = not (os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE"))
    manager = enable_delegation(
        session, (lambda t: helper_model(t)) if scripted else (lambda t: model_from_env())
    )
    try:
        async for event in session.run(task):
            if plain:
                end = "" if event.kind == "text" else "\n"
                prefix = "" if event.kind == "text" else f"[{event.kind}] "
                print(prefix + event.text, end=end, flush=True)
    finally:
        await manager.close()
        await close_session(session)
    return session.summary or ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m assistant", description=__doc__)
    parser.add_argument("task", nargs="?", default="write two notes and count their words")
    parser.add_argument("--plain", action="store_true", help="print the stream, no dashboard")
    args = parser.parse_args(argv)
    telemetry = None
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        telemetry = pygents_otel.configure(service_name="pygents-assistant")
    try:
        if args.plain:
            print("\nsummary:", asyncio.run(assist(args.task, plain=True)))
            return 0
        return run_dashboard(lambda: assist(args.task, plain=False), title=args.task)
    finally:
        if telemetry is not None:
            telemetry.shutdown()


if __name__ == "__main__":
    sys.exit(main())
