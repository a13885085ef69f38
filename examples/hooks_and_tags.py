"""Hooks and tags.

* Global hooks (``@hook``) fire for every object, or, with ``tags``, only for
  objects sharing at least one of the hook's tags (an OR filter).
* Tools and hooks take fixed keyword arguments; a no-argument callable given as a
  fixed kwarg is called at each invocation.
* Instance hooks (``@tool.before_invoke``, ``@turn.on_complete``,
  ``@agent.on_error``...) fire only for their own object and ignore tags.

Run with ``uv run python examples/hooks_and_tags.py``.
"""

from __future__ import annotations

import asyncio
import itertools

from pygents import Agent, StopReason, ToolHook, Turn, TurnHook, hook, tool

_invoice_numbers = itertools.count(1001)


# -- tools --------------------------------------------------------------------------


@tool(tags=["billing"], currency="EUR", invoice_no=lambda: next(_invoice_numbers))
async def charge(customer: str, amount: float, currency: str, invoice_no: int) -> str:
    """Charge a customer; ``currency`` is fixed, ``invoice_no`` computed per call."""
    return f"invoice {invoice_no}: {customer} charged {amount:.2f} {currency}"


@tool(tags=["crm"])
async def update_crm(customer: str) -> str:
    """Touch the customer's CRM record."""
    return f"crm updated for {customer}"


@tool()
async def send_email(customer: str) -> str:
    """Send an email; fails for customers without an address."""
    if customer == "nobody":
        raise ValueError("no email address for 'nobody'")
    return f"email sent to {customer}"


# -- global hooks -------------------------------------------------------------------


@hook(TurnHook.AFTER_RUN, tags=["billing", "audit"], channel="#audit")
async def audit_trail(turn: Turn, output: object, channel: str) -> None:
    """Fires only for turns tagged 'billing' OR 'audit'; ``channel`` is a fixed kwarg."""
    print(f"  {channel} <- {turn.tool.name} ({', '.join(sorted(turn.tags))})")


@hook(ToolHook.AFTER_INVOKE, tags=["crm"])
async def crm_watch(result: object) -> None:
    """A tool hook with tags: fires for tools tagged 'crm' only."""
    print(f"  crm watcher saw: {result}")


@hook(TurnHook.ON_COMPLETE)
async def every_turn(turn: Turn, stop_reason: StopReason) -> None:
    """No tags: fires for every turn."""
    print(f"  done: {turn.tool.name} [{stop_reason.value}]")


async def main() -> None:
    # An instance hook on one tool: receives the tool's own arguments.
    @charge.before_invoke
    async def check_amount(customer: str, amount: float, **_: object) -> None:
        print(f"  before charge: {customer} for {amount:.2f}")

    agent = Agent("shop", "Bills customers", [charge, update_crm, send_email])

    errors: list[str] = []

    # A turn-scoped agent hook: fires for every turn of this agent that raises.
    @agent.on_error
    async def log_failure(turn: Turn, exc: BaseException) -> None:
        errors.append(f"{turn.tool.name}: {exc}")

    # A hook on a single turn.
    vip = Turn(charge, kwargs={"customer": "ada", "amount": 99.5}, tags=["billing"])

    @vip.on_complete
    async def thank_vip(turn: Turn, stop_reason: StopReason) -> None:
        print(f"  vip turn finished: {turn.output}")

    await agent.put(vip)
    await agent.put(Turn(update_crm, kwargs={"customer": "ada"}, tags=["audit"]))
    await agent.put(Turn(charge, kwargs={"customer": "bob", "amount": 5}))  # untagged turn
    await agent.put(Turn(send_email, kwargs={"customer": "nobody"}))

    try:
        async for turn, value in agent.run():
            print(f"{turn.tool.name}: {value}")
    except ValueError as exc:
        print("run stopped by:", exc)
    print("agent.on_error saw:", errors)


if __name__ == "__main__":
    asyncio.run(main())
