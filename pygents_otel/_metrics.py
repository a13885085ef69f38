"""The instruments: GenAI operation durations and pygents' own counters and gauges."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from opentelemetry.metrics import CallbackOptions, Meter, Observation
from opentelemetry.util.types import AttributeValue

from pygents import Agent, AgentRegistry, StopReason
from pygents_otel import _spans as s
from pygents_otel._text import bounded

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

# The GenAI conventions' advisory buckets for operation durations, in seconds.
# The mailbox gauges: (name, unit, description, the MailboxStats field they report).
MAILBOX_GAUGES: Final = (
    ("pygents.mailbox.depth", "{turn}", "Turns not finished in each agent's mailbox", "depth"),
    ("pygents.mailbox.pending", "{turn}", "Mailbox turns running on a worker", "pending"),
    ("pygents.mailbox.workers", "{worker}", "Live workers serving each mailbox", "workers"),
    (
        "pygents.mailbox.dead_letters",
        "{turn}",
        "Entries in each dead-letter stream",
        "dead_letters",
    ),
)

DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip


class Metrics:
    """Everything recorded besides spans; created once per instrumentation."""

    def __init__(self, meter: Meter) -> None:
        self.agent_duration = meter.create_histogram(
            "gen_ai.invoke_agent.duration",
            unit="s",
            description="Duration of agent runs",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.tool_duration = meter.create_histogram(
            "gen_ai.execute_tool.duration",
            unit="s",
            description="Duration of tool invocations",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.turns = meter.create_counter(
            "pygents.turns", unit="{turn}", description="Turns run, by tool and stop reason"
        )
        self.turn_duration = meter.create_histogram(
            "pygents.turn.duration",
            unit="s",
            description="Duration of turns, by tool and stop reason",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.values = meter.create_counter(
            "pygents.tool.values", unit="{value}", description="Values streamed by tools"
        )
        self.active = True
        meter.create_observable_gauge(
            "pygents.agent.queue.depth",
            callbacks=[self._queue_depths],
            unit="{turn}",
            description="Turns waiting in each agent's queue",
        )
        meter.create_observable_gauge(
            "pygents.context.queue.size",
            callbacks=[self._context_queue_sizes],
            unit="{item}",
            description="Items in each agent's context queue (limit as an attribute)",
        )
        meter.create_observable_gauge(
            "pygents.context.pool.size",
            callbacks=[self._context_pool_sizes],
            unit="{item}",
            description="Items in each agent's context pool (limit as an attribute)",
        )
        for name, unit, description, field in MAILBOX_GAUGES:
            meter.create_observable_gauge(
                name, callbacks=[self._mailbox_gauge(field)], unit=unit, description=description
            )

    def agent_run(self, agent_name: str, seconds: float, error_type: str | None) -> None:
        attributes: dict[str, AttributeValue] = {
            s.OPERATION: s.INVOKE_AGENT,
            s.PROVIDER: "pygents",
            s.AGENT_NAME: bounded(agent_name),
        }
        if error_type:
            attributes[s.ERROR_TYPE] = error_type
        self.agent_duration.record(seconds, attributes)

    def tool_call(
        self, tool_name: str, seconds: float, error_type: str | None, values: int
    ) -> None:
        attributes: dict[str, AttributeValue] = {
            s.OPERATION: s.EXECUTE_TOOL,
            s.PROVIDER: "pygents",
            s.TOOL_NAME: bounded(tool_name),
        }
        if error_type:
            attributes[s.ERROR_TYPE] = error_type
        self.tool_duration.record(seconds, attributes)
        if values:
            self.values.add(values, {s.TOOL_NAME: bounded(tool_name)})

    def turn(self, tool_name: str, seconds: float, stop_reason: StopReason | None) -> None:
        attributes: dict[str, AttributeValue] = {
            s.PYGENTS_TOOL: bounded(tool_name),
            s.STOP_REASON: stop_reason.value if stop_reason else "unknown",
        }
        self.turns.add(1, attributes)
        self.turn_duration.record(seconds, attributes)

    def close(self) -> None:
        """Stop reporting (the gauges' callbacks return nothing from now on)."""
        self.active = False

    def _agents(self) -> list[Agent]:
        return AgentRegistry.all() if self.active else []

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
                yield Observation(getattr(stats, field), {s.AGENT_NAME: bounded(agent)})

        return observe

    def _queue_depths(self, options: CallbackOptions) -> Iterable[Observation]:
        for agent in self._agents():
            yield Observation(len(agent.turns), {s.AGENT_NAME: bounded(agent.name)})

    def _context_queue_sizes(self, options: CallbackOptions) -> Iterable[Observation]:
        for agent in self._agents():
            queue = agent.context_queue
            yield Observation(
                len(queue),
                {s.AGENT_NAME: bounded(agent.name), "pygents.context.limit": queue.limit or 0},
            )

    def _context_pool_sizes(self, options: CallbackOptions) -> Iterable[Observation]:
        for agent in self._agents():
            pool = agent.context_pool
            yield Observation(
                len(pool),
                {s.AGENT_NAME: bounded(agent.name), "pygents.context.limit": pool.limit or 0},
            )
