"""The research-assistant pattern: a context pool of documents selected by their
descriptions (``catalogue()``), a context queue as conversation memory, and tools
that receive both by annotation.

A real assistant would show the catalogue to a language model and let it pick the
ids to read; here a tiny keyword matcher plays the model so the example is offline
and deterministic.

Run with ``uv run python examples/research_assistant.py``.
"""

from __future__ import annotations

import asyncio
import re

from pygents import Agent, ContextItem, ContextPool, ContextQueue, Turn, tool

LIBRARY = [
    ("tides", "How the moon drives ocean tides", "Tides follow the moon's pull, twice a day."),
    ("bees", "Why bees dance to share food sources", "A waggle dance encodes direction."),
    ("moon", "The moon's phases and orbit", "A lunar month lasts about 29.5 days."),
    ("bread", "Sourdough starters and wild yeast", "Feed a starter flour and water daily."),
]


def pick_ids(question: str, catalogue: str) -> list[str]:
    """Stand-in for a model: ids whose description shares a word with the question."""
    words = {w for w in re.findall(r"[a-z]+", question.lower()) if len(w) > 3}
    chosen = []
    for line in catalogue.splitlines():
        item_id, description = re.match(r"- \[(.+?)\] (.*)", line).groups()
        if words & set(re.findall(r"[a-z]+", description.lower())):
            chosen.append(item_id)
    return chosen


@tool()
async def ingest(doc_id: str, description: str, text: str) -> ContextItem[str]:
    """Store a document in the pool (an item with an id goes to the pool)."""
    return ContextItem(text, description=description, id=doc_id)


@tool()
async def ask(question: str, memory: ContextQueue[str], pool: ContextPool[str]):
    """Answer from the documents the catalogue points to; remember the exchange."""
    ids = pick_ids(question, pool.catalogue())
    sources = [pool.get(i) for i in ids]
    answer = " ".join(s.content for s in sources) or "I found nothing on that."
    yield ContextItem(f"Q: {question}")  # conversation memory (context queue)
    yield ContextItem(f"A: {answer}")
    yield f"{question} -> {answer} (sources: {', '.join(ids) or 'none'})"


@tool()
async def recap(memory: ContextQueue[str]) -> str:
    """Summarise the conversation kept in the context queue."""
    questions = [item.content[3:] for item in memory if item.content.startswith("Q: ")]
    return f"we talked about {len(questions)} things: {' | '.join(questions)}"


async def main() -> None:
    agent = Agent(
        "assistant",
        "Answers questions from a document pool",
        [ingest, ask, recap],
        context_queue=ContextQueue(limit=6),
        context_pool=ContextPool(limit=10),
    )
    for doc_id, description, text in LIBRARY:
        await agent.put(Turn(ingest, args=[doc_id, description, text]))
    async for _ in agent.run():
        pass
    print("catalogue:")
    print(agent.context_pool.catalogue())

    for question in ("What does the moon do?", "Do bees dance?", "Any news about volcanoes?"):
        await agent.put(Turn(ask, kwargs={"question": question}))
    await agent.put(Turn(recap))
    async for turn, value in agent.run():
        print(f"{turn.tool.name}: {value}")

    print("memory window:", len(agent.context_queue), "of", agent.context_queue.limit)


if __name__ == "__main__":
    asyncio.run(main())
