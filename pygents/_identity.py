"""Who this process is in its telemetry: the seam between ``pygents_otel`` and a
transport that records its workers elsewhere.

A dashboard that hears a process over OTLP and also reads the Redis mailboxes it
serves (``pygents-tui listen --redis``) must tell whether the agent rows that process
sends are a mailbox's worker, or merely carry the same agent name: any sender may
name its agent ``billing``. The process's OpenTelemetry resource says who it is
(``service.name`` and ``service.instance.id``), but only ``pygents_otel`` can read
it: the core imports no OpenTelemetry. So ``pygents_otel`` sets `IDENTITY` once it
instruments with a tracer provider that has a resource, and clears it when it
stops; a Redis worker writes what it holds beside its heartbeat, where the
dashboard compares it with the sender's resource. Unset (``None``): no identity is
written, and no OTLP row is taken for that worker's.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IDENTITY", "Identity", "ProcessIdentity"]


@dataclass(frozen=True, slots=True)
class Identity:
    """The ``service.name`` and ``service.instance.id`` of this process's resource."""

    service: str
    instance: str


class ProcessIdentity:
    """The one holder of this process's `Identity` (``current``; ``None`` when no
    instrumentation said it)."""

    __slots__ = ("current",)

    def __init__(self) -> None:
        self.current: Identity | None = None

    def set(self, service: str, instance: str) -> None:
        self.current = Identity(service, instance)

    def clear(self) -> None:
        self.current = None


IDENTITY = ProcessIdentity()
"""This process's identity (set by ``pygents_otel``; unset otherwise)."""
