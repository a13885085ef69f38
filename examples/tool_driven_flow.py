"""Tool-driven flow: tools decide what happens next.

A value a tool returns or yields is routed by the agent before the next one:

* a ``Turn`` is put on the same agent and runs later in the same ``run()``;
* a ``ContextItem`` without an id is appended to the agent's context queue;
* a ``ContextItem`` with an id is added to the agent's context pool;
* anything else is yielded to the caller as ``(turn, value)``.

Run with ``uv run python examples/tool_driven_flow.py``.
"""

from __future__ import annotations

import asyncio

from pygents import Agent, ContextItem, Turn, tool

ORDERS = {"A-1": ["apple", "pear"], "B-7": ["bread"]}


@tool()
async def plan(order_ids: list[str]):
    """Look at the orders and schedule one packing turn per order."""
    yield ContextItem(f"planning {len(order_ids)} orders")  # -> context queue
    for order_id in order_ids:
        yield Turn("pack", kwargs={"order_id": order_id})  # -> queued, not yielded
    yield f"planned {', '.join(order_ids)}"  # -> the caller


@tool()
async def pack(order_id: str):
    """Pack one order; record a receipt in the pool and ask for a label."""
    items = ORDERS[order_id]
    for item in items:
        yield f"{order_id}: packed {item}"
    yield ContextItem(
        content={"order": order_id, "items": len(items)},
        description=f"packing receipt for order {order_id}",
        id=f"receipt-{order_id}",
    )  # -> context pool
    yield Turn("label", kwargs={"order_id": order_id})


@tool()
async def label(order_id: str) -> str:
    """Print a shipping label (a plain return value is yielded to the caller)."""
    return f"label printed for {order_id}"


async def main() -> None:
    agent = Agent("warehouse", "Plans, packs and labels orders", [plan, pack, label])
    await agent.put(Turn(plan, kwargs={"order_ids": list(ORDERS)}))

    async for turn, value in agent.run():
        print(f"[{turn.tool.name}] {value}")

    print("context queue:", [item.content for item in agent.context_queue])
    print("context pool:")
    print(agent.context_pool.catalogue())
    receipt = agent.context_pool.get("receipt-A-1")
    print("receipt A-1:", receipt.content)


if __name__ == "__main__":
    asyncio.run(main())
