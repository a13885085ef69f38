"""``pygents-tui listen``: the receiver and the dashboard on one event loop.

The receiver binds before the dashboard takes the terminal, so a port in use is
one line on stderr (naming the port and the fix) and exit status 2, never a
screen that flashes and vanishes. Then the dashboard runs with the fleet model as
its view, read-only, until the user quits; the receiver stops with it.

Ctrl-C (SIGINT) is this module's to handle from before the event loop starts: while
the dashboard runs it ends it (``interrupts``); before (the receiver starting) and
after, it is noted and acted on at the next step, one line and exit status 130.
asyncio's own handling would cancel whatever was awaited at that moment, and a
dashboard cancelled while it mounts printed Textual's tracebacks over the terminal.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from pygents_tui.cli._collector import paced_collector
from pygents_tui.cli._interrupts import noted_interrupts
from pygents_tui.cli._terminal import refuse_without_terminal
from pygents_tui.feeders.otlp.fleet import FleetModel
from pygents_tui.listen.receiver import ListenError, PortInUseError, Receiver, Recorder
from pygents_tui.ui.app import INTERRUPTED, Dashboard

__all__ = ["listen_app", "run"]

Interrupts = Callable[[Dashboard], AbstractContextManager[None]]


@dataclass(frozen=True, slots=True)
class _Listening:
    """What `run` was asked for, as `_serve` runs it."""

    host: str
    grpc_port: int
    http_port: int
    stale_after: float
    trace_url: str | None
    interrupts: Interrupts
    configure: Callable[[Dashboard], None] | None
    redis: tuple[str, str, bool] | None  # (url, prefix, control)


def listen_app(
    fleet: FleetModel,
    host: str,
    grpc_port: int | None,
    http_port: int | None,
    trace_url: str | None = None,
    redis: str | None = None,
) -> Dashboard:
    """The dashboard showing ``fleet``, titled with where the receiver listens, and
    ``redis`` (what the Redis source reads) first: the header cuts its end on a
    narrow screen, and the Redis URL is what a wrong setting is read from."""
    where = [
        f"{name} {host}:{port}"
        for name, port in (("gRPC", grpc_port), ("HTTP", http_port))
        if port is not None
    ]
    if redis is not None:
        where.insert(0, redis)
    endpoints = [
        f"http://{host}:{port} ({name})"
        for name, port in (("gRPC", grpc_port), ("HTTP", http_port))
        if port is not None
    ]
    if endpoints:
        fleet.send_here = " or ".join(endpoints)
    return Dashboard(
        view=fleet.store,
        title="listen · " + " · ".join(where),
        trace_url=trace_url,
    )


def run(
    *,
    host: str,
    grpc_port: int,
    http_port: int,
    stale_after: float,
    trace_url: str | None,
    interrupts: Interrupts,
    record: str | None = None,
    configure: Callable[[Dashboard], None] | None = None,
    redis: str | None = None,
    redis_prefix: str = "pygents",
    control: bool = False,
) -> int:
    """Listen and show until the user quits; the exit status. A port of 0 turns that
    transport off. ``record``: also append every accepted request to that file
    (`pygents_tui.recording`); a file that cannot be opened is one line and exit 2.
    ``redis``: also read the mailboxes on that Redis (``control``: and act on them),
    `pygents_tui.feeders.redis.source`."""
    asked = _Listening(
        host,
        grpc_port,
        http_port,
        stale_after,
        trace_url,
        interrupts,
        configure,
        (redis, redis_prefix, control) if redis is not None else None,
    )
    recorder = None
    if record is not None:
        from pygents_tui.recording import RecordWriter

        try:
            recorder = RecordWriter(record)
        except OSError as exc:
            print(
                f"pygents-tui listen: error: cannot record to {record}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 2
    try:
        # This process is the dashboard (`pygents_tui.cli._collector`); SIGINT is ours.
        with paced_collector(), noted_interrupts() as interrupted:
            return asyncio.run(_serve(asked, recorder, interrupted))
    finally:
        if recorder is not None:
            recorder.close()
            print(f"pygents-tui: {recorder.summary()}", file=sys.stderr)


def _interrupted() -> int:
    print("pygents-tui: interrupted", file=sys.stderr)
    return INTERRUPTED


async def _serve(
    asked: _Listening, recorder: Recorder | None, interrupted: Callable[[], bool]
) -> int:
    host, trace_url = asked.host, asked.trace_url
    fleet = FleetModel(stale_after=asked.stale_after)
    receiver = Receiver(
        fleet,
        host=host,
        grpc_port=asked.grpc_port or None,
        http_port=asked.http_port or None,
        recorder=recorder,
    )
    try:
        await receiver.start()
    except PortInUseError as error:
        flag = f"--{error.transport.lower()}-port"
        print(f"pygents-tui listen: error: {error} ({flag} PORT, or {flag} 0)", file=sys.stderr)
        return 2
    except ListenError as error:
        print(f"pygents-tui listen: error: {error}", file=sys.stderr)
        return 2
    if interrupted():  # while the receiver started
        await receiver.stop()
        return _interrupted()
    if refuse_without_terminal():  # after the ports' errors, before the screen is taken
        await receiver.stop()
        return 2
    source = None
    if asked.redis is not None:  # read before the app composes: it adds the Mailbox tab
        from pygents_tui.feeders.redis.source import RedisSource

        url, prefix, control = asked.redis
        source = RedisSource(fleet, url, prefix=prefix, control=control)
        fleet.store.sources.attach(source)
        source.start()  # a Redis that is down is a line in the dashboard, not an exit
    reading = None
    if source is not None:
        mode = "control" if source.control else "read-only"
        reading = f"Redis {mode}: {source.mailboxes.where}"
    app = listen_app(fleet, host, receiver.grpc_port, receiver.http_port, trace_url, reading)
    if asked.configure is not None:  # the configuration file's settings (`cli._config`)
        asked.configure(app)
    try:
        with asked.interrupts(app):
            if interrupted():  # the last one before the dashboard's own handling
                return _interrupted()
            await app.run_async()
    finally:
        if source is not None:
            await source.close()
        await receiver.stop()
        app.output.replay()  # anything printed in this process meanwhile, in order
    if app.exit_reason is not None:  # ctrl+c, or SIGINT
        print(f"pygents-tui: {app.exit_reason}", file=sys.stderr)
    return app.return_code or 0
