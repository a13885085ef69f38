"""Turn and tool spans name the agent that ran them (``gen_ai.agent.name``/``.id``), so
agents sharing one tool share its span name and stay apart by attribute."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pygents import Agent, Turn, tool
from pygents.testing import drain

pytestmark = pytest.mark.usefixtures("instrument")

AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"


async def test_agents_sharing_a_tool_share_its_span_names_and_differ_by_agent_attributes(
    exporter: InMemorySpanExporter,
) -> None:
    @tool
    async def lookup(key: str) -> str:
        return key.upper()

    agents = [Agent(name, "Looks things up", [lookup]) for name in ("left", "right")]
    for agent in agents:
        await agent.put(Turn(lookup, args=["k"]))
        assert await drain(agent) == ["K"]

    spans = exporter.get_finished_spans()
    for kind in ("turn lookup", "execute_tool lookup"):
        named = [span for span in spans if span.name == kind]
        assert [(s.attributes[AGENT_NAME], s.attributes[AGENT_ID]) for s in named] == [
            (agent.name, agent.uuid) for agent in agents
        ]


async def test_a_bare_turn_names_no_agent(exporter: InMemorySpanExporter) -> None:
    @tool
    async def alone() -> int:
        return 1

    assert await Turn(alone).returning() == 1
    spans = exporter.get_finished_spans()
    assert sorted(span.name for span in spans) == ["execute_tool alone", "turn alone"]
    for span in spans:
        assert AGENT_NAME not in span.attributes
        assert AGENT_ID not in span.attributes


async def test_a_long_agent_name_is_bounded_on_turn_and_tool_spans(
    exporter: InMemorySpanExporter,
) -> None:
    @tool
    async def ping() -> str:
        return "pong"

    agent = Agent("a" * 5000, "Has a long name", [ping])
    await agent.put(Turn(ping))
    await drain(agent)
    for span in exporter.get_finished_spans():
        assert 0 < len(str(span.attributes[AGENT_NAME])) <= 257, span.name
