"""What tokens cost and how many a run may spend: the configuration's prices and
budgets, and the stuck-work thresholds, as the store reads them (`Meters`: the
command line's config file fills them in)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Budget", "Meters", "Price"]


@dataclass(frozen=True, slots=True)
class Price:
    """What a model costs, in the configuration's currency per million tokens."""

    input: float
    output: float
    cache: float = 0.0  # input tokens read from the provider's cache
    # Input tokens written to the cache; ``None``: billed as ordinary input.
    cache_write: float | None = None


@dataclass(frozen=True, slots=True)
class Budget:
    """A limit on tokens, on cost, or on both (``None``: no limit on that)."""

    tokens: int | None = None
    cost: float | None = None


def _no_budgets() -> Mapping[str, Budget]:
    return {}


@dataclass(frozen=True, slots=True)
class Meters:
    """Everything the store's meters are configured with, in one value (the read
    API, the store and its attention pass it on whole): the price table, the budgets
    and the stuck-work thresholds (``None``: the default)."""

    prices: Mapping[str, Price] | None = None
    fleet_budget: Budget | None = None
    agent_budgets: Mapping[str, Budget] = field(default_factory=_no_budgets)
    stuck_factor: float | None = None  # times a tool's recent p95
    stuck_silence: float | None = None  # seconds a stream may say nothing
