"""Token totals, rates, cost and budgets per agent, per service and for the fleet,
from the model-call spans the dashboard receives.

A model call's span ends before the span of the turn it runs in, and may arrive
before the records that say which agent the trace belongs to. So usage is tallied
per trace first (a bounded LRU of traces; a trace evicted before anyone claimed it is
counted, tokens and all) and credited to an agent, and that agent's service, when
``attribute(trace_id, agent, service)`` says whose the trace is; spans of a trace
already attributed are credited as they come. The fleet's totals are the sum of what
was credited: a model call outside any agent's turn is nobody's to show.

A span counted once is not counted again (a bounded set of recent span ids): a
sender that retries an export sends the same spans twice.

Rates are tokens credited in the last `RATE_WINDOW` seconds on the meter's clock
(injectable, for tests), kept in one-second buckets.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from pygents_tui.state._prices import Budget, Price
from pygents_tui.state._tokens import USAGE_KEYS, CallUsage, Prices, read_usage

__all__ = ["FLEET", "RATE_WINDOW", "BudgetPassed", "SpanUsage", "Usage", "UsageMeter"]

RATE_WINDOW: Final = 60  # seconds; the rate is tokens per minute over this window
FLEET: Final = "fleet"  # the scope of the fleet's budget in `BudgetPassed` and `over`
_RECENT: Final = 4096  # spans whose usage is kept as read (`UsageMeter.usage_of`)


class SpanUsage(Protocol):
    """What the meter reads of a span (`pygents_tui.listen.decode.ReceivedSpan` has it)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def span_id(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, object]: ...


@dataclass(frozen=True, slots=True)
class Usage:
    """One account's totals. ``cost`` is what the priced calls cost; ``unpriced`` the
    tokens of calls whose model has no price (their cost is unknown, not zero)."""

    tokens: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    reasoning: int = 0
    calls: int = 0
    cost: float = 0.0
    unpriced: int = 0
    per_minute: int = 0


@dataclass(frozen=True, slots=True)
class BudgetPassed:
    """A budget just passed: ``scope`` is `FLEET` or an agent's key."""

    scope: str
    limit: Literal["tokens", "cost"]
    budget: float
    spent: float


@dataclass(slots=True)
class _Account:
    """Running totals, mutable; `Usage` is its snapshot."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    reasoning: int = 0
    calls: int = 0
    cost: float = 0.0
    unpriced: int = 0
    # Tokens per second as ``[second, tokens]``; made on the first credit (a trace's
    # tally waiting for its owner has no rate, and thousands of them may wait).
    rate: deque[list[int]] | None = None

    def add(self, other: _Account) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_creation += other.cache_creation
        self.reasoning += other.reasoning
        self.calls += other.calls
        self.cost += other.cost
        self.unpriced += other.unpriced

    def take(self, other: _Account) -> None:
        """Take ``other``'s calls out of these (credited apart), never below zero."""
        self.input = max(self.input - other.input, 0)
        self.output = max(self.output - other.output, 0)
        self.cache_read = max(self.cache_read - other.cache_read, 0)
        self.cache_creation = max(self.cache_creation - other.cache_creation, 0)
        self.reasoning = max(self.reasoning - other.reasoning, 0)
        self.calls = max(self.calls - other.calls, 0)
        self.cost = max(self.cost - other.cost, 0.0)
        self.unpriced = max(self.unpriced - other.unpriced, 0)

    def add_call(self, usage: CallUsage, cost: float | None) -> None:
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_creation += usage.cache_creation
        self.reasoning += usage.reasoning
        self.calls += 1
        if cost is None:
            self.unpriced += usage.total
        else:
            self.cost += cost

    @property
    def tokens(self) -> int:
        return self.input + self.output

    def count_rate(self, second: int, tokens: int) -> None:
        buckets = self.rate
        if buckets is None:
            buckets = self.rate = deque(maxlen=RATE_WINDOW + 1)
        if buckets and buckets[-1][0] == second:
            buckets[-1][1] += tokens
        else:
            buckets.append([second, tokens])

    def per_minute(self, now: float) -> int:
        since = math.floor(now) - RATE_WINDOW
        tokens = sum(count for second, count in self.rate or () if second > since)
        return tokens * 60 // RATE_WINDOW

    def snapshot(self, now: float) -> Usage:
        return Usage(
            self.tokens,
            self.input,
            self.output,
            self.cache_read,
            self.cache_creation,
            self.reasoning,
            self.calls,
            self.cost,
            self.unpriced,
            self.per_minute(now),
        )


