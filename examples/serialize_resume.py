"""Serialize a paused agent to JSON and finish its work in another process.

Process 1 runs part of the queue, pauses, and saves ``agent.to_dict()`` as JSON:
the queued turns (ids, arguments, metadata), the context queue and pool, the
paused state and the agent's hooks *by name*. It then starts process 2 (this same
file with the ``--resume`` argument, the JSON on its stdin), which rebuilds the agent with
``Agent.from_dict()``, resumes it and runs the rest.

``from_dict()`` looks tools and hooks up by name, so both must be registered in the
second process before it is called: here they are declared at module level (hooks
with ``@hook``), so running this file registers them in either process, and the
hooks are also put in the agent's own hook lists so that they are saved with it.

Run with ``uv run python examples/serialize_resume.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from pygents import (
    Agent,
    AgentHook,
    ContextItem,
    ContextPool,
    ContextQueue,
    StopReason,
    Turn,
    TurnHook,
    hook,
    tool,
)

WHO = "resumer" if "--resume" in sys.argv else "original"


@tool()
async def translate(word: str):
    """Translate one word to 'pirate' and remember it in the context queue."""
    yield ContextItem(f"{word} -> arr-{word}")
    yield f"translated {word}"


@tool()
async def glossary(memory: ContextQueue[str], pool: ContextPool[str]) -> str:
    """Store every translation so far in the pool, under one id."""
    lines = [item.content for item in memory]
    await pool.add(ContextItem(lines, description="all translations so far", id="glossary"))
    return f"glossary of {len(lines)} entries by pid {os.getpid()}"


# Module-level hooks are registered in whichever process runs this file; they are
# also attached to the agent below, so they travel with it by name.
at_gate = asyncio.Event()


@hook(AgentHook.ON_PAUSE, tags=["pirate"])
async def on_pause_note(agent: Agent) -> None:
    print(f"[{WHO}] {agent.name} paused with {len(agent.turns)} turns queued")
    at_gate.set()


@hook(AgentHook.ON_RESUME, tags=["pirate"])
async def on_resume_note(agent: Agent) -> None:
    print(f"[{WHO}] {agent.name} resumed with {len(agent.turns)} turns queued")


# As a global hook this one would only fire for turns tagged "pirate" (none are);
# it fires for every turn of the agent because it is in the agent's turn_hooks.
@hook(TurnHook.ON_COMPLETE, tags=["pirate"])
async def log_turn_end(turn: Turn, stop_reason: StopReason) -> None:
    print(f"[{WHO}] turn {turn.tool.name}({turn.kwargs}) {stop_reason.value}")


async def run_two_then_pause(agent: Agent) -> None:
    """Run until two words are translated, pause, and stop this process's run."""

    async def consume() -> None:
        async for _, value in agent.run():
            print(f"[{WHO}] {value}")
            if value.startswith("translated treasure"):
                agent.pause()  # the loop will wait before its next turn

    worker = asyncio.create_task(consume())
    await at_gate.wait()  # set by the ON_PAUSE hook
    worker.cancel()  # this process is done with the agent
    try:
        await worker
    except asyncio.CancelledError:
        pass


async def save() -> None:
    agent = Agent(
        "translator",
        "Translates words, then writes a glossary",
        [translate, glossary],
        tags=["pirate"],
    )
    agent.hooks.extend([on_pause_note, on_resume_note])
    agent.turn_hooks.append(log_turn_end)
    for word in ("hello", "treasure", "ship", "parrot"):
        await agent.put(Turn(translate, kwargs={"word": word}, metadata={"batch": 7}))
    await agent.put(Turn(glossary))

    await run_two_then_pause(agent)
    data = agent.to_dict()
    print(
        f"[{WHO}] paused={data['is_paused']} queue={len(data['queue'])} turns, "
        f"memory={len(agent.context_queue)} items"
    )

    payload = json.dumps(data, indent=2)
    print(f"[{WHO}] saved {len(payload)} bytes of JSON; starting a second process")
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--resume",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(child.communicate(payload.encode()), timeout=30)
    sys.stdout.write(out.decode())
    if child.returncode != 0:
        raise SystemExit(f"the second process failed with exit code {child.returncode}")
    print(f"[{WHO}] second process finished (pid {os.getpid()} here)")


async def restore() -> None:
    data = json.loads(sys.stdin.read())  # the JSON written by the first process
    agent = Agent.from_dict(data)
    print(
        f"[{WHO}] restored {agent.name}: paused={agent.is_paused}, "
        f"queue={[t.kwargs.get('word', t.tool.name) for t in agent.turns]}, "
        f"memory={[item.content for item in agent.context_queue]}"
    )
    hook_names = sorted(h.name for h in [*agent.hooks, *agent.turn_hooks])
    print(f"[{WHO}] hooks restored by name: {hook_names}")

    async def consume() -> None:
        async for _, value in agent.run():
            print(f"[{WHO}] {value.split(' by pid')[0]}")

    worker = asyncio.create_task(consume())
    await at_gate.wait()  # the restored agent is still paused: its run waits
    agent.resume()
    await worker
    print(f"[{WHO}] glossary: {agent.context_pool.get('glossary').content}")


async def main() -> None:
    if "--resume" in sys.argv:
        await restore()
    else:
        await save()


if __name__ == "__main__":
    asyncio.run(main())
