"""Other frameworks' agents, folded from their spans alone: each run of an agent is a
turn of that agent, ended when its span arrives, and running until then.

What a span is comes from `genai.read_foreign` (the GenAI conventions or
OpenInference, never a framework's own names). An agent is keyed by its service and
its *name*, never by ``gen_ai.agent.id`` (some senders put a per-run value there).

Such a sender has no live records and ends a span only when its work ends; but a
run's steps (model calls, tool calls) end, and are sent, before the run does. A step
whose parent has not arrived is the sign of a run under way in its trace: that trace
gets one running turn, *inferred* (`TurnFacts.inferred`), started when its first step
started and known by its agent as soon as a step names it (pydantic-ai's do; others
name none until the run's own span comes). The run's span takes it back
(`Tables.withdraw`) and is counted instead; a service that goes stale leaves it
running, marked stale, like a pygents turn whose process stopped sending. Inferred
runs are bounded per service (`StoreLimits.inferred_runs`; past it they are counted
as ``inferred_dropped``), so a sender of steps without runs cannot fill the table.

A run failed when its own status says so, or when its last step failed and the run
did not say (OpenTelemetry's instrumentation of the OpenAI Agents SDK marks only the
failed model call); a step that failed before others (a tool that raised, its error
shown to the model) is one the run got past. A run nested in a run of the same agent
(seen: two spans per run) is counted once. A run's own steps (those with no other
run between them and it) are tallied when it ends: its agent's calls per tool
(`AgentEntry.tool`), and the run's tools, model calls and tokens as lines for the
inspector. Its own model calls' tokens are credited to its agent
(`Store.credit_steps`) as they arrive once a step named the agent, else when the
run ends; not by claiming its trace whole as a pygents turn does: the trace of a
handoff holds the runs of two agents, each credited its own calls. A run is timed
against its agent's earlier runs (`TurnFacts.paced_as`), not every agent's ``run``.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Final

from pygents import StopReason
from pygents_otel import _names as k
from pygents_tui.feeders.otlp.genai import Foreign, Role, read_foreign
from pygents_tui.feeders.otlp.live import end_time
from pygents_tui.feeders.otlp.services import Services
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import ReceivedSpan
from pygents_tui.state import AgentEntry, CallUsage, ServiceState, Store, TurnEntry

__all__ = ["INFERRED", "RUN", "ForeignRuns"]

RUN: Final = "run"
"""What a foreign run's turn shows as its tool."""
INFERRED: Final = "inferred"
"""The uuid prefix of a run known only by its steps (then its trace id)."""

_TOOLS_LISTED: Final = 8  # tools named on a run's inspector line; the others counted
_READS_KEPT: Final = 20_000  # spans whose reading is remembered for their run's end

_Step = tuple[ReceivedSpan, Foreign | None]


