"""``pygents-tui``: the live dashboard, around the built-in demo or your own program,
or (``listen``) fed over OTLP by the processes and services of a whole fleet."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn

from pygents._extras import MissingExtraError, import_from_extra
from pygents_tui.cli._arguments import (
    DEMO_SPEED,
    PORT_OR_OFF,
    SECONDS,
    SPEED,
    no_such_flag,
    redis_url,
)
from pygents_tui.cli._config import ConfigError, add_config_argument, apply_config, load_config
from pygents_tui.cli._entry import version
from pygents_tui.cli._interrupts import noted_interrupts
from pygents_tui.cli._sdk_logs import HeldLogs
from pygents_tui.cli._target import TargetError, load_target
from pygents_tui.cli._terminal import refuse_without_terminal
from pygents_tui.cli._web import add_web_arguments, serve_web
from pygents_tui.cli.demo import build_demo
from pygents_tui.listen import LISTEN_PROVIDES
from pygents_tui.text._errors import summary
from pygents_tui.text._plural import counted
from pygents_tui.text._visible import visible
from pygents_tui.ui.app import INTERRUPTED, Dashboard, Workload, exit_status

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not a usage dump: ``pygents-tui: error: ...`` and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _one_line(text: str) -> str:
    """Messages go to a terminal the dashboard just left: one line each, with their
    control characters made visible (an error's message is the program's text)."""
    return visible("; ".join(line.strip() for line in text.splitlines() if line.strip()))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pygents-tui",
        description="Watch pygents agents live: queues, running turns against their "
        "timeouts, streaming values, context, events.",
    )
    parser.add_argument("--version", action="version", version=version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = commands.add_parser("demo", help="a built-in multi-agent workload (offline)")
    demo.add_argument("--seed", type=int, default=None, help="make the demo repeatable")
    demo.add_argument(
        "--speed",
        type=DEMO_SPEED,
        default=1.0,
        help="run the demo faster or slower: more than 0, at most 100 (default: 1)",
    )
    run = commands.add_parser("run", help="run your async entry point under the dashboard")
    run.add_argument("target", help="PATH.py[:callable] or package.module:callable (default: main)")
    listen = commands.add_parser(
        "listen",
        help="watch agents in other processes and services, fed over OTLP (read-only)",
        description=LISTEN_DESCRIPTION,
        epilog=LISTEN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listen.add_argument(
        "--host",
        default=None,
        help="the interface to listen on (default: 127.0.0.1, this machine only)",
    )
    listen.add_argument(
        "--grpc-port", type=PORT_OR_OFF, default=None, help="OTLP/gRPC port (default: 4317; 0: off)"
    )
    listen.add_argument(
        "--http-port", type=PORT_OR_OFF, default=None, help="OTLP/HTTP port (default: 4318; 0: off)"
    )
    listen.add_argument(
        "--port",
        nargs="?",
        dest=argparse.SUPPRESS,
        action=no_such_flag(
            "give --grpc-port PORT (OTLP/gRPC, default 4317) or --http-port PORT "
            "(OTLP/HTTP, default 4318)"
        ),
        help=argparse.SUPPRESS,
    )
    listen.add_argument(
        "--stale-after",
        type=SECONDS,
        default=None,
        metavar="SECONDS",
        help="mark a process stale after this long without news (default: 5)",
    )
    listen.add_argument(
        "--redis",
        type=redis_url,
        default=None,
        metavar="URL",
        help="also read the pygents.redis mailboxes on this Redis (redis://...), once a second",
    )
    listen.add_argument(
        "--redis-prefix",
        default="pygents",
        metavar="PREFIX",
        help="the key prefix of those mailboxes, as given to Mailboxes (default: pygents)",
    )
    listen.add_argument(
        "--control",
        action="store_true",
        help="act on the Redis mailboxes (pause, cancel, retry, drop, drain), each confirmed; "
        "without it the dashboard is read-only",
    )
    replay = commands.add_parser(
        "replay",
        help="replay a recording (--record, or a Collector's OTLP/JSON file output)",
        description=REPLAY_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("file", help="the recording: OTLP/JSON, one export request per line")
    replay.add_argument(
        "--speed", type=SPEED, default=1.0, help="start at this speed, 1 to 100 (default: 1)"
    )
    for sub in (demo, run, listen):
        sub.add_argument(
            "--record",
            metavar="FILE",
            default=None,
            help="also write what the dashboard receives to FILE (OTLP/JSON lines, appended)",
        )
    for sub in (demo, run, listen, replay):
        sub.add_argument(
            "--trace-url",
            default=None,
            help="trace viewer URL with {trace_id}, e.g. http://localhost:16686/trace/{trace_id}",
        )
        add_config_argument(sub)
    for sub in (demo, listen, replay):
        add_web_arguments(sub)
    return parser


LISTEN_DESCRIPTION = """\
Receive OTLP (gRPC and HTTP) from every process and service that exports to it,
and show their agents live: queues, running turns against their timeouts, values,
context sizes, events, and each turn's trace. Agents are told apart by service and
instance, so two processes running the same agent keep two rows.

