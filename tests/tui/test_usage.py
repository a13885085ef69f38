"""The token meter (`pygents_tui.state._usage`): model calls' ``gen_ai.usage.*``
attributes tallied per trace, credited to an agent, its service and the fleet once
the trace is known to be theirs, with a per-minute rate, cost from the price table,
and budgets; and every hostile shape a sender could put in those attributes."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest
from fake_clock import FakeClock

from pygents_tui import DashboardModel
from pygents_tui.state import Budget, Meters, Price
from pygents_tui.state._texts import amount, cost_text, usage_line
from pygents_tui.state._tokens import MAX_TOKENS, Prices, read_usage
from pygents_tui.state._usage import FLEET, BudgetPassed, UsageMeter

_ids = itertools.count(1)


@dataclass(frozen=True)
class Span:
    """The three fields the meter reads of a received span."""

    trace_id: str
    attributes: Mapping[str, object]
    span_id: str = field(default_factory=lambda: format(next(_ids), "016x"))


def call(trace: str, input_: object = 100, output: object = 50, **more: object) -> Span:
    attributes: dict[str, object] = {
        "gen_ai.usage.input_tokens": input_,
        "gen_ai.usage.output_tokens": output,
        "gen_ai.response.model": "gpt-4o-2024-08-06",
    }
    attributes.update({key.replace("__", "."): value for key, value in more.items()})
    return Span(trace, attributes)


GPT = {"gpt-4o": Price(input=2.5, output=10.0, cache=1.25)}


def test_usage_waits_for_its_trace_to_be_attributed_then_goes_to_agent_service_and_fleet() -> None:
    meter = UsageMeter(GPT, clock=FakeClock())
    assert meter.add(call("t1", 1000, 200))
    assert meter.add(call("t1", 500, 100))  # a second model call in the same turn
    assert meter.fleet().tokens == 0  # nobody's yet
    assert meter.unattributed() == 1800
    meter.attribute("t1", "svc/planner", "svc")
    for usage in (meter.agent("svc/planner"), meter.service("svc"), meter.fleet()):
        assert usage is not None
        assert (usage.tokens, usage.input, usage.output, usage.calls) == (1800, 1500, 300, 2)
    assert meter.unattributed() == 0
    assert meter.add(call("t1", 10, 10))  # after attribution: credited at once
    agent = meter.agent("svc/planner")
    assert agent is not None
    assert agent.tokens == 1820


def test_agents_of_one_service_add_up_in_it_and_services_in_the_fleet() -> None:
    meter = UsageMeter(clock=FakeClock())
    for trace, agent, service, tokens in [
        ("a", "s1/x", "s1", 10),
        ("b", "s1/y", "s1", 20),
        ("c", "s2/x", "s2", 40),
    ]:
        meter.add(call(trace, tokens, 0))
        meter.attribute(trace, agent, service)
    assert [meter.service(s).tokens for s in ("s1", "s2")] == [30, 40]  # type: ignore[union-attr]
    assert meter.fleet().tokens == 70
    assert meter.agent("nobody") is None
    assert meter.service("nowhere") is None


def test_a_trace_keeps_its_first_owner() -> None:
    meter = UsageMeter(clock=FakeClock())
    meter.attribute("t", "a", "s")
    meter.attribute("t", "b", "s")
    meter.add(call("t", 5, 5))
    assert meter.agent("a").tokens == 10  # type: ignore[union-attr]
    assert meter.agent("b") is None


def test_the_rate_is_tokens_credited_in_the_last_minute() -> None:
    clock = FakeClock(0.0)
    meter = UsageMeter(clock=clock)
    meter.attribute("t", "a", "s")
    meter.add(call("t", 300, 100))
    clock.advance(30)
    meter.add(call("t", 400, 0))
    assert meter.fleet().per_minute == 800
    clock.advance(30.5)  # the first call is now more than a minute old
    assert meter.fleet().per_minute == 400
    assert meter.agent("a").per_minute == 400  # type: ignore[union-attr]
    clock.advance(60)
    usage = meter.fleet()
    assert (usage.per_minute, usage.tokens) == (0, 800)  # the rate empties, totals stay


def test_the_rate_counts_tokens_when_they_are_credited_not_when_they_were_spent() -> None:
    clock = FakeClock(0.0)
    meter = UsageMeter(clock=clock)
    meter.add(call("t", 100, 0))
    clock.advance(120)
    meter.attribute("t", "a", "s")
    assert meter.fleet().per_minute == 100


# -- the attribute names -----------------------------------------------------------------


def test_the_conventions_names_and_the_older_ones_are_read() -> None:
    current = read_usage(
        {
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.output_tokens": 400,
            "gen_ai.usage.cache_read.input_tokens": 600,
            "gen_ai.usage.cache_creation.input_tokens": 100,
            "gen_ai.usage.reasoning.output_tokens": 250,
            "gen_ai.request.model": "gpt-4o",
        }
    )
    assert current is not None
    assert (current.input, current.output, current.total) == (1000, 400, 1400)
    assert (current.cache_read, current.cache_creation, current.reasoning) == (600, 100, 250)
    assert current.models == ("gpt-4o",)
    older = read_usage(
        {
            "gen_ai.usage.prompt_tokens": 10,
            "gen_ai.usage.completion_tokens": 5,
            "gen_ai.usage.cache_read_input_tokens": 4,
            "gen_ai.usage.output_tokens.reasoning": 2,
        }
    )
    assert older is not None
    assert (older.input, older.output, older.cache_read, older.reasoning) == (10, 5, 4, 2)
    assert read_usage({"http.method": "POST"}) is None


def test_cache_and_reasoning_counts_reported_apart_are_added_not_lost() -> None:
    # Anthropic's API reports cache reads beside the input, not inside it.
    apart = read_usage(
        {
            "gen_ai.usage.input_tokens": 20,
            "gen_ai.usage.cache_read.input_tokens": 5000,
            "gen_ai.usage.output_tokens": 10,
            "gen_ai.usage.reasoning.output_tokens": 40,
        }
    )
    assert apart is not None
    assert (apart.input, apart.output, apart.total) == (5020, 50, 5070)


def test_a_response_model_is_priced_by_its_configured_prefix_and_an_unknown_one_is_not() -> None:
    prices = Prices({"gpt-4o": Price(2.5, 10.0), "gpt-4o-mini": Price(0.15, 0.6)})
    assert prices.of(("gpt-4o-2024-08-06",)) == Price(2.5, 10.0)
    assert prices.of(("gpt-4o-mini-2024-07-18",)) == Price(0.15, 0.6)  # the longest
    assert prices.of(("gpt-4o",)) == Price(2.5, 10.0)
    assert prices.of(("gpt-4oo", "llama-3")) is None  # no separator: not a version of it
    assert prices.of(("mystery", "gpt-4o")) == Price(2.5, 10.0)  # the request's model
    for n in range(3000):  # model names come from the network: the lookups are bounded
        prices.of((f"hostile-{n}",))
    assert len(prices._by_model) <= 1024


def test_cost_prices_cache_reads_cache_writes_and_output_each_at_its_rate() -> None:
    price = Price(input=3.0, output=15.0, cache=0.3, cache_write=3.75)
    usage = read_usage(
        {
            "gen_ai.usage.input_tokens": 1_000_000,
            "gen_ai.usage.cache_read.input_tokens": 500_000,
            "gen_ai.usage.cache_creation.input_tokens": 100_000,
            "gen_ai.usage.output_tokens": 200_000,
            "gen_ai.response.model": "claude",
        }
    )
    assert usage is not None
    cost = Prices({"claude": price}).cost(usage)
    assert cost == pytest.approx(0.4 * 3.0 + 0.5 * 0.3 + 0.1 * 3.75 + 0.2 * 15.0)
    no_write_price = Prices({"claude": Price(3.0, 15.0, 0.3)}).cost(usage)
    assert no_write_price == pytest.approx(0.5 * 3.0 + 0.5 * 0.3 + 0.2 * 15.0)


def test_an_unknown_model_counts_tokens_and_says_its_cost_is_unknown() -> None:
    meter = UsageMeter(GPT, clock=FakeClock())
    meter.attribute("t", "a", "s")
    meter.add(call("t", 1_000_000, 0))  # gpt-4o: $2.50
    meter.add(Span("t", {"gen_ai.usage.input_tokens": 7000, "gen_ai.request.model": "llama"}))
    usage = meter.fleet()
    assert (usage.tokens, usage.cost, usage.unpriced) == (1_007_000, pytest.approx(2.5), 7000)
    assert cost_text(usage.cost, usage.unpriced) == "$2.50 + unknown (7.0k tok unpriced)"
    only_unknown = UsageMeter(GPT, clock=FakeClock())
    only_unknown.attribute("t", "a", "s")
    only_unknown.add(Span("t", {"gen_ai.usage.input_tokens": 5}))
    assert cost_text(only_unknown.fleet().cost, only_unknown.fleet().unpriced) == "cost unknown"


# -- hostile values ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-5, "100", True, 1.5, float("nan"), float("inf"), (1, 2), None])
def test_a_count_that_is_not_a_whole_number_of_zero_or_more_is_ignored_and_counted(
    bad: object,
) -> None:
    meter = UsageMeter(clock=FakeClock())
    meter.attribute("t", "a", "s")
    assert meter.add(call("t", bad, 7))
    assert meter.fleet().tokens == 7
    assert meter.counts["malformed"] == 1
    assert not meter.add(Span("t", {"gen_ai.usage.input_tokens": bad}))  # nothing else: no call
    assert meter.counts["malformed"] == 2
    assert meter.fleet().calls == 1


def test_a_whole_count_sent_as_a_double_is_read() -> None:
    usage = read_usage({"gen_ai.usage.input_tokens": 12.0})
    assert usage is not None
    assert usage.input == 12


def test_a_huge_count_is_capped_and_counted() -> None:
    meter = UsageMeter(clock=FakeClock())
    meter.attribute("t", "a", "s")
    meter.add(call("t", 10**30, 2**63))
    assert meter.fleet().tokens == 2 * MAX_TOKENS
    assert meter.counts["capped"] == 2


def test_the_same_span_sent_twice_is_counted_once_within_a_bounded_memory() -> None:
    meter = UsageMeter(clock=FakeClock(), max_spans=100)
    meter.attribute("t", "a", "s")
    span = call("t", 10, 0)
    assert meter.add(span)
    assert not meter.add(span)  # a retried export
    assert meter.fleet().tokens == 10
    assert meter.counts["duplicates"] == 1
    for _ in range(1000):
        meter.add(call("t", 1, 0))
    assert len(meter._seen) == 100


def test_traces_nobody_claims_are_evicted_past_the_bound_and_their_tokens_counted() -> None:
    meter = UsageMeter(clock=FakeClock(), max_traces=10)
    for n in range(25):
        meter.add(call(f"t{n}", 3, 0))
    assert len(meter._pending) == 10
    assert (meter.counts["traces evicted"], meter.counts["tokens evicted"]) == (15, 45)
    meter.attribute("t0", "a", "s")  # evicted: it comes too late to be credited
    meter.attribute("t24", "a", "s")
    assert meter.fleet().tokens == 3
    for n in range(100):  # the owners of traces are bounded too
        meter.attribute(f"o{n}", "a", "s")
    assert len(meter._owners) <= 10


def test_agents_are_bounded_and_a_forgotten_agents_tokens_stay_in_the_fleet() -> None:
    meter = UsageMeter(clock=FakeClock(), max_agents=5)
    for n in range(20):
        meter.attribute(f"t{n}", f"agent-{n}", f"svc-{n}")
        meter.add(call(f"t{n}", 1, 0))
    assert len(meter._agents) == 5
    assert meter.agent("agent-0") is None
    assert len(meter._services) == 6  # five, and the rest together
    assert meter.service("(other services)").tokens == 15  # type: ignore[union-attr]
    assert meter.fleet().tokens == 20


# -- budgets ----------------------------------------------------------------------------


def test_a_budget_is_announced_once_when_passed_and_stays_marked_while_over() -> None:
    meter = UsageMeter(
        GPT,
        clock=FakeClock(),
        fleet_budget=Budget(tokens=1000),
        agent_budgets={"planner": Budget(cost=1.0)},
    )
    meter.attribute("t1", "svc/planner#1", "svc", name="planner")
    meter.attribute("t2", "svc/coder", "svc", name="coder")
    meter.add(call("t1", 600, 0))
    assert meter.check_budgets() == ([], frozenset())
    meter.add(call("t2", 500, 0))  # the fleet passes 1000 tokens; coder has no budget
    assert meter.check_budgets() == (
        [BudgetPassed(FLEET, "tokens", 1000.0, 1100.0)],
        frozenset({FLEET}),
    )
    meter.add(call("t1", 0, 100_000))  # planner: $1.0015
    newly, over = meter.check_budgets()
    assert [(p.scope, p.limit, p.budget) for p in newly] == [("svc/planner#1", "cost", 1.0)]
    assert over == {FLEET, "svc/planner#1"}
    meter.add(call("t1", 1, 1))
    assert meter.check_budgets() == ([], frozenset({FLEET, "svc/planner#1"}))  # once each


def test_an_agent_budget_is_per_agent_of_that_name_each_on_its_own() -> None:
    meter = UsageMeter(clock=FakeClock(), agent_budgets={"planner": Budget(tokens=100)})
    meter.attribute("a", "one/planner", "one", name="planner")
    meter.attribute("b", "two/planner", "two", name="planner")
    meter.add(call("a", 60, 0))
    meter.add(call("b", 60, 0))
    assert meter.check_budgets() == ([], frozenset())
    meter.add(call("b", 60, 0))
    newly, over = meter.check_budgets()
    assert [p.scope for p in newly] == ["two/planner"]
    assert over == {"two/planner"}


# -- texts ------------------------------------------------------------------------------


def test_the_one_line_description_and_its_numbers() -> None:
    assert usage_line(12_345, 840, 0.42) == "12.3k tok · 840 tok/min · $0.42"
    assert usage_line(2_500_000, 12_000, None) == "2.5M tok · 12.0k tok/min"
    assert usage_line(5, 0, 0.0, unpriced=5) == "5 tok · 0 tok/min · cost unknown"
    assert [amount(n) for n in (0, 999, 999.6, 99_949, 99_999, 1e6, 3.2e9, -4)] == [
        "0",
        "999",
        "1.0k",
        "99.9k",
        "100k",
        "1.0M",
        "3.2G",
        "0",
    ]
    assert amount(float("nan")) == "?"
    assert cost_text(0.004, 0) == "<$0.01"
    assert cost_text(12.5, 0, currency="€") == "€12.50"


def test_an_agent_named_in_many_traces_but_never_spending_holds_nothing() -> None:
    meter = UsageMeter(clock=FakeClock(), max_traces=50, max_agents=10)
    for n in range(5000):  # a sender inventing agents: only the bounded owners remember
        meter.attribute(f"t{n}", f"agent-{n}", "s")
    assert len(meter._owners) == 50
    assert meter._names == {}
    assert meter._agents == {}


def test_a_store_takes_its_prices_budgets_and_stuck_thresholds_as_one_meters_value() -> None:
    # The five settings were spelled out three times (the read API, the store, its
    # attention); they travel as one `Meters` now, whole.
    model = DashboardModel(clock=FakeClock())
    assert not model.store.priced()
    model.store.configure_meters(
        Meters(prices={"gpt-4o": Price(input=2.5, output=10.0)}, stuck_factor=7.0)
    )
    assert model.store.priced()
    assert model.store.attention.watch.factor == 7.0


def test_openinference_and_pydantic_ai_counts_are_read_and_one_count_sent_twice_counts_once() -> (
    None
):
    """OpenInference's LLM spans say ``llm.token_count.*``; pydantic-ai puts cache and
    reasoning under ``gen_ai.usage.details.*``; a span with both spellings of a count
    (pygents' ``model_call`` writes both) counts it once."""
    openinference = read_usage(
        {
            "llm.token_count.prompt": 120,
            "llm.token_count.completion": 30,
            "llm.token_count.total": 150,
            "llm.token_count.prompt_details.cache_read": 100,
            "llm.model_name": "gpt-x",
        }
    )
    assert openinference is not None
    assert (openinference.input, openinference.output, openinference.cache_read) == (120, 30, 100)
    assert openinference.models == ("gpt-x",)
    both = read_usage({"gen_ai.usage.input_tokens": 7, "llm.token_count.prompt": 7})
    assert both is not None
    assert both.total == 7
    details = read_usage(
        {"gen_ai.usage.output_tokens": 9, "gen_ai.usage.details.reasoning_tokens": 4}
    )
    assert details is not None
    assert (details.reasoning, details.output) == (4, 9)


def test_a_runs_aggregated_usage_is_not_a_model_call() -> None:
    """pydantic-ai sums a run's calls on its agent span under ``gen_ai.aggregated_usage``:
    counting it too would count every token twice."""
    assert read_usage({"gen_ai.aggregated_usage.input_tokens": 5}) is None


def test_a_recent_span_s_usage_is_read_once_and_an_older_one_read_again_alike() -> None:
    """A run's end reads its model calls again (its tally, its credit): the recent
    ones' usage is the one read when they arrived; past the bound, read afresh, the
    same numbers. A span never counted is read as it is."""
    meter = UsageMeter(GPT, clock=FakeClock())
    first = call("t1", 1000, 200)
    assert meter.add(first)
    kept = meter.usage_of(first)
    assert kept is meter.usage_of(first)  # the same reading, not a new one
    assert kept == read_usage(first.attributes)
    for _ in range(5000):  # past the recent ones kept
        meter.add(call("t2", 1, 1))
    again = meter.usage_of(first)
    assert again is not kept
    assert again == kept
    never = call("t3", 7, 3)
    assert meter.usage_of(never) == read_usage(never.attributes)
