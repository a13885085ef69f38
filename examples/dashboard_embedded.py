"""Embed the live dashboard around your own app coroutine.

``run_dashboard(main)`` starts the Textual dashboard and runs ``main()`` in the same
event loop, so every agent, turn, streamed value and context change shows up live.
Press ``q`` to quit once the work is done.

``demo_headless()`` runs the same workload under ``Dashboard(...).run_test()``,
without a terminal, and returns what the dashboard saw (the test suite uses it;
``--headless`` on the command line prints it).

Run with ``uv run python examples/dashboard_embedded.py``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from pygents import Agent, ContextItem, ContextPool, Turn, tool
from pygents_tui import Dashboard, run_dashboard

HEADLINES = {
    "science": ["Comet spotted", "New moth species", "Ice core record"],
    "sport": ["Late equaliser", "Marathon record"],
}


@tool()
async def fetch(section: str):
    """Stream a section's headlines, then hand each to the editor agent."""
    for headline in HEADLINES[section]:
        await asyncio.sleep(0.02)
        yield f"{section}: {headline}"
        yield Turn("edit", kwargs={"section": section, "headline": headline})


@tool()
async def edit(section: str, headline: str) -> ContextItem[str]:
    """Polish a headline and file it in the context pool."""
    await asyncio.sleep(0.01)
    slug = headline.lower().replace(" ", "-")
    return ContextItem(headline.upper(), description=f"{section} story", id=slug)


@tool()
async def publish(pool: ContextPool[str]) -> str:
    """Publish everything filed so far."""
    return f"front page: {len(pool)} stories"


async def main() -> dict[str, Any]:
    """The app: one agent fetches and edits, then publishes. Returns its results."""
    async with Agent("newsroom", "Fetches, edits and publishes", [fetch, edit, publish]) as desk:
        for section in HEADLINES:
            await desk.put(Turn(fetch, kwargs={"section": section}, timeout=5))
        streamed = [value async for _, value in desk.run()]
        await desk.put(Turn(publish))
        front_page = [value async for _, value in desk.run()]
        return {"streamed": streamed, "front_page": front_page[0], "pool": len(desk.context_pool)}


async def demo_headless() -> dict[str, Any]:
    """Run ``main`` under the dashboard with no terminal; summarise what it showed."""
    app = Dashboard(main, title="newsroom (headless)")
    app.animation_level = "none"
    async with app.run_test(size=(100, 30)) as pilot:
        await asyncio.wait_for(app.workload_done.wait(), timeout=10)
        for _ in range(200):  # let the model drain the last events
            app.refresh_view()
            if app.model.agent("newsroom").completed >= 8:
                break
            await pilot.pause(0.01)
        state = app.model.agent("newsroom")
        summary = {
            "workload_error": app.workload_error,
            "completed_turns": state.completed,
            "failed_turns": state.failed,
            "values_seen": state.values,
            "events_received": app.model.received,
        }
        await pilot.press("q")
    summary["return_code"] = app.return_code
    return summary


if __name__ == "__main__":
    if "--headless" in sys.argv:
        for key, value in asyncio.run(demo_headless()).items():
            print(f"{key}: {value}")
    else:
        sys.exit(run_dashboard(main))
