"""The OTLP feeder's side of services and agents: which service and instance a
resource names, a sender's clock, a restarted process, and which agent an item
names. It writes into the dashboard's one store (`pygents_tui.state.Store`), which owns the tables.

Services are keyed by ``service.name`` and instance, agents by ``gen_ai.agent.id``
(else name) within their service: two processes that both run a ``planner`` keep
two rows. Both are bounded; the least recently heard of is evicted first, counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pygents_otel import _names as k
from pygents_tui.feeders.otlp.coerce import (
    as_text,
    run_of,
)
from pygents_tui.listen.decode import ReceivedRecord, ReceivedSpan, ResourceInfo, Value, cut_middle
from pygents_tui.state import (
    AgentEntry,
    Run,
    ServiceState,
    Store,
)

__all__ = ["Services"]

_SENT = " (otlp)"  # what sets a sender apart from a reserved service it names


class Services:
    """Which service and agent an item is about, written into the store it is given
    (see the module docstring). `Folding` and `LiveRecords` ask it for both."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._last: tuple[ResourceInfo | None, ServiceState | None] = (None, None)
        # The keys of services another feeder writes (the Redis mailboxes' ``redis``):
        # a sender whose resource names one is given a service of its own, so that
        # no OTLP record can write into those rows.
        self.reserved: set[tuple[str, str]] = set()

    def local_time(self, service: ServiceState, sent_ns: int, mono: float, wall: int) -> float:
        """A sender's timestamp on the model's clock: the arrival time moved back by
        how long ago the sender says it happened, within ``clock_lag``.

        A sender's clock is used as it is while it agrees with ours to within
        ``clock_trust`` seconds (a record may well be seconds late: batching,
        retries). Past that, it is wrong, not late, and its offset is taken out
        first (see `SenderClock`): a clock an hour behind must not make a turn
        that just started look half a minute old."""
        if not sent_ns:
            return mono
        lag = (wall - sent_ns) / 1e9
        offset = service.clock.offset
        if abs(offset) > self.store.limits.clock_trust:
            lag -= offset
        return mono - min(max(lag, 0.0), self.store.limits.clock_lag)

    def observe_clocks(
        self, items: Sequence[ReceivedRecord | ReceivedSpan], mono: float, wall: int
    ) -> None:
        """Feed each sender's `SenderClock` with the newest times (a record's, a
        span's end) of a request's items before any of them is folded, so that the
        first items are placed with what all of them say about the clock."""
        for item in items:
            sent = item.time_ns if isinstance(item, ReceivedRecord) else item.end_ns
            if sent:
                self._observe(item.resource, sent, mono, wall)

    def _observe(self, resource: ResourceInfo, sent_ns: int, mono: float, wall: int) -> None:
        service = self.service(resource, mono)
        if service is not None:
            service.clock.observe((wall - sent_ns) / 1e9, mono)

    # -- services and agents --------------------------------------------------------------------

    def service(self, resource: ResourceInfo, mono: float) -> ServiceState | None:
        """The service that sent ``resource``'s items, created on first sight;
        ``None`` when they come from a run of its process that a newer run replaced
        (see `_check_run`): the caller drops them, counted as ``replaced_dropped``."""
        last_resource, last_service = self._last
        if last_resource is resource and last_service is not None:
            service = last_service  # a batch's items share one resource object
        else:
            sent, key = resource, resource.key
            if key in self.reserved:
                key = (key[0], f"{key[1]}{_SENT}")
                resource = replace(resource, instance=key[1])
            found = self.store.services.get(key)
            service = found if found is not None else self.new_service(resource, mono)
            if not self._check_run(service, resource, mono):
                return None
            self._last = (sent, service)
        if mono > service.last_seen:
            service.last_seen = mono
        if service.stale:
            service.stale = False
            self.store.note(service, mono, service.label, "service", "sending again")
        return service

    def _check_run(self, service: ServiceState, resource: ResourceInfo, mono: float) -> bool:
        """Tell a restarted process from the one it replaces: the same service and
        ``service.instance.id`` (set by the deployment, kept across restarts) with
        another pid or creation time is a new run. The old run's running turns
        can never end now: they end as lost, and its agents go (the new run's,
        with new ids, would otherwise show beside them under the same names).
        False for items of a run already replaced (a late flush of the old
        process): folding them would bring its agents back."""
        run = run_of(resource)
        if run == service.run or run == (None, None):
            return True
        if run in service.retired:
            return False
        if service.run != (None, None):
            self._restarted(service, run, mono)
        service.run, service.pid = run, resource.pid
        return True

    def _restarted(self, service: ServiceState, run: Run, at: float) -> None:
        lost = self.store.lose_running(service, at, "restarted")
        self.store.retire_agents(service)
        service.retired.append(service.run)
        self.store.counts["restarts"] += 1
        pid = f" as pid {run[0]}" if run[0] is not None else ""
        text = f"process restarted{pid}: {len(lost)} running turn(s) lost"
        self.store.note(service, at, service.label, "service", text)

    def new_service(self, resource: ResourceInfo, mono: float) -> ServiceState:
        instance = resource.instance
        # A uuid is told apart by its first 8 digits; anything else is shown whole-ish.
        short = instance[:8] if len(instance) >= 32 else cut_middle(instance, 24)
        service = self.store.add_service(
            resource.service,
            instance,
            label=f"{resource.service}@{short}" if short else resource.service,
            at=mono,
            host=resource.host,
            pid=resource.pid,
            run=run_of(resource),
        )
        self.store.note(service, mono, service.label, "service", "new service")
        return service

    def forgot(self, service: ServiceState) -> None:
        """The store removed ``service``: the last-resource cache may hold it."""
        self._last = (None, None)

    def agent_of(self, service: ServiceState, attributes: Mapping[str, Value]) -> AgentEntry | None:
        """The agent named by ``gen_ai.agent.id`` (else ``gen_ai.agent.name``), created
        on first sight; ``None`` when none is named."""
        agent_id = attributes.get(k.AGENT_ID)
        name = as_text(attributes.get(k.AGENT_NAME)) or None
        if isinstance(agent_id, str) and agent_id:
            local = agent_id
        elif name is not None:
            local = f"name:{name}"
        else:
            return None
        agent = service.agents.get(local)
        if agent is None:
            return self.new_agent(service, local, name)
        self.store.agents.move_to_end(agent.key)
        if name is not None and agent.name != name:
            self.store.rename_agent(agent, name, self.store.label(service, name))
        return agent

    def new_agent(self, service: ServiceState, local: str, name: str | None) -> AgentEntry:
        shown = name or local[:8]
        key = f"{service.id}/{local}"
        return self.store.new_agent(service, local, shown, key, self.store.label(service, shown))