class ForeignRuns:
    """Folds other frameworks' runs into the store it is given (see the module
    docstring); `Services` says which service and agent a span is about."""

    def __init__(self, store: Store, services: Services, traces: TraceStore) -> None:
        self.store = store
        self.services = services
        self.traces = traces
        # The inferred runs by (service id, trace id), oldest first; how many each
        # service and each agent has.
        self._inferred: OrderedDict[tuple[str, str], TurnEntry] = OrderedDict()
        self._of_service: Counter[str] = Counter()
        self._of_agent: Counter[str] = Counter()
        # How recent spans were read, so that a run's end does not read its steps
        # again (bounded: past it, a step is read afresh).
        self._reads: OrderedDict[tuple[str, str], Foreign] = OrderedDict()

    def fold(
        self,
        service: ServiceState,
        span: ReceivedSpan,
        found: Foreign,
        mono: float,
        wall: int,
        run_ends_later: bool = False,
    ) -> None:
        """Fold ``span`` of ``service``, read as ``found``: a run ends its turn, a
        workflow ends what its trace was inferred to run, and any other step is a sign
        of a run under way, unless that run ends later in the same request
        (``run_ends_later``: the step is then its run's to tally, nothing more)."""
        service.framework = span.scope or "unnamed"
        reads = self._reads
        reads[span.trace_id, span.span_id] = found
        if len(reads) > _READS_KEPT:
            reads.popitem(last=False)
        if found.role is Role.RUN and found.agent is not None:
            self._run(service, span, found, mono, wall)
        elif found.role is Role.WORKFLOW:
            self._settle(service.id, span.trace_id)
        elif not run_ends_later:
            self._step(service, span, found, mono, wall)

    # -- runs under way -------------------------------------------------------------------------

    def _step(
        self, service: ServiceState, span: ReceivedSpan, found: Foreign, mono: float, wall: int
    ) -> None:
        """A step (a model or tool call) of a run whose span has not arrived: its
        trace has a run under way, inferred, whose Current is this step's tool."""
        parent = span.parent_id
        if parent is None or self.traces.span(span.trace_id, parent) is not None:
            return  # what it belongs to ended already: no sign of work going on
        store = self.store
        started = self.services.local_time(service, span.start_ns, mono, wall)
        key = (service.id, span.trace_id)
        turn = self._inferred.get(key)
        if turn is None:
            if self._of_service[service.id] >= store.limits.inferred_runs:
                store.counts["inferred_dropped"] += 1
                return
            agent = self._agent(service, found)
            turn = store.open_turn(service, f"{INFERRED}:{span.trace_id}", agent, RUN, started)
            turn.inferred, turn.trace_id, turn.start_ns = True, span.trace_id, span.start_ns
            turn.steps_credited = True  # (its run's span credits them)
            turn.paced_as = _pace(service, agent)
            store.start_running(turn)
            self._inferred[key] = turn
            self._of_service[service.id] += 1
            if agent is not None:
                self._began(agent)
            while len(self._inferred) > store.limits.running:
                self._settle(*next(iter(self._inferred)))
        else:
            if started < turn.started:  # a step that started earlier arrived later
                turn.started, turn.start_ns = started, min(turn.start_ns, span.start_ns)
            if turn.agent is None and found.agent is not None:
                agent = self._agent(service, found)
                if agent is not None:
                    store.adopt(turn, agent)
                    turn.paced_as = _pace(service, agent)
                    self._began(agent)
        turn.conversation = turn.conversation or found.conversation
        if found.role is Role.MODEL and turn.agent is not None:
            store.credit_steps(turn, (span,))  # its tokens show while the run goes on
        if found.role is Role.TOOL and found.tool is not None:
            turn.tool = f"{RUN}: {found.tool}"
            agent = store.agents.get(turn.agent) if turn.agent is not None else None
            if agent is not None:
                agent.current_turn, agent.current_tool = turn.key, found.tool

    def _agent(self, service: ServiceState, found: Foreign) -> AgentEntry | None:
        if found.agent is None:
            return None
        return self.services.agent_of(service, {k.AGENT_NAME: found.agent})

    def _began(self, agent: AgentEntry) -> None:
        self._of_agent[agent.key] += 1
        agent.began()

    def _settle(self, service_id: str, trace_id: str) -> None:
        """The run inferred in ``trace_id`` is over (its span, or its workflow's,
        arrived; or it is the oldest past the bound): take it back."""
        turn = self._inferred.pop((service_id, trace_id), None)
        if turn is None:
            return
        self._of_service[service_id] -= 1
        if not self._of_service[service_id]:
            del self._of_service[service_id]
        if turn.agent is not None and self._of_agent[turn.agent] > 0:
            self._of_agent[turn.agent] -= 1
            if not self._of_agent[turn.agent]:
                del self._of_agent[turn.agent]
        self.store.withdraw(turn)

    def forgot(self, service: ServiceState) -> None:
        """The store removed ``service`` with its turns: forget its inferred runs."""
        for key in [key for key in self._inferred if key[0] == service.id]:
            self._settle(*key)

    # -- runs that ended ------------------------------------------------------------------------

    def _run(
        self, service: ServiceState, span: ReceivedSpan, found: Foreign, mono: float, wall: int
    ) -> None:
        self._settle(service.id, span.trace_id)
        agent = self._agent(service, found)
        if agent is None:
            return
        steps = self._steps(span)
        if any(f is not None and f.role is Role.RUN and f.agent == found.agent for _, f in steps):
            return  # nested in a run of its own agent, folded already (children end first)
        store = self.store
        started = self.services.local_time(service, span.start_ns, mono, wall)
        turn = store.open_turn(service, f"{RUN}:{span.span_id}", agent, RUN, started)
        if turn.ended is not None:
            return  # a duplicate of a run already folded
        turn.trace_id, turn.span_id, turn.parent_id = span.trace_id, span.span_id, span.parent_id
        turn.start_ns, turn.paced_as = span.start_ns, _pace(service, agent)
        own = [(step, f) for step, f in steps if f is not None and step is not span]
        turn.conversation = found.conversation or next(
            (f.conversation for _, f in own if f.conversation), None
        )
        if turn.conversation is not None:
            agent.conversation = turn.conversation
        turn.steps = self._tally(agent, own, store.usage_of)
        turn.steps_credited = True
        store.credit_steps(turn, (step for step, f in own if f.role is Role.MODEL))
        error = found.error if found.failed else _failed_under(span, steps)
        reason = StopReason.ERROR if error is not None else StopReason.COMPLETED
        at = self.services.local_time(service, span.end_ns, mono, wall)
        store.finish(turn, reason, error, end_time(turn, span.end_ns, at))
        if not self._of_agent[agent.key]:  # (another of its runs may still be going)
            agent.run_ended(reason)

    def _steps(self, run: ReceivedSpan) -> list[_Step]:
        """The spans under ``run`` that are its own (no other run between), and the
        runs directly under it, read; once each, however the trace's parents loop."""
        children: dict[str, list[ReceivedSpan]] = {}
        for span in self.traces.spans(run.trace_id):
            if span.parent_id is not None:
                children.setdefault(span.parent_id, []).append(span)
        found: list[_Step] = []
        seen = {run.span_id}
        stack = [run.span_id]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child.span_id in seen:
                    continue
                seen.add(child.span_id)
                read = self._reads.get((child.trace_id, child.span_id)) or read_foreign(child)
                found.append((child, read))
                if read is None or read.role is not Role.RUN:
                    stack.append(child.span_id)  # a run's own steps are its to tally
        return found

    @staticmethod
    def _tally(
        agent: AgentEntry,
        own: list[tuple[ReceivedSpan, Foreign]],
        usage_of: Callable[[ReceivedSpan], CallUsage | None],
    ) -> tuple[tuple[str, str], ...]:
        """Count the run's tool calls on its agent; the inspector's lines for its
        tools, model calls and tokens."""
        tools: Counter[str] = Counter()
        failed: Counter[str] = Counter()
        calls = tokens_in = tokens_out = cache_read = 0
        for span, found in own:
            if found.role is Role.TOOL:
                name = found.tool or span.name
                agent.tool(name).add((span.end_ns - span.start_ns) / 1e9, found.error)
                tools[name] += 1
                failed[name] += found.failed
            elif found.role is Role.MODEL:
                calls += 1
                usage = usage_of(span)
                if usage is not None:
                    tokens_in += usage.input
                    tokens_out += usage.output
                    cache_read += usage.cache_read
        lines: list[tuple[str, str]] = []
        if tools:
            named = [
                f"{name} ×{count}" + (f" ({failed[name]} failed)" if failed[name] else "")
                for name, count in tools.most_common(_TOOLS_LISTED)
            ]
            more = len(tools) - _TOOLS_LISTED
            lines.append(("tools", ", ".join(named) + (f" and {more} more" if more > 0 else "")))
        if calls:
            lines.append(("model", f"{calls} call(s)"))
        if tokens_in or tokens_out:
            cached = f", {cache_read} from cache" if cache_read else ""
            lines.append(("tokens", f"{tokens_in} in{cached}, {tokens_out} out"))
        return tuple(lines)


def _pace(service: ServiceState, agent: AgentEntry | None) -> str:
    """Whose runs a run is timed against (stuck work): its agent's; a run whose agent
    is not known yet, nobody's (no samples: never called slow)."""
    return f"{RUN} of {agent.key if agent is not None else service.id}"


def _failed_under(run: ReceivedSpan, steps: list[_Step]) -> str | None:
    """Why ``run`` failed when its own status does not say: its last step (the child
    that ended last) failed. A failed step followed by others (a tool that raised,
    whose error the model was shown) is one the run got past."""
    children = [span for span, _ in steps if span.parent_id == run.span_id]
    if not children:
        return None
    last = max(children, key=_end)
    if last.status != "error":
        return None
    reason = last.attributes.get(k.ERROR_TYPE)
    return str(reason) if reason else last.status_message or f"{last.name} failed"


def _end(span: ReceivedSpan) -> int:
    return span.end_ns
