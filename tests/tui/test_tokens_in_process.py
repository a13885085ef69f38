"""Token use in-process: a tool's model call, traced by whatever instrumentation the
program has (here a span made with the SDK's tracer, as an LLM client's
instrumentation would make it), is counted for the agent whose turn made it, once
the dashboard captures the program's spans (``tracer_provider``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard
from pygents_tui.cli._config import Config
from pygents_tui.state import Budget, Price
from pygents_tui.ui.widgets import AgentsTable

SIZE = (130, 30)


def writer(provider: TracerProvider) -> Callable[[int], Awaitable[None]]:
    """Runs the writer agent for ``calls`` turns, each making one model call."""
    tracer = provider.get_tracer("an-llm-client")

    @tool()
    async def draft(topic: str) -> str:
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 12_000,
                "gen_ai.usage.output_tokens": 300,
            },
        ):
            pass
        return f"a draft on {topic}"

    agent = Agent("writer", "writes", [draft])

    async def run(calls: int) -> None:
        for n in range(calls):
            await agent.put(Turn(draft, kwargs={"topic": f"t{n}"}))
        async for _ in agent.run():
            pass

    return run


def status(app: Dashboard) -> str:
    return str(app.screen.query_one("#status").render())


def tokens_of(app: Dashboard, agent: str) -> str:
    table = app.screen.query_one(AgentsTable)
    return str(table.get_cell(agent, "tokens"))


async def test_a_tools_model_call_shows_as_the_agents_tokens_and_cost(
    provider: TracerProvider, until: Any
) -> None:
    app = Dashboard(tracer_provider=provider)
    Config(prices={"gpt-4o": Price(input=2.5, output=10.0)}).configure(app)
    async with app.run_test(size=SIZE) as pilot:
        await writer(provider)(2)
        await until(pilot, lambda: "24.6k tok" in status(app))
        assert "$0.07" in status(app)  # 24k × 2.5 + 600 × 10 per million
        assert tokens_of(app, "writer") == "24.6k $0.07"


async def test_in_process_a_budget_passed_is_toasted_once(
    provider: TracerProvider, until: Any
) -> None:
    app = Dashboard(tracer_provider=provider)
    Config(agent_budgets={"writer": Budget(tokens=20_000)}).configure(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        run = writer(provider)
        await run(1)
        await until(pilot, lambda: "12.3k tok" in status(app))
        assert "⚠ budget" not in status(app)
        await run(2)
        await until(pilot, lambda: "⚠ budget" in status(app))
        await run(1)
        await until(pilot, lambda: "49.2k tok" in status(app))
        toasts = [n.message for n in app._notifications]
        (toast,) = toasts  # once, though the writer spent more after
        # (24.6k or 36.9k: the run's two turns may end within one refresh)
        assert toast.startswith("writer passed its token budget: ")
        assert toast.endswith(" tok of 20.0k")
