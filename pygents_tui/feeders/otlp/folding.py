"""The write side of the fleet model: one received request folded into the store,
item by item, through the collaborators that own each kind: `Services` (which
service and agent), `LiveRecords` (the live records) and, here, the spans.

Every span goes to the trace store. A pygents turn span closes its turn when no
record did (see `LiveRecords`); with live records off, spans alone still give ended
turns, attributed to their agent when the agent-run span (which ends last) arrives.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
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
from pygents_tui.feeders.otlp.genai import Foreign, Role, read_foreign
from pygents_tui.feeders.otlp.live import LiveRecords, end_time
from pygents_tui.feeders.otlp.services import Services
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import Batch, ReceivedRecord, ReceivedSpan, ResourceInfo
from pygents_tui.state import (
    ServiceState,
    Store,
)

__all__ = ["Folding"]

_Item = TypeVar("_Item")


def _by_resource(
    items: Sequence[_Item], resource: Callable[[_Item], ResourceInfo]
) -> Iterator[list[_Item]]:
    """A request's items in runs of one resource (decoding keeps a resource group's
    items together, sharing one `ResourceInfo` object)."""
    for _, run in groupby(items, key=lambda item: id(resource(item))):
        yield list(run)


def _ending_later(spans: Sequence[ReceivedSpan], reads: Sequence[Foreign | None]) -> list[bool]:
    """For each span of a request: whether a span that ends its trace's run under way
    (a run naming its agent, or a workflow) comes later in the same request.

    Why: a request holds a run's steps before the run (children end first). A step
    whose run has not arrived starts an inferred run (`ForeignRuns`), which its run's
    span, a few items on, takes back: for every run of every request, work that
    leaves nothing behind. A step whose run ends later in its own request is folded
    as the step of a run already known."""
    ending = [False] * len(spans)
    closing: set[tuple[tuple[str, str], str]] = set()  # (the sender, the trace)
    for index in range(len(spans) - 1, -1, -1):
        span, found = spans[index], reads[index]
        key = (span.resource.key, span.trace_id)
        ending[index] = key in closing
        if found is not None and (
            found.role is Role.WORKFLOW or (found.role is Role.RUN and found.agent is not None)
        ):
            closing.add(key)
    return ending


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
        spans = batch.spans
        reads = [read_foreign(span) for span in spans]
        ending = _ending_later(spans, reads)
        items = list(zip(spans, reads, ending, strict=True))
        for group in _by_resource(items, lambda item: item[0].resource):
            services.observe_clocks([span for span, _, _ in group], mono, wall)
            for span, found, ends in group:
                if not first:
                    yield
                first = False
                self.fold_span(span, mono, wall, found, ends)
        for records in _by_resource(batch.records, lambda record: record.resource):
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

    def fold_span(
        self,
        span: ReceivedSpan,
        mono: float,
        wall: int,
        found: Foreign | None,
        run_ends_later: bool = False,
    ) -> None:
        """Fold ``span``, read as ``found`` (`read_foreign`); ``run_ends_later``: what
        its trace runs ends later in the same request (`_ending_later`)."""
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
        if found is not None:
            self.foreign.fold(service, span, found, mono, wall, run_ends_later)
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
        if attributes.get(k.OUTPUT_KIND) is not None:
            turn.returns = False  # no value: a turn or context item routed, or a verdict
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