class UsageMeter:
    """Reads model-call spans with `add`, credits them with `attribute`, answers with
    `agent`, `service`, `fleet` and `check_budgets`. Not thread-safe: one caller
    (the dashboard's store, on its timer)."""

    def __init__(
        self,
        prices: Mapping[str, Price] | None = None,
        *,
        fleet_budget: Budget | None = None,
        agent_budgets: Mapping[str, Budget] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_traces: int = 10_000,
        max_agents: int = 4096,
        max_spans: int = 50_000,
    ) -> None:
        self.prices = Prices(prices or {})
        self.fleet_budget = fleet_budget
        self.agent_budgets = dict(agent_budgets or {})  # by the agent's name
        self.clock = clock
        self.max_traces, self.max_agents, self.max_spans = max_traces, max_agents, max_spans
        self.counts = dict.fromkeys(
            ("spans", "duplicates", "malformed", "capped", "traces evicted", "tokens evicted"), 0
        )
        self._fleet = _Account()
        self._agents: OrderedDict[str, _Account] = OrderedDict()
        self._services: dict[str, _Account] = {}
        self._names: dict[str, str] = {}  # agent key -> name, for the budgets by name
        self._pending: OrderedDict[str, _Account] = OrderedDict()  # trace -> not credited
        # trace -> (agent key, service, agent name)
        self._owners: OrderedDict[str, tuple[str, str, str]] = OrderedDict()
        # Recent spans by the hash of their ids: a few bytes each rather than two
        # strings (the hash is salted per process, so a sender cannot aim at one).
        self._seen: set[int] = set()
        self._seen_order: deque[int] = deque()
        # The usage of the most recent of them, read once: a run's end reads its steps'
        # again (`credit_steps`, `usage_of`), a few moments after they arrived.
        self._recent: OrderedDict[int, CallUsage] = OrderedDict()
        self._claimed: set[int] = set()  # those credited one by one (`credit_steps`)
        self._claimed_order: deque[int] = deque()
        self._passed: set[tuple[str, str]] = set()
        self._changed: set[str] = set()  # agents credited since the last budget check

    # -- feeding -------------------------------------------------------------------------

    def add(self, span: SpanUsage) -> bool:
        """Count a span's model usage; False when it reports none or was seen before."""
        attributes = span.attributes
        if attributes.keys().isdisjoint(USAGE_KEYS):  # most spans: no model call
            return False
        usage = read_usage(attributes)
        if usage is None:
            return False
        if not usage.valid:  # counts were sent, none of them usable
            self.counts["malformed"] += usage.malformed
            return False
        seen, ids = self._seen, hash((span.trace_id, span.span_id))
        if ids in seen:
            self.counts["duplicates"] += 1
            return False
        seen.add(ids)
        self._seen_order.append(ids)
        if len(seen) > self.max_spans:
            seen.discard(self._seen_order.popleft())
        recent = self._recent
        recent[ids] = usage
        if len(recent) > _RECENT:
            recent.popitem(last=False)
        self.counts["spans"] += 1
        self.counts["malformed"] += usage.malformed
        self.counts["capped"] += usage.capped
        call = _Account()
        call.add_call(usage, self.prices.cost(usage))
        owner = self._owners.get(span.trace_id)
        if owner is not None:
            self._credit(*owner, call)
            return True
        pending = self._pending
        tally = pending.get(span.trace_id)
        if tally is None:
            pending[span.trace_id] = call
            if len(pending) > self.max_traces:
                _, evicted = pending.popitem(last=False)
                self.counts["traces evicted"] += 1
                self.counts["tokens evicted"] += evicted.tokens
        else:
            tally.add(call)
        return True

    def usage_of(self, span: SpanUsage) -> CallUsage | None:
        """The usage ``span`` reports (`read_usage`), read again only if it is not one
        of the recent spans `add` counted."""
        usage = self._recent.get(hash((span.trace_id, span.span_id)))
        return usage if usage is not None else read_usage(span.attributes)

    def attribute(self, trace_id: str, agent: str, service: str, name: str | None = None) -> None:
        """The trace ``trace_id`` is a turn of ``agent`` (its key; ``name`` its own
        name, for the budgets by name, by default the key) in ``service``: credit
        what it has spent so far, and what it spends from now on. A trace already
        attributed keeps its first owner."""
        owners = self._owners
        if trace_id in owners:
            return
        owner = owners[trace_id] = (agent, service, name if name is not None else agent)
        if len(owners) > self.max_traces:
            owners.popitem(last=False)
        tally = self._pending.pop(trace_id, None)
        if tally is not None:
            self._credit(*owner, tally)

    def credit_steps(
        self, trace_id: str, spans: Iterable[SpanUsage], agent: str, service: str, name: str
    ) -> None:
        """Credit these model calls of ``trace_id`` (one run's own steps, read from
        its spans) to ``agent`` of ``service``, out of what the trace holds unclaimed:
        a trace that holds the runs of several agents (a handoff) is credited run by
        run, each agent its own calls, rather than whole to the first."""
        taken = _Account()
        claimed = self._claimed
        for span in spans:
            ids = hash((span.trace_id, span.span_id))
            if ids not in self._seen or ids in claimed:
                continue  # never counted (or too long ago to tell), or credited already
            usage = self._recent.get(ids) or read_usage(span.attributes)
            if usage is None or not usage.valid:
                continue
            claimed.add(ids)
            self._claimed_order.append(ids)
            if len(claimed) > self.max_spans:
                claimed.discard(self._claimed_order.popleft())
            taken.add_call(usage, self.prices.cost(usage))
        if not taken.calls:
            return
        pending = self._pending.get(trace_id)
        if pending is not None:
            pending.take(taken)
            if pending.calls <= 0:
                del self._pending[trace_id]
        self._credit(agent, service, name, taken)

    def _credit(self, agent: str, service: str, name: str, tally: _Account) -> None:
        second, tokens = math.floor(self.clock()), tally.tokens
        agents = self._agents
        account = agents.get(agent)
        if account is None:
            account = agents[agent] = _Account()
            self._names[agent] = name
            if len(agents) > self.max_agents:
                # Its tokens stay in its service's and the fleet's totals.
                forgotten, _ = agents.popitem(last=False)
                self._names.pop(forgotten, None)
                self._changed.discard(forgotten)
                self._passed.difference_update({(forgotten, "tokens"), (forgotten, "cost")})
        else:
            agents.move_to_end(agent)
        services = self._services
        if service not in services and len(services) >= self.max_agents:
            service = "(other services)"  # services are few; past the bound they share
        for target in (account, services.setdefault(service, _Account()), self._fleet):
            target.add(tally)
            target.count_rate(second, tokens)
        self._changed.add(agent)

    # -- reading -------------------------------------------------------------------------

    def agent(self, key: str) -> Usage | None:
        account = self._agents.get(key)
        return account.snapshot(self.clock()) if account is not None else None

    def service(self, name: str) -> Usage | None:
        account = self._services.get(name)
        return account.snapshot(self.clock()) if account is not None else None

    def fleet(self) -> Usage:
        return self._fleet.snapshot(self.clock())

    @property
    def priced(self) -> bool:
        """Whether a price table is configured (without one, cost is not shown)."""
        return bool(self.prices)

    def unattributed(self) -> int:
        """Tokens of traces no agent has claimed yet."""
        return sum(tally.tokens for tally in self._pending.values())

    # -- budgets -------------------------------------------------------------------------

    def check_budgets(self) -> tuple[list[BudgetPassed], frozenset[str]]:
        """The budgets passed since the last call (each only once, for a toast), and
        the scopes over a budget now (`FLEET` and agent keys, for the status line).

        A cost budget is compared with the priced calls' cost: with unpriced calls
        the real cost is higher, so a budget reported passed has been."""
        newly: list[BudgetPassed] = []
        if self.fleet_budget is not None:
            self._check(FLEET, self.fleet_budget, self._fleet, newly)
        for agent in self._changed:
            budget = self.agent_budgets.get(self._names.get(agent, agent))
            account = self._agents.get(agent)
            if budget is not None and account is not None:
                self._check(agent, budget, account, newly)
        self._changed.clear()
        live = set(self._agents)
        return newly, frozenset(s for s, _ in self._passed if s == FLEET or s in live)

    def _check(
        self, scope: str, budget: Budget, account: _Account, newly: list[BudgetPassed]
    ) -> None:
        limits: tuple[tuple[Literal["tokens", "cost"], float | None, float], ...] = (
            ("tokens", budget.tokens, float(account.tokens)),
            ("cost", budget.cost, account.cost),
        )
        for limit, allowed, spent in limits:
            if allowed is not None and spent > allowed and (scope, limit) not in self._passed:
                self._passed.add((scope, limit))
                newly.append(BudgetPassed(scope, limit, float(allowed), spent))
