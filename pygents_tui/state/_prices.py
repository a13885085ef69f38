"""What tokens cost and how many a run may spend: the configuration's prices and
budgets, as the store reads them (the command line's config file fills them in)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Budget", "Price"]


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
