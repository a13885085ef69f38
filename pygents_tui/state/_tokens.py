"""What one model call spent, read from its span's ``gen_ai.usage.*`` attributes, and
what that costs at a configured price.

The names are the OpenTelemetry GenAI semantic conventions' (``gen_ai.usage.input_tokens``
and the others below), with the older and alternative spellings instrumentations have
emitted accepted too, so that whatever made the span (the openai-v2 instrumentation,
an Anthropic one, a hand-made span) is counted.

The conventions say cache reads and writes are *included* in the input tokens, and
reasoning tokens in the output tokens. Some providers report them apart (Anthropic's
API does); a span whose cache counts exceed its input count is read that way and the
two are added, rather than the cache counts being dropped or the input going
negative. Reasoning tokens are treated the same way against the output.

Values come from the network: anything that is not a whole number of zero or more
is ignored (and counted), and a count past `MAX_TOKENS` is capped (and counted), so
one hostile span cannot turn the fleet's totals into nonsense.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pygents_tui.state._prices import Price

__all__ = ["MAX_TOKENS", "USAGE_KEYS", "CallUsage", "Prices", "read_usage"]

MAX_TOKENS: Final = 10_000_000
"""The most one model call is believed to use, per count: past every model's context
window by a wide margin, far below what would overflow anything."""

# The GenAI conventions' names first, then older spellings, pydantic-ai's details and
# OpenInference's (``llm.token_count.*``, on its LLM spans): the first one a span
# sends is read, so a span that sends two spellings of one count counts it once.
INPUT: Final = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
)
OUTPUT: Final = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
CACHE_READ: Final = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.input_tokens.cached",
    "gen_ai.usage.details.cache_read_tokens",
    "llm.token_count.prompt_details.cache_read",
)
CACHE_CREATION: Final = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "gen_ai.usage.input_tokens.cache_write",
    "gen_ai.usage.details.cache_write_tokens",
    "llm.token_count.prompt_details.cache_write",
)
REASONING: Final = (
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.usage.output_tokens.reasoning",
    "gen_ai.usage.details.reasoning_tokens",
    "llm.token_count.completion_details.reasoning",
)
USAGE_KEYS: Final = frozenset((*INPUT, *OUTPUT, *CACHE_READ, *CACHE_CREATION, *REASONING))
"""Every count `read_usage` reads: a span with none of them is no model call (a set
check, cheaper than reading it, for the many spans that are not)."""
# The model that answered first, then the one asked for.
MODEL: Final = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


@dataclass(frozen=True, slots=True)
class CallUsage:
    """One model call's tokens. ``input`` includes the cache's, ``output`` the
    reasoning's, as the conventions have it; ``total`` is what was used."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    reasoning: int = 0
    models: tuple[str, ...] = ()  # the response's model, then the request's
    malformed: int = 0  # counts present but not a whole number of zero or more
    capped: int = 0  # counts past MAX_TOKENS, taken as MAX_TOKENS
    valid: bool = True  # False: counts were sent, and none of them could be read

    @property
    def total(self) -> int:
        return self.input + self.output


def read_usage(attributes: Mapping[str, object]) -> CallUsage | None:
    """The usage a span's attributes report, ``None`` when they report none (and
    not ``valid`` when every count they sent was unusable)."""
    found = _Found(attributes)
    input_, output = found.first(INPUT), found.first(OUTPUT)
    cache_read, cache_creation = found.first(CACHE_READ), found.first(CACHE_CREATION)
    reasoning = found.first(REASONING)
    if not found.any:
        return CallUsage(malformed=found.malformed, valid=False) if found.malformed else None
    if cache_read + cache_creation > input_:
        input_ += cache_read + cache_creation  # reported apart from the input
    if reasoning > output:
        output += reasoning
    models = tuple(
        dict.fromkeys(
            value for name in MODEL if isinstance(value := attributes.get(name), str) and value
        )
    )
    return CallUsage(
        input_,
        output,
        cache_read,
        cache_creation,
        reasoning,
        models,
        found.malformed,
        found.capped,
    )


class _Found:
    """Reads counts by their names, tallying what was wrong with them."""

    def __init__(self, attributes: Mapping[str, object]) -> None:
        self.attributes = attributes
        self.any = False
        self.malformed = 0
        self.capped = 0

    def first(self, names: tuple[str, ...]) -> int:
        for name in names:
            if name not in self.attributes:
                continue
            value = self.attributes[name]
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                value = int(value)  # some senders put counts in doubles
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                self.malformed += 1
                continue
            self.any = True
            if value > MAX_TOKENS:
                self.capped += 1
                return MAX_TOKENS
            return value
        return 0


class Prices:
    """The configured prices, looked up by the model a span names.

    A response's model is often the request's with a date or version added
    (``gpt-4o`` answers as ``gpt-4o-2024-08-06``), so after an exact match the
    longest configured name that the model starts with, followed by ``-``, ``:`` or
    ``@``, is taken. Nothing else is guessed: no match, no price.
    """

    _CACHED: Final = 1024  # model names remembered; they come from the network

    def __init__(self, table: Mapping[str, Price]) -> None:
        self.table = dict(table)
        self._by_model: dict[str, Price | None] = {}

    def __bool__(self) -> bool:
        return bool(self.table)

    def of(self, models: tuple[str, ...]) -> Price | None:
        for model in models:
            price = self._lookup(model)
            if price is not None:
                return price
        return None

    def cost(self, usage: CallUsage) -> float | None:
        """What the call cost (``None``: its model has no price)."""
        price = self.of(usage.models)
        if price is None:
            return None
        write = price.input if price.cache_write is None else price.cache_write
        plain = max(0, usage.input - usage.cache_read - usage.cache_creation)
        spent = (
            plain * price.input
            + usage.cache_read * price.cache
            + usage.cache_creation * write
            + usage.output * price.output
        )
        return spent / 1_000_000

    def _lookup(self, model: str) -> Price | None:
        known = self._by_model
        if model in known:
            return known[model]
        price = self.table.get(model)
        if price is None:
            prefixes = [
                name for name in self.table if model[len(name) : len(name) + 1] in ("-", ":", "@")
            ]
            matching = [name for name in prefixes if model.startswith(name)]
            if matching:
                price = self.table[max(matching, key=len)]
        if len(known) >= self._CACHED:
            known.clear()
        known[model] = price
        return price
