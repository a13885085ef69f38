"""What the store works out once per drain for the operator's attention: stuck and
orphaned turns (`StuckWatch`), turns waiting for a takeover in Redis mailboxes, and
token use with its budgets (`UsageMeter`).

The feeders' hot paths do nothing for it: `Attention.ended` and `Attention.span` are
an append and a read of a span's attributes on the fold; the rest runs in
`Attention.settle`, once per drain, in time proportional to the running turns and the
turns that ended since the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from pygents_tui.state._entries import StoreLimits, TurnEntry
from pygents_tui.state._stuck import Stuck, StuckWatch, awaiting_takeover
from pygents_tui.state._usage import BudgetPassed, SpanUsage, Usage, UsageMeter

if TYPE_CHECKING:
    from pygents.redis import MailboxStats
    from pygents_tui.state._prices import Meters

__all__ = ["Attention"]

_TAKEOVER_EVERY = 1.0  # seconds between reads of the mailboxes' statistics


class Attention:
    """One `StuckWatch` and one `UsageMeter` for a store, and what they found at the
    last drain. ``name_of`` gives an agent key's own name (budgets are by name). What
    they remember per turn, trace and agent is bounded by the store's own limits:
    past them, the store has forgotten those turns anyway."""

    def __init__(
        self, clock: Callable[[], float], name_of: Callable[[str], str], limits: StoreLimits
    ) -> None:
        self._turns, self._agents = limits.turns, limits.agents
        self.watch = StuckWatch(max_tracked=self._turns)
        self.meter = UsageMeter(clock=clock, max_traces=self._turns, max_agents=self._agents)
        self._name_of = name_of
        self._ended: list[TurnEntry] = []  # turns that ended since the last settle
        self.stuck: list[Stuck] = []
        self.stuck_by_key: dict[str, Stuck] = {}
        self.takeover: dict[str, int] = {}
        self.news: list[BudgetPassed] = []  # budgets passed, not yet taken by the app
        self.over: frozenset[str] = frozenset()
        self._takeover_at = -_TAKEOVER_EVERY

    def configure(self, meters: Meters) -> None:
        """Apply the configuration's settings (``None``: keep the default). The meter
        and the watch are made anew: they are configured before anything arrives."""
        watch = self.watch
        self.watch = StuckWatch(
            factor=meters.stuck_factor if meters.stuck_factor is not None else watch.factor,
            silence=meters.stuck_silence if meters.stuck_silence is not None else watch.silence,
            max_tracked=self._turns,
        )
        self.meter = UsageMeter(
            meters.prices,
            fleet_budget=meters.fleet_budget,
            agent_budgets=meters.agent_budgets,
            clock=self.meter.clock,
            max_traces=self._turns,
            max_agents=self._agents,
        )

    # -- on the fold: cheap --------------------------------------------------------------

    def ended(self, turn: TurnEntry) -> None:
        self._ended.append(turn)

    def span(self, span: SpanUsage) -> None:
        self.meter.add(span)

    # -- once per drain --------------------------------------------------------------------

    def settle(
        self,
        running: Iterable[TurnEntry],
        now: float,
        trace_of: Callable[[TurnEntry], str | None],
        mailboxes: Callable[[], Mapping[str, MailboxStats]],
    ) -> bool:
        """Learn from the turns that ended, credit the traces now known to be turns,
        check the running turns and the budgets. True if what is shown changed."""
        watch, ended = self.watch, self._ended
        running = list(running)
        for turn in ended:
            watch.learn_turn(turn)
            watch.forget(turn.key)
            self._attribute(turn, trace_of)
        ended.clear()
        for turn in running:
            self._attribute(turn, trace_of)
        stuck = watch.check(running, now)
        changed = stuck != self.stuck
        self.stuck = stuck
        self.stuck_by_key = {item.key: item for item in stuck}
        if now - self._takeover_at >= _TAKEOVER_EVERY:  # a read of Redis statistics
            self._takeover_at = now
            takeover = awaiting_takeover(mailboxes())
            changed = changed or takeover != self.takeover
            self.takeover = takeover
        newly, over = self.meter.check_budgets()
        if newly or over != self.over:
            changed = True
        self.news.extend(newly)
        self.over = over
        return changed

    def _attribute(self, turn: TurnEntry, trace_of: Callable[[TurnEntry], str | None]) -> None:
        agent = turn.agent
        if agent is None or turn.steps_credited:
            return  # (another framework's run: its own model calls were credited to it)
        trace = turn.trace_id or trace_of(turn)
        if trace:
            self.meter.attribute(trace, agent, turn.service.name, self._name_of(agent))

    # -- reading ---------------------------------------------------------------------------

    def usage(self, agent: str | None) -> Usage | None:
        return self.meter.fleet() if agent is None else self.meter.agent(agent)

    def budget_news(self) -> list[BudgetPassed]:
        news, self.news = self.news, []
        return news
