"""Streaming: async-generator tools, ``turn.yielding()``, one deadline for the whole
stream, and leaving a stream early with ``contextlib.aclosing``.

Run with ``uv run python examples/streaming.py``.
"""

from __future__ import annotations

import asyncio
import contextlib

from pygents import StopReason, Turn, TurnTimeoutError, tool


@tool()
async def ticker(symbol: str, prices: list[float], delay: float = 0.0):
    """Stream price updates for ``symbol``, waiting ``delay`` seconds between them."""
    for price in prices:
        await asyncio.sleep(delay)
        yield f"{symbol} {price:.2f}"


async def main() -> None:
    # 1. A generator tool is run with yielding(); output collects every value.
    turn = Turn(ticker, kwargs={"symbol": "ACME", "prices": [10.0, 10.5, 11.25]})
    async with contextlib.aclosing(turn.yielding()) as stream:
        async for quote in stream:
            print("quote:", quote)
    print("full stream:", turn.stop_reason.value, len(turn.output), "values")

    # 2. The timeout bounds the whole stream, not each value: every step here is
    #    fast (0.05 s) but ten of them do not fit in 0.2 s. Time the consumer
    #    spends between values counts too.
    slow = Turn(
        ticker,
        kwargs={"symbol": "SLOW", "prices": [float(i) for i in range(10)], "delay": 0.05},
        timeout=0.2,
    )
    received = []
    try:
        async with contextlib.aclosing(slow.yielding()) as stream:
            async for quote in stream:
                received.append(quote)
    except TurnTimeoutError:
        print(f"timed out after {len(received)} of 10 values:", slow.stop_reason.value)
    assert slow.stop_reason is StopReason.TIMEOUT

    # 3. Stopping early: aclosing() closes the stream as soon as we break, so the
    #    turn ends now (CANCELLED) instead of whenever the generator is collected.
    endings: list[str] = []
    early = Turn(ticker, kwargs={"symbol": "BIG", "prices": [1.0, 2.0, 3.0, 4.0, 5.0]})

    @early.on_complete
    async def note_stream_end(turn: Turn, stop_reason: StopReason) -> None:
        endings.append(stop_reason.value)

    async with contextlib.aclosing(early.yielding()) as stream:
        async for quote in stream:
            if quote.endswith("2.00"):
                break
    print("stopped early:", early.stop_reason.value, "output so far:", early.output)
    print("on_complete fired:", endings)


if __name__ == "__main__":
    asyncio.run(main())
