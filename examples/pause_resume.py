"""Pause and resume a running agent.

``pause()`` holds the run loop before its next turn (the current turn finishes);
``resume()`` lets it continue. ``AgentHook.ON_PAUSE`` fires when the loop reaches
the closed gate and ``AgentHook.ON_RESUME`` when it opens again.

Run with ``uv run python examples/pause_resume.py``.
"""

from __future__ import annotations

import asyncio

from pygents import Agent, AgentHook, Turn, hook, tool

gate_closed = asyncio.Event()


@tool()
async def step(n: int) -> str:
    """One unit of work."""
    await asyncio.sleep(0.01)
    return f"step {n} done"


@hook(AgentHook.ON_PAUSE, tags=["batch"])
async def announce_pause(agent: Agent) -> None:
    print(f"[hook] {agent.name} paused with {len(agent.turns)} turns waiting")
    gate_closed.set()


@hook(AgentHook.ON_RESUME, tags=["batch"])
async def announce_resume(agent: Agent) -> None:
    print(f"[hook] {agent.name} resumed with {len(agent.turns)} turns waiting")


async def main() -> None:
    agent = Agent("batcher", "Works through numbered steps", [step], tags=["batch"])
    for n in range(1, 5):
        await agent.put(Turn(step, kwargs={"n": n}))

    async def consume() -> list[str]:
        seen = []
        async for _, value in agent.run():
            print(value)
            seen.append(value)
            if value == "step 2 done":
                agent.pause()  # takes effect before the next turn
        return seen

    worker = asyncio.create_task(consume())
    await gate_closed.wait()

    # The loop is parked at the gate: inspect the agent and add more work.
    print("is_paused:", agent.is_paused, "| running:", agent.is_running)
    await agent.put(Turn(step, kwargs={"n": 99}))
    print("queue while paused:", [t.kwargs["n"] for t in agent.turns])
    await asyncio.sleep(0.05)
    print("still waiting after 50 ms:", not worker.done())

    agent.resume()
    seen = await worker
    print(f"finished {len(seen)} steps; is_paused: {agent.is_paused}")


if __name__ == "__main__":
    asyncio.run(main())
