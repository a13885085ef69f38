"""The write side of the fleet model: one received request folded into the store,
item by item, through the collaborators that own each kind: `Services` (which
service and agent), `LiveRecords` (the live records) and, here, the spans.

Every span goes to the trace store. A pygents turn span closes its turn when no
record did (see `LiveRecords`); with live records off, spans alone still give ended
turns, attributed to their agent when the agent-run span (which ends last) arrives.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from itertools import groupby
from typing import TypeVar

from pygents_otel import _names as k
from pygents_tui.feeders.otlp.coerce import (
    as_float,
    as_int,
    as_tags,
    as_text,
    stop_reason,
)
from pygents_tui.feeders.otlp.foreign import ForeignRuns
from pygents_tui.feeders.otlp.genai import read_foreign
from pygents_tui.feeders.otlp.live import LiveRecords, end_time
from pygents_tui.feeders.otlp.services import Services
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import Batch, ReceivedRecord, ReceivedSpan
from pygents_tui.state import (
    ServiceState,
    Store,
)

__all__ = ["Folding"]

_Item = TypeVar("_Item", ReceivedSpan, ReceivedRecord)


def _by_resource(items: Sequence[_Item]) -> Iterator[list[_Item]]:
    """A request's items in runs of one resource (decoding keeps a resource group's
    items together, sharing one `ResourceInfo` object)."""
    for _, run in groupby(items, key=lambda item: id(item.resource)):
        yield list(run)


class Folding:
    """Folds received requests into the store it is given (see the module docstring)."""

    def __init__(self, store: Store, traces: TraceStore) -> None:
        self.store = store
        self.traces = traces  # the store's, as the feeder adds to it
        self.services = Services(store)
        self.live = LiveRecords(store, self.services)
        self.foreign = ForeignRuns(store, self.services, traces)
        self._agent_spans: OrderedDict[str, str] = OrderedDict()

    def fold_batch(self, batch: Batch, mono: float, wall: int) -> None:
        """Fold one received request whole (see `steps`)."""
        for _ in self.steps(batch, mono, wall):
            pass

    def steps(self, batch: Batch, mono: float, wall: int) -> Iterator[None]:
        """Fold one received request, which arrived at ``mono`` (``wall``), an item per
        step, so that a feeder can stop between two items when its time is spent and
        go on later (`FleetModel.fold`). One resource's items at a time: each sender's
        clock is fed with all of its items' times first (`Services.observe_clocks`),
        then they are folded. Resolving a service for the clock and then again for
        folding created every service a request named over the bound twice (the first
        ones were evicted by the last before being folded), so each counted two
        evictions.

        A step stops *between* two items, never after the last: the step that folds
        the last item finishes the request, so that a feeder knows it is done
        (`FleetModel.backlog`) without another call to find it out."""
        services = self.services
        first = True
        for spans in _by_resource(batch.spans):
            services.observe_clocks(spans, mono, wall)
            for span in spans:
                if not first:
                    yield
                first = False
                self.fold_span(span, mono, wall)
        for records in _by_resource(batch.records):
            services.observe_clocks(records, mono, wall)
            for record in records:
                if not first:
                    yield
                first = False
                self.fold_record(record, mono, wall)
        for resource, points in batch.points:
            service = services.service(resource, mono)
            if service is None:
                self.store.counts["replaced_dropped"] += points
            else:
                service.points += points
                self.store.counts["points"] += points

    def fold_span(self, span: ReceivedSpan, mono: float, wall: int) -> None:
        service = self.services.service(span.resource, mono)
        if service is None:
            self.store.counts["replaced_dropped"] += 1
            return
        service.spans += 1
        self.store.counts["spans"] += 1
        self.traces.add(span)
        self.store.span_arrived(span)
        attributes = span.attributes
        uuid = attributes.get(k.TURN_UUID)
        foreign = read_foreign(span)
        if foreign is not None:
            self.foreign.fold(service, span, foreign, mono, wall)
        elif isinstance(uuid, str) and uuid and span.name.startswith(k.TURN_SPAN_PREFIX):
            self._turn_span(service, span, uuid, mono, wall)
        elif attributes.get(k.OPERATION) == k.INVOKE_AGENT:
            self._agent_span(service, span)

    def fold_record(self, record: ReceivedRecord, mono: float, wall: int) -> None:
        service = self.services.service(record.resource, mono)
        if service is None:
            self.store.counts["replaced_dropped"] += 1
            return
        service.records += 1
        self.store.counts["records"] += 1
        self.live.fold(service, record, mono, wall)

    # -- spans ------------------------------------------------------------------------------------

    def _turn_span(
        self, service: ServiceState, span: ReceivedSpan, uuid: str, mono: float, wall: int
    ) -> None:
        attributes = span.attributes
        agent = self.services.agent_of(service, attributes)
        if agent is None and span.parent_id is not None:
            owner = self._agent_spans.get(span.parent_id)
            agent = self.store.agents.get(owner) if owner is not None else None
        tool = as_text(attributes.get(k.PYGENTS_TOOL)) or span.name[len(k.TURN_SPAN_PREFIX) :]
        started = self.services.local_time(service, span.start_ns, mono, wall)
        turn = self.store.open_turn(service, uuid, agent, tool, started)
        turn.trace_id, turn.span_id, turn.parent_id = span.trace_id, span.span_id, span.parent_id
        if not turn.start_ns:
            turn.start_ns = span.start_ns
        turn.timeout = turn.timeout or as_float(attributes.get(k.TURN_TIMEOUT)) or 0.0
        turn.tags = turn.tags or as_tags(attributes.get(k.TAGS))
        self.store.add_values(turn, as_int(attributes.get(k.SPAN_VALUES)))
        if turn.ended is not None:
            return  # its end record closed it already
        error = as_text(attributes.get(k.ERROR_TYPE))
        reason = stop_reason(attributes.get(k.TURN_STOP_REASON), error, span.status == "error")
        ended = end_time(
            turn, span.end_ns, self.services.local_time(service, span.end_ns, mono, wall)
        )
        self.store.finish(turn, reason, span.status_message or error, ended)

    # -- agent spans ----------------------------------------------------------------------------

    def _agent_span(self, service: ServiceState, span: ReceivedSpan) -> None:
        agent = self.services.agent_of(service, span.attributes)
        if agent is None:
            return
        self._agent_spans[span.span_id] = agent.key
        while len(self._agent_spans) > self.store.limits.agent_spans:
            self._agent_spans.popitem(last=False)
        for child in self.traces.spans(span.trace_id):
            uuid = child.attributes.get(k.TURN_UUID)
            if child.parent_id == span.span_id and isinstance(uuid, str):
                turn = self.store.turns.get(f"{service.id}/{uuid}")
                if turn is not None and turn.agent is None:
                    self.store.adopt(turn, agent)
        if not service.live:  # no live records: the span is all we know of the run
            reason = stop_reason(
                span.attributes.get(k.AGENT_STOP_REASON), None, span.status == "error"
            )
            agent.run_ended(reason)  # (no live records: no log line either)
