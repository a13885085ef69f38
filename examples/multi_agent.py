"""Several agents: ``send()`` hands work to another registered agent, ``branch()``
copies an agent (queue, context, configuration) into an independent one.

Run with ``uv run python examples/multi_agent.py``.
"""

from __future__ import annotations

import asyncio

from pygents import Agent, AgentRegistry, ContextItem, ContextQueue, Turn, tool


@tool()
async def research(topic: str) -> ContextItem[str]:
    """Pretend to research ``topic``; the finding goes to the context queue."""
    return ContextItem(f"{topic} is mostly made of examples")


@tool()
async def draft(memory: ContextQueue[str]) -> str:
    """Write a draft from everything in the context queue."""
    notes = "; ".join(item.content for item in memory)
    return f"draft based on: {notes}"


@tool()
async def review(text: str) -> str:
    """Review a draft."""
    return f"review: '{text[:30]}...' looks fine"


async def main() -> None:
    writer = Agent("writer", "Researches and drafts", [research, draft])
    reviewer = Agent("reviewer", "Reviews drafts", [review])

    # send(): put a turn on another agent, found by name in the AgentRegistry.
    await writer.put(Turn(research, kwargs={"topic": "pygents"}))
    await writer.put(Turn(draft))
    async for _, text in writer.run():
        print("writer:", text)
        await writer.send("reviewer", Turn(review, kwargs={"text": text}))
    print("reviewer queue depth:", len(reviewer.turns))
    async for _, verdict in AgentRegistry.get("reviewer").run():
        print("reviewer:", verdict)

    # branch(): an independent copy with the parent's queue and context.
    await writer.put(Turn(draft))
    alt = writer.branch("writer-alt", description="Explores an alternative angle")
    await alt.put(Turn(research, kwargs={"topic": "branching"}))
    await alt.put(Turn(draft))
    print("branch queue:", [t.tool.name for t in alt.turns])

    results = {}
    for agent in (writer, alt):
        results[agent.name] = [value async for _, value in agent.run()]
    for name, values in results.items():
        print(f"{name}: {values[-1]}")
    print("writer memory:", len(writer.context_queue), "alt memory:", len(alt.context_queue))


if __name__ == "__main__":
    asyncio.run(main())
