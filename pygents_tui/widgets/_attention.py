"""The words the screen uses for stuck work, tokens and budgets: the status line's
part, the agents table's Tokens cell and a passed budget's toast (the wording of
the figures themselves is `pygents_tui.state._texts`')."""

from __future__ import annotations

from pygents_tui.state import DashboardView
from pygents_tui.state._texts import amount, cost_text, takeover, usage_line
from pygents_tui.state._usage import FLEET, BudgetPassed, Usage

__all__ = ["BUDGET_MARK", "attention_line", "budget_toast", "tokens_cell"]

BUDGET_MARK = "⚠ budget"


def attention_line(model: DashboardView) -> str:
    """`` · 2 stuck · 1 orphaned · 12.3k tok · 840 tok/min · $0.42 · ⚠ budget``: each
    part only when there is something to say (empty when there is none)."""
    parts: list[str] = []
    stuck = model.stuck_turns()
    orphaned = sum(1 for item in stuck if item.kind == "orphaned")
    if len(stuck) > orphaned:
        parts.append(f"{len(stuck) - orphaned} stuck")
    if orphaned:
        parts.append(f"{orphaned} orphaned")
    waiting = sum(model.awaiting_takeover().values())
    if waiting:
        parts.append(takeover(waiting))
    fleet = model.usage(None)
    if fleet is not None and fleet.calls:
        cost = fleet.cost if model.priced() else None
        parts.append(usage_line(fleet.tokens, fleet.per_minute, cost, fleet.unpriced))
    if model.over_budget():
        parts.append(BUDGET_MARK)
    return "".join(f" · {part}" for part in parts)


def tokens_cell(usage: Usage | None, priced: bool) -> str:
    """An agent's tokens, compact (``12.3k``), with what they cost when priced."""
    if usage is None or not usage.calls:
        return ""
    if not priced:
        return amount(usage.tokens)
    return f"{amount(usage.tokens)} {cost_text(usage.cost, usage.unpriced)}"


def budget_toast(passed: BudgetPassed, label: str) -> str:
    """One line for a budget just passed; ``label`` names the agent (or the fleet)."""
    who = "the fleet" if passed.scope == FLEET else label
    if passed.limit == "tokens":
        return (
            f"{who} passed its token budget: {amount(passed.spent)} tok of {amount(passed.budget)}"
        )
    return f"{who} passed its cost budget: {cost_text(passed.spent, 0)} of ${passed.budget:.2f}"
