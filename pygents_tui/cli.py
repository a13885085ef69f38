"""``pygents-tui``: the live dashboard, around the built-in demo or your own program."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn

from pygents_tui import __version__
from pygents_tui._errors import summary
from pygents_tui._target import TargetError, load_target
from pygents_tui._terminal import terminal_problem
from pygents_tui.app import INTERRUPTED, Dashboard, Workload, exit_status
from pygents_tui.demo import build_demo

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not a usage dump: ``pygents-tui: error: ...`` and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _one_line(text: str) -> str:
    """Messages go to a terminal the dashboard just left: one line each."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pygents-tui",
        description="Watch pygents agents live: queues, running turns against their "
        "timeouts, streaming values, context, events.",
    )
    parser.add_argument("--version", action="version", version=f"pygents-tui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = commands.add_parser("demo", help="a built-in multi-agent workload (offline)")
    demo.add_argument("--seed", type=int, default=None, help="make the demo repeatable")
    demo.add_argument("--speed", type=float, default=1.0, help="run the demo faster or slower")
    run = commands.add_parser("run", help="run your async entry point under the dashboard")
    run.add_argument("target", help="PATH.py[:callable] or package.module:callable (default: main)")
    for sub in (demo, run):
        sub.add_argument(
            "--trace-url",
            default=os.environ.get("PYGENTS_TUI_TRACE_URL"),
            help="trace viewer URL with {trace_id}, e.g. http://localhost:16686/trace/{trace_id}",
        )
    return parser


def _without_console(variable: str) -> str | None:
    """The exporter list in ``variable`` less ``console``, which would write over the
    dashboard; ``None`` when the variable is unset (the default applies)."""
    value = os.environ.get(variable)
    if value is None or not value.strip():
        return None
    kept = [name for name in (n.strip() for n in value.split(",")) if name and name != "console"]
    return ",".join(kept) or "none"


def _telemetry() -> tuple[Any, Callable[..., Any] | None]:
    """Export to OTLP too when the standard variables ask for it."""
    traces = _without_console("OTEL_TRACES_EXPORTER")
    if traces == "none" or not (traces or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")):
        return None, None
    try:
        import pygents_otel
    except ImportError:
        return None, None
    return pygents_otel.configure(
        service_name=os.environ.get("OTEL_SERVICE_NAME", "pygents-tui"),
        traces_exporter=traces,
        metrics_exporter=_without_console("OTEL_METRICS_EXPORTER"),
    ), (pygents_otel.trace_id_of)


@contextmanager
def _interrupts_end(app: Dashboard) -> Iterator[None]:
    """SIGINT (``kill -INT``, or Ctrl-C in a terminal that sends it) ends the app as
    its ``ctrl+c`` key does: an orderly exit with status 130, the terminal restored.
    Without this, asyncio would cancel the app from outside and it would exit 0."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop is running: behave as Python does
            raise KeyboardInterrupt from None
        loop.call_soon_threadsafe(app.action_interrupt)

    try:
        previous = signal.signal(signal.SIGINT, interrupt)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``pygents-tui``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    problem = terminal_problem()  # before the program is loaded: nothing of it runs
    if problem is not None:
        print(f"pygents-tui: error: {problem}", file=sys.stderr)
        return 2
    workload: Workload
    if args.command == "demo":
        workload = build_demo(seed=args.seed, speed=args.speed).run
        title = "demo"
    else:
        try:
            workload = load_target(args.target)
        except TargetError as exc:
            print(f"pygents-tui: error: {_one_line(str(exc))}", file=sys.stderr)
            return 2
        except (SystemExit, KeyboardInterrupt) as exc:  # sys.exit() or Ctrl-C on import
            status, what = exit_status(exc)
            print(f"pygents-tui: {args.target} {what} while loading", file=sys.stderr)
            return status
        title = args.target
    telemetry, trace_id = _telemetry()
    app = Dashboard(workload, title=title, trace_url=args.trace_url, trace_id=trace_id)
    try:
        with _interrupts_end(app):
            app.run()
    except KeyboardInterrupt:  # before the app's loop ran, or after it stopped
        app.output.replay()
        print("pygents-tui: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        if telemetry is not None:
            telemetry.shutdown()
    app.output.replay()  # the program's prints, now that the terminal is back
    farewell = last_words(app)
    if farewell is not None:
        print(farewell, file=sys.stderr)
    return app.return_code or 0


def last_words(app: Dashboard) -> str | None:
    """The line said once the dashboard has given the terminal back, if any: why it
    ended itself, or what the workload failed with (an exception group's first
    leaves named, bounded)."""
    if app.exit_reason is not None:
        return f"pygents-tui: {app.exit_reason}"
    if app.workload_error is not None:
        return f"pygents-tui: the workload failed: {summary(app.workload_error, 500)}"
    return None
