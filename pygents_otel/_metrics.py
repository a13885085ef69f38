"""The instruments: GenAI operation durations and pygents' own counters and gauges."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from opentelemetry.metrics import CallbackOptions, Histogram, Meter, Observation
from opentelemetry.util.types import AttributeValue

from pygents import AgentRegistry, StopReason
from pygents_otel import _names as n
from pygents_otel._text import bounded

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

# The mailbox gauges: (name, unit, description, the MailboxStats field they report).
MAILBOX_GAUGES: Final = (
    (n.MAILBOX_DEPTH, "{turn}", "Turns not finished in each agent's mailbox", "depth"),
    (n.MAILBOX_PENDING, "{turn}", "Mailbox turns running on a worker", "pending"),
    (n.MAILBOX_WORKERS, "{worker}", "Live workers serving each mailbox", "workers"),
    (
        n.MAILBOX_DEAD_LETTERS,
        "{turn}",
        "Entries in each dead-letter stream",
        "dead_letters",
    ),
)

# The GenAI conventions' advisory buckets for operation durations, in seconds.
DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip


# The observable gauges: name, unit, description, and which of an agent's collections
# each one measures (``turns`` is the agent's queue of turns).
GAUGES: Final = (
    (n.QUEUE_DEPTH, "{turn}", "Turns waiting in each agent's queue", "turns"),
    (
        n.CONTEXT_QUEUE_GAUGE,
        "{item}",
        "Items in each agent's context queue (limit as an attribute)",
        "context_queue",
    ),
    (
        n.CONTEXT_POOL_GAUGE,
        "{item}",
        "Items in each agent's context pool (limit as an attribute)",
        "context_pool",
    ),
)


class Metrics:
    """Everything recorded besides spans; created once per instrumentation."""

    def __init__(self, meter: Meter) -> None:
        self.agent_duration = _duration(meter, n.AGENT_DURATION, "Duration of agent runs")
        self.tool_duration = _duration(meter, n.TOOL_DURATION, "Duration of tool invocations")
        self.turns = meter.create_counter(
            n.TURNS, unit="{turn}", description="Turns run, by tool and stop reason"
        )
        self.turn_duration = _duration(
            meter, n.TURN_DURATION, "Duration of turns, by tool and stop reason"
        )
        self.values = meter.create_counter(
            n.TOOL_VALUES, unit="{value}", description="Values streamed by tools"
        )
        self.active = True
        for name, unit, description, collection in GAUGES:
            meter.create_observable_gauge(
                name, callbacks=[self._sizes_of(collection)], unit=unit, description=description
            )
        for name, unit, description, field in MAILBOX_GAUGES:
            meter.create_observable_gauge(
                name, callbacks=[self._mailbox_gauge(field)], unit=unit, description=description
            )

    def agent_run(self, agent_name: str, seconds: float, error_type: str | None) -> None:
        attributes = _operation(n.INVOKE_AGENT, n.AGENT_NAME, agent_name, error_type)
        self.agent_duration.record(seconds, attributes)

    def tool_call(
        self, tool_name: str, seconds: float, error_type: str | None, values: int
    ) -> None:
        attributes = _operation(n.EXECUTE_TOOL, n.TOOL_NAME, tool_name, error_type)
        self.tool_duration.record(seconds, attributes)
        if values:
            self.values.add(values, {n.TOOL_NAME: bounded(tool_name)})

    def turn(self, tool_name: str, seconds: float, stop_reason: StopReason | None) -> None:
        attributes: dict[str, AttributeValue] = {
            n.PYGENTS_TOOL: bounded(tool_name),
            n.TURN_STOP_REASON: stop_reason.value if stop_reason else "unknown",
        }
        self.turns.add(1, attributes)
        self.turn_duration.record(seconds, attributes)

    def close(self) -> None:
        """Stop reporting (the gauges' callbacks return nothing from now on)."""
        self.active = False

    def _served(self) -> Mapping[str, MailboxStats]:
        """The mailboxes served in this process (``pygents.redis.served_stats()``), if
        the program imported ``pygents.redis``: it is never imported from here."""
        module = sys.modules.get("pygents.redis") if self.active else None
        read = getattr(module, "served_stats", None)
        if read is None:
            return {}
        stats: Mapping[str, MailboxStats] = read()
        return stats

    def _mailbox_gauge(self, field: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            for agent, stats in self._served().items():
                yield Observation(getattr(stats, field), {n.AGENT_NAME: bounded(agent)})

        return observe

    def _sizes_of(self, collection: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        """A gauge callback: the size of one collection of every registered agent.

        The context queue and pool also report their limit (0 when unbounded).
        """

        def observe(options: CallbackOptions) -> Iterable[Observation]:
            for agent in AgentRegistry.all() if self.active else []:
                measured = getattr(agent, collection)
                attributes: dict[str, AttributeValue] = {n.AGENT_NAME: bounded(agent.name)}
                if collection != "turns":
                    attributes[n.CONTEXT_LIMIT] = measured.limit or 0
                yield Observation(len(measured), attributes)

        return observe


def _duration(meter: Meter, name: str, description: str) -> Histogram:
    """A duration histogram in seconds, with the GenAI conventions' advisory buckets."""
    return meter.create_histogram(
        name,
        unit="s",
        description=description,
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
    )


def _operation(
    operation: str, name_key: str, name: str, error_type: str | None
) -> dict[str, AttributeValue]:
    """A GenAI operation's duration attributes: what ran, and its error type if it failed."""
    attributes: dict[str, AttributeValue] = {
        n.OPERATION: operation,
        n.PROVIDER: "pygents",
        name_key: bounded(name),
    }
    if error_type:
        attributes[n.ERROR_TYPE] = error_type
    return attributes
