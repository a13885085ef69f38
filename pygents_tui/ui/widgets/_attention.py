"""The words the screen uses for stuck work, tokens and budgets: the status line's
part, the agents table's Tokens cell and a passed budget's toast (the wording of
the figures themselves is `pygents_tui.state._texts`')."""

from __future__ import annotations

from pygents_tui.state import DashboardView
from pygents_tui.state._texts import amount, cost_text, takeover, usage_line
from pygents_tui.state._usage import FLEET, BudgetPassed, Usage

__all__ = [
    "BUDGET_MARK",
    "attention_line",
    "attention_parts",
    "budget_toast",
    "service_tokens",
    "tokens_cell",
]

BUDGET_MARK = "⚠ budget"


def attention_line(view: DashboardView) -> str:
    """`` · 2 stuck · 1 orphaned · 12.3k tok · 840 tok/min · $0.42 · ⚠ budget``: each
    part only when there is something to say (empty when there is none)."""
    return "".join(f" · {text}" for _kind, text in attention_parts(view))


def attention_parts(view: DashboardView) -> list[tuple[str, str]]:
    """The parts of `attention_line`, in its order, each with its kind: ``stuck``,
    ``orphaned``, ``takeover``, ``tokens`` (the fleet's) or ``budget``."""
    parts: list[tuple[str, str]] = []
    stuck = view.stuck_turns()
    orphaned = sum(1 for item in stuck if item.kind == "orphaned")
    if len(stuck) > orphaned:
        parts.append(("stuck", f"{len(stuck) - orphaned} stuck"))
    if orphaned:
        parts.append(("orphaned", f"{orphaned} orphaned"))
    waiting = sum(view.awaiting_takeover().values())
    if waiting:
        parts.append(("takeover", takeover(waiting)))
    fleet = view.usage(None)
    if fleet is not None and fleet.calls:
        cost = fleet.cost if view.priced() else None
        parts.append(("tokens", usage_line(fleet.tokens, fleet.per_minute, cost, fleet.unpriced)))
    if view.over_budget():
        parts.append(("budget", BUDGET_MARK))
    return parts


def service_tokens(view: DashboardView, service: str) -> str | None:
    """``svc-a: 12.3k tok · 840 tok/min · $0.42``, the tokens of ``service``'s agents
    (``None`` when none of its agents made a model call)."""
    usage = view.service_usage(service)
    if usage is None or not usage.calls:
        return None
    cost = usage.cost if view.priced() else None
    return f"{service}: {usage_line(usage.tokens, usage.per_minute, cost, usage.unpriced)}"


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
