"""The built-in workload of ``pygents-tui demo``: offline, endless until you quit.

A planner sends work to two fetchers whose tools stream; a summarizer fills a
context pool (with evictions) and a context-queue window; some turns fail and some
time out, at a steady, realistic rate; a ``lock=True`` tool is shared by several
agents; an archiver pauses and resumes itself.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

from pygents import Agent, ContextItem, ContextPool, ContextQueue, Turn, tool

__all__ = ["Demo", "build_demo"]

TOPICS = (
    "solar", "tides", "glaciers", "volcanoes", "coral", "monsoons", "aurora", "dunes",
    "rivers", "lichens", "comets", "caves",
)  # fmt: skip


class FlakySource(Exception):
    """A fetch that failed on purpose (the demo shows failures too)."""


@dataclass
class Demo:
    """The demo's agents; `run` drives them until cancelled."""

    agents: list[Agent]
    first: Turn
    speed: float = 1.0

    async def run(self) -> None:
        await self.agents[0].put(self.first)
        async with asyncio.TaskGroup() as group:
            for agent in self.agents:
                group.create_task(self._drive(agent))

    async def _drive(self, agent: Agent) -> None:
        """Run the agent whenever it has work; failures are shown, not fatal."""
        while True:
            if agent.queue_depth:
                try:
                    async for _turn, _value in agent.run():
                        pass
                except Exception:
                    pass  # the dashboard shows the failure; the agent carries on
            await asyncio.sleep(0.05 / self.speed)


def build_demo(seed: int | None = None, speed: float = 1.0) -> Demo:
    """Define the demo's tools and agents (call once per process)."""
    rng = random.Random(seed)

    def pause_for(base: float) -> float:
        return base * rng.uniform(0.6, 1.4) / speed

    @tool()
    async def plan(round_no: int) -> Turn:
        """Pick topics and send them to the fetchers; then plan again."""
        await asyncio.sleep(pause_for(0.8))
        for index in range(2):
            topic = rng.choice(TOPICS)
            target = f"fetcher-{index + 1}"
            await planner.send(target, Turn(fetch, kwargs={"topic": topic}, timeout=3.0))
        if round_no % 3 == 0:
            await planner.send("archiver", Turn(archive, kwargs={"batch": round_no}, timeout=10))
        return Turn(plan, kwargs={"round_no": round_no + 1}, timeout=5.0)

    @tool()
    async def fetch(topic: str) -> AsyncIterator[str]:
        """Stream the pages of a topic, then hand it to the summarizer; sometimes fail,
        sometimes stall."""
        luck = rng.random()
        pages = rng.randint(3, 8)
        for page in range(1, pages + 1):
            await asyncio.sleep(pause_for(0.15))
            if luck < 0.08 and page == 2:
                raise FlakySource(f"source for {topic!r} went away")
            if luck > 0.93 and page == 2:
                await asyncio.sleep(10)  # longer than the turn's timeout
            yield f"{topic} · page {page}/{pages}"
        await summarizer.put(Turn(summarize, kwargs={"topic": topic, "pages": pages}, timeout=4.0))

    @tool()
    async def summarize(topic: str, pages: int, memory: ContextQueue[str]) -> ContextItem[str]:
        """Summarize a topic into the pool, noting it in the summarizer's window."""
        await asyncio.sleep(pause_for(0.4))
        await memory.append(ContextItem(content=f"read {pages} pages on {topic}"))
        await report(line=f"{topic}: {pages} pages")
        return ContextItem(
            id=f"{topic}-{rng.randint(100, 999)}",
            description=f"summary of {topic} ({pages} pages)",
            content=f"{topic} in short: " + ", ".join(rng.sample(TOPICS, 3)),
        )

    @tool(lock=True)
    async def report(line: str) -> str:
        """Append to the shared report (one writer at a time)."""
        await asyncio.sleep(pause_for(0.1))
        return line

    @tool()
    async def archive(batch: int) -> str:
        """Archive a batch; the archiver takes a break after each one."""
        await asyncio.sleep(pause_for(0.5))
        await report(line=f"archived batch {batch}")
        archiver.pause()
        asyncio.get_running_loop().call_later(pause_for(2.5), archiver.resume)
        return f"batch {batch} archived"

    planner = Agent("planner", "Plans rounds of research", [plan], tags=["demo"])
    fetchers = [
        Agent(f"fetcher-{n}", "Streams pages of a topic", [fetch, report], tags=["demo", "io"])
        for n in (1, 2)
    ]
    summarizer = Agent(
        "summarizer",
        "Keeps short summaries in its pool",
        [summarize, report],
        context_queue=ContextQueue(limit=6),
        context_pool=ContextPool(limit=8),
        tags=["demo"],
    )
    archiver = Agent("archiver", "Archives batches, then rests", [archive, report], tags=["demo"])
    agents = [planner, *fetchers, summarizer, archiver]
    return Demo(agents, Turn(plan, kwargs={"round_no": 1}, timeout=5.0), speed)