The receiver only accepts data: it runs nothing it receives. The dashboard is
read-only unless --control is given with --redis: then it can pause, resume, cancel,
retry, drop and drain the pygents.redis mailboxes of that Redis, each confirmed.
Agents seen only over OTLP are never acted on from here (pause them in their own
process)."""

REPLAY_DESCRIPTION = """\
Show a recording in the listen dashboard, at 1x to 100x: a file written with
--record, or the OTLP/JSON output of an OpenTelemetry Collector's file exporter.
Keys: space pause/resume, + and - speed, [ and ] seek 10 s, < and > start and end."""

LISTEN_EPILOG = """\
point a service at it (live records on: OTEL_INSTRUMENTATION_PYGENTS_LIVE=true):
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 opentelemetry-instrument python service.py
(an OTLP/HTTP exporter goes to http://127.0.0.1:4318), or send a collector's traces and
logs to it (see "Watching services" in the docs). With --grpc-port 0 --http-port 0
and --redis URL, it shows the Redis mailboxes alone."""


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


def _listen(args: argparse.Namespace) -> int:
    """``pygents-tui listen``: the receiver first (a port in use is one line and exit
    2, before the screen is taken), then the dashboard on the same event loop."""
    if not args.grpc_port and not args.http_port and args.redis is None:
        print(
            "pygents-tui listen: error: --grpc-port and --http-port are both 0: nothing to "
            "listen on (leave one at its default, or read Redis mailboxes with --redis URL)",
            file=sys.stderr,
        )
        return 2
    if args.control and args.redis is None:
        print(
            "pygents-tui listen: error: --control acts on Redis mailboxes: give --redis URL too",
            file=sys.stderr,
        )
        return 2
    try:
        with noted_interrupts() as interrupted:
            serve = import_from_extra(
                "pygents_tui.cli.listen", "pygents-tui listen", "listen", LISTEN_PROVIDES
            )
            if args.redis is not None:
                importlib.import_module("pygents.redis")  # the 'redis' extra, said in one line
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        return 2
    if interrupted():  # while the listen extra imported
        print("pygents-tui: interrupted", file=sys.stderr)
        return INTERRUPTED
    try:
        status: int = serve.run(
            host=args.host,
            grpc_port=args.grpc_port,
            http_port=args.http_port,
            stale_after=args.stale_after,
            trace_url=args.trace_url,
            configure=args.settings.configure,
            interrupts=_interrupts_end,
            record=args.record,
            redis=args.redis,
            redis_prefix=args.redis_prefix,
            control=args.control,
        )
    except KeyboardInterrupt:  # before the app's loop ran, or after it stopped
        print("pygents-tui: interrupted", file=sys.stderr)
        return INTERRUPTED
    return status


def _replay(args: argparse.Namespace) -> int:
    """``pygents-tui replay FILE``: a file that is not a recording is one line, exit 2."""
    try:
        replay = import_from_extra(
            "pygents_tui.cli.replay", "pygents-tui replay", "listen", LISTEN_PROVIDES
        )
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        return 2
    try:
        status: int = replay.run(
            args.file,
            speed=args.speed,
            trace_url=args.trace_url,
            interrupts=_interrupts_end,
            configure=args.settings.configure,
        )
    except KeyboardInterrupt:
        print("pygents-tui: interrupted", file=sys.stderr)
        return INTERRUPTED
    return status


def _start_recording(path: str, title: str) -> tuple[Any, Any]:
    """``--record`` in-process: the writer and the telemetry exporting to it, or a
    one-line error (`OSError`, `MissingExtraError`)."""
    recording = import_from_extra("pygents_tui.recording", "--record", "listen", LISTEN_PROVIDES)
    from pygents_tui.recording._capture import record_in_process

    writer = recording.RecordWriter(path)
    return writer, record_in_process(writer, f"pygents-tui {title}")


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
    try:  # the command line first, then the file, then the defaults
        apply_config(args, load_config(args.config))
    except ConfigError as error:
        print(f"pygents-tui: error: {_one_line(str(error))}", file=sys.stderr)
        return 2
    if getattr(args, "web", False):
        argv = sys.argv[1:] if argv is None else argv
        title = f"pygents-tui {args.command}"
        return serve_web(argv, args.web_host, args.web_port, title, args.web_sessions, args.web_url)
    if args.command == "listen":
        return _listen(args)
    if args.command == "replay":
        return _replay(args)
    if refuse_without_terminal():  # before the program is loaded: nothing of it runs
        return 2
    workload: Workload
    note = None  # what loading the program did that the user should know
    if args.command == "demo":
        workload = build_demo(seed=args.seed, speed=args.speed).run
        title = "demo"
    else:
        try:
            target = load_target(args.target)
        except TargetError as exc:
            print(f"pygents-tui: error: {_one_line(str(exc))}", file=sys.stderr)
            return 2
        except (SystemExit, KeyboardInterrupt) as exc:  # sys.exit() or Ctrl-C on import
            status, what = exit_status(exc)
            print(f"pygents-tui: {args.target} {what} while loading", file=sys.stderr)
            return status
        title = args.target
        if target.note is not None:  # said before the screen is taken, and on it
            note = _one_line(target.note)
            print(f"pygents-tui: {note}", file=sys.stderr)
        workload = target
    recorder = None
    held = HeldLogs().install()  # the SDK's lines, from before its set-up to the end
    if args.record is not None:
        try:
            recorder, telemetry = _start_recording(args.record, title)
        except (OSError, MissingExtraError) as error:
            held.uninstall()
            reason = getattr(error, "strerror", None) or error
            print(f"pygents-tui: error: cannot record to {args.record}: {reason}", file=sys.stderr)
            return 2
        import pygents_otel

        trace_id: Callable[..., Any] | None = pygents_otel.trace_id_of
    else:
        telemetry, trace_id = _telemetry()
    if telemetry is None:
        held.uninstall()
    app = Dashboard(workload, title=title, trace_url=args.trace_url, trace_id=trace_id)
    if recorder is not None:  # it ends where the dashboard does
        from pygents_tui.recording._capture import end_in_process

        app.on_end.append(lambda: end_in_process(recorder))
    args.settings.configure(app)
    if note is not None:
        app.workload = _noted(workload, note, app)
    try:
        with _interrupts_end(app):
            app.run()
    except KeyboardInterrupt:  # before the app's loop ran, or after it stopped
        app.output.replay()
        print("pygents-tui: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        if telemetry is not None:
            _shut_down(telemetry, held)
        if recorder is not None:
            recorder.close()
            print(f"pygents-tui: {recorder.summary()}", file=sys.stderr)
    app.output.replay()  # the program's prints, now that the terminal is back
    farewell = last_words(app)
    if farewell is not None:
        print(farewell, file=sys.stderr)
    for line in pending_words(app):
        print(line, file=sys.stderr)
    return app.return_code or 0


def _noted(workload: Workload, note: str, app: Dashboard) -> Workload:
    """``workload``, first showing ``note`` on the dashboard as it starts."""

    async def noted() -> Any:
        app.notify(note, title="pygents-tui run", timeout=15)
        return await workload()

    return noted


def _shut_down(telemetry: Any, held: HeldLogs) -> None:
    """Shut the process's telemetry down, briefly if its target already failed, and
    say in one line what the SDK logged meanwhile (it stays held: an export thread
    may still be retrying as the process ends)."""
    telemetry.shutdown(timeout=held.shutdown_timeout())
    unsent = sum(c.ended - c.exported for c in telemetry.span_counts().values())
    line = held.line(unsent)
    if line is not None:
        print(line, file=sys.stderr)


def pending_words(app: Dashboard) -> list[str]:
    """One line per Redis mailbox whose turns were running here when the dashboard
    ended (`Dashboard.left_pending`): they are not lost, but wait for a worker."""
    return [
        f"pygents-tui: {counted(count, 'turn')} of {_one_line(agent)} running when you quit: "
        "a turn its worker did not finish stays pending in the Redis mailbox until a "
        "worker takes it over (after the visibility timeout)"
        for agent, count in sorted(app.left_pending.items())
    ]


def last_words(app: Dashboard) -> str | None:
    """The line said once the dashboard has given the terminal back, if any: why it
    ended itself, or what the workload failed with (an exception group's first
    leaves named, bounded)."""
    if app.exit_reason is not None:
        return f"pygents-tui: {app.exit_reason}"
    if app.workload_error is not None:
        return f"pygents-tui: the workload failed: {summary(app.workload_error, 500)}"
    return None
