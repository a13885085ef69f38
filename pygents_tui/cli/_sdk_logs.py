"""The OpenTelemetry SDK's log lines while the dashboard's own process exports telemetry
(``demo`` and ``run`` with the OTLP variables set).

With the collector gone, the SDK logs every failed export and every retry (each with
the whole gRPC error), its shutdown a line per provider and exporter, and
``pygents_otel`` two more: quitting a demo printed some 30 lines after the dashboard's
own, some of them after the prompt, from export threads still retrying. `HeldLogs`
holds them instead, from before the telemetry is set up until the process ends
(counted, the first one kept), and `HeldLogs.line` says what happened in one line of
ours. Knowing that the target failed also bounds the quit: there is no point in
waiting the whole shutdown budget for a collector that refused every export.
"""

from __future__ import annotations

import logging
import os

from pygents_tui.text._visible import visible

__all__ = ["SDK_LOGGERS", "TROUBLED_SHUTDOWN_SECONDS", "HeldLogs"]

# The SDK's loggers (exporters included), pygents_otel's, and gRPC's Python side.
SDK_LOGGERS = ("opentelemetry", "pygents_otel", "grpc")
# How long the shutdown waits for a target that already failed: time for a collector
# that has just come back to take the last batch, no more.
TROUBLED_SHUTDOWN_SECONDS = 1.0
_DETAIL = 160  # characters of the first message shown in the line


def _endpoint() -> str:
    """The target, as the standard variables name it (the traces' first)."""
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        value = os.environ.get(name, "").strip()
        if value:
            return value[:200]
    return "the default OTLP endpoint"


class HeldLogs(logging.Handler):
    """A handler on `SDK_LOGGERS` (which stop passing their records on to the root
    logger, hence to standard error): it counts the warnings and errors and keeps the
    first. Records may come from any export thread; `logging.Handler.handle` holds
    the handler's lock around `emit`."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.held = 0
        self.first: str | None = None
        self.export_failed = False
        self._propagate: dict[str, bool] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.held += 1
        if record.name.startswith("opentelemetry.exporter"):
            self.export_failed = True
        if self.first is None:
            try:
                message = record.getMessage()
            except Exception:  # a record whose arguments do not fit its format
                message = str(record.msg)
            self.first = " ".join(message.split())

    def install(self) -> HeldLogs:
        for name in SDK_LOGGERS:
            logger = logging.getLogger(name)
            self._propagate[name] = logger.propagate
            logger.propagate = False
            logger.addHandler(self)
        return self

    def uninstall(self) -> None:
        """Give the loggers back (not ``release``: that is the handler lock's).
        ``pygents-tui`` does it only when it set no telemetry up: an export thread
        still retrying when the process ends would print after the prompt."""
        for name, propagate in self._propagate.items():
            logger = logging.getLogger(name)
            logger.removeHandler(self)
            logger.propagate = propagate
        self._propagate.clear()

    def shutdown_timeout(self) -> float | None:
        """The shutdown's budget: short once the target failed, else the default."""
        return TROUBLED_SHUTDOWN_SECONDS if self.export_failed else None

    def line(self, unsent: int) -> str | None:
        """What to say once the dashboard has gone, in one line; ``None`` when the SDK
        said nothing. ``unsent`` is the number of spans that were not exported."""
        if not self.held:
            return None
        first = self.first or ""
        if len(first) > _DETAIL:
            first = first[:_DETAIL].rsplit(" ", 1)[0] + "…"
        held = f"{self.held:,} SDK message{'s' if self.held != 1 else ''} held back"
        if self.export_failed:
            lost = f"{unsent:,} span{'s' if unsent != 1 else ''} not sent, " if unsent else ""
            return visible(
                f"pygents-tui: telemetry could not be exported to {_endpoint()}: {first} "
                f"({lost}{held})"
            )
        return visible(f"pygents-tui: telemetry: {first} ({held})")
