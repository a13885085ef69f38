"""The workloads of SPEC §5 and the floors they are compared with.

Each function returns elapsed seconds for one repetition; the runner repeats them
and compares the best figure of a workload with the best of its floor, measured in
the same process, so machine speed cancels out of the ratio.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import AsyncIterator
from dataclasses import dataclass

from pygents import (
    Agent,
    AgentRegistry,
    Event,
    HookRegistry,
    Subscriber,
    Turn,
    TurnHook,
    hook,
    subscribe,
    tool,
)


@dataclass(frozen=True)
class Sizes:
    w1_turns: int = 100_000
    w2_values: int = 1_000_000
    w3_agents: int = 1_000
    w3_turns: int = 100
    memory_turns: int = 100_000
    hooks: int = 20_000

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            w1_turns=2_000,
            w2_values=20_000,
            w3_agents=20,
            w3_turns=20,
            memory_turns=5_000,
            hooks=2_000,
        )


# -- tools -----------------------------------------------------------------------------


@tool()
async def bench_noop(x: int) -> None:
    """W1: a coroutine tool that does nothing."""
    return


@tool()
async def bench_ints(n: int) -> AsyncIterator[int]:
    """W2: stream the ints 0..n-1."""
    for i in range(n):
        yield i


# -- floors ----------------------------------------------------------------------------


async def _bare(x: int) -> None:
    return None


async def floor_w1(n: int) -> float:
    """``await f(x)`` under ``asyncio.timeout(60)``, n times."""
    start = time.perf_counter()
    for i in range(n):
        async with asyncio.timeout(60):
            await _bare(i)
    return time.perf_counter() - start


async def _bare_ints(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def floor_w2(n: int) -> float:
    """Iterating a bare async generator of n ints."""
    start = time.perf_counter()
    async for _ in _bare_ints(n):
        pass
    return time.perf_counter() - start


# -- workloads -------------------------------------------------------------------------


async def _filled_agent(name: str, n: int) -> Agent:
    agent = Agent(name, "benchmark", [bench_noop])
    for i in range(n):
        await agent.put(Turn(bench_noop, kwargs={"x": i}))
    return agent


async def _timed_run(agent: Agent, start: float | None = None) -> float:
    """Seconds to drain ``agent.run()``, from ``start`` when given; then unregister it."""
    try:
        if start is None:
            start = time.perf_counter()
        async for _ in agent.run():
            pass
        return time.perf_counter() - start
    finally:
        AgentRegistry.unregister(agent.name)


async def w1(n: int) -> float:
    """n no-op coroutine turns drained through one ``agent.run()``."""
    return await _timed_run(await _filled_agent("bench-w1", n))


class _Counter(Subscriber):
    """A minimal subscriber: counts events."""

    def __init__(self) -> None:
        self.events = 0

    def on_event(self, event: Event) -> None:
        self.events += 1


async def _count_turns(turn: Turn) -> None:
    return None


async def w1_observed(n: int) -> float:
    """W1 with one global hook and one subscriber registered."""
    observer = hook(TurnHook.AFTER_RUN)(_count_turns)
    try:
        with subscribe(_Counter()):
            return await w1(n)
    finally:
        HookRegistry.discard(observer.metadata.name, observer)


async def w1_with_puts(n: int) -> float:
    """W1 including building and queueing the turns (reported, no target)."""
    start = time.perf_counter()
    return await _timed_run(await _filled_agent("bench-w1p", n), start)


async def w2(n: int) -> float:
    """One generator turn streaming n ints through ``agent.run()``."""
    agent = Agent("bench-w2", "benchmark", [bench_ints])
    await agent.put(Turn(bench_ints, kwargs={"n": n}, timeout=3600))
    return await _timed_run(agent)


def _closure(request: int) -> object:
    async def on_done(turn: Turn, output: object = None) -> None:
        _ = request  # a closure over its request, as a per-request hook is

    return on_done


def _hook_for(turn: Turn, request: int) -> object:
    @turn.after_run
    async def on_done(turn: Turn, output: object = None) -> None:
        _ = request

    return on_done


async def floor_hook_per_request(n: int) -> float:
    """A request's turn and the closure a per-request hook would be made of, no hook."""
    start = time.perf_counter()
    for i in range(n):
        _closure(i)
        Turn(bench_noop, kwargs={"x": i})
    return time.perf_counter() - start


async def hook_per_request(n: int) -> float:
    """The same, the closure attached to the turn as an instance hook (``@turn.after_run``)."""
    start = time.perf_counter()
    for i in range(n):
        _hook_for(Turn(bench_noop, kwargs={"x": i}), i)
    return time.perf_counter() - start


@dataclass(frozen=True)
class W3Result:
    seconds: float
    turns: int


async def w3(agents: int, turns: int) -> W3Result:
    """``agents`` agents × ``turns`` turns each, all running concurrently."""
    fleet = [await _filled_agent(f"bench-w3-{i}", turns) for i in range(agents)]

    async def drain(agent: Agent) -> int:
        count = 0
        async for _ in agent.run():
            count += 1
        return count

    try:
        start = time.perf_counter()
        counts = await asyncio.gather(*(drain(a) for a in fleet))
        return W3Result(time.perf_counter() - start, sum(counts))
    finally:
        for agent in fleet:
            AgentRegistry.unregister(agent.name)


async def bytes_per_queued_turn(n: int) -> float:
    """tracemalloc's view of one queued turn with a one-key kwargs dict."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        agent = await _filled_agent("bench-mem", n)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    AgentRegistry.unregister(agent.name)
    return (after - before) / n


async def leak_check(agents: int, turns: int, rounds: int = 3) -> list[int]:
    """Traced memory after each of several W3 rounds; it must not grow."""
    sizes: list[int] = []
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(rounds):
            await w3(agents, turns)
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    return sizes
