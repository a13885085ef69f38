"""What the listener refuses or evicts is shown, and costs little: requests refused
for their content type or encoding (HTTP 415) are counted on the status line with
the other refusals, and a flood of new services evicting thousands of others in one
drain costs what the evicted services held, not a scan of every turn per eviction
(the drain runs on the UI's event loop: a slow one freezes the screen)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from otlp_requests import Event, logs_batch

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetLimits, FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.ui.app import Dashboard

SIZE = (160, 40)
WALL = 1_700_000_000 * 10**9


async def test_requests_refused_for_their_content_type_or_encoding_show_on_the_status_line(
    fleet: FleetModel,
    receiver: Receiver,
    until: Any,
    text_of: Callable[[Dashboard], str],
) -> None:
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    url = f"{receiver.http_endpoint}/v1/traces"
    refused = (
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-protobuf", "Content-Encoding": "br"},
    )
    async with app.run_test(size=SIZE) as pilot:
        async with aiohttp.ClientSession() as session:
            for headers in refused:
                async with session.post(url, data=b"\x00", headers=headers) as reply:
                    assert reply.status == 415
            broken = {"Content-Type": "application/x-protobuf"}
            async with session.post(url, data=b"\xff\xff", headers=broken) as reply:
                assert reply.status == 400

        await until(pilot, lambda: "malformed" in text_of(app))
        assert "· 1 malformed · 2 refused (content type or encoding)" in text_of(app)


def flood_seconds(busy_turns: int, newcomers: int = 1500) -> tuple[float, int]:
    """One drain in which ``newcomers`` one-off services arrive while four busy
    services (heard of throughout, so never the least recent) hold ``busy_turns``
    turns: how long it took, and how many services it evicted."""
    ticks = itertools.count()
    limits = FleetLimits(services=32, turns=20_000, running=5_000)
    fleet = FleetModel(clock=lambda: 1000.0 + next(ticks) * 1e-3, wall=lambda: WALL, limits=limits)

    def starts(service: str, count: int) -> list[Event]:
        return [
            Event(
                "pygents.turn.start",
                {"gen_ai.agent.id": "a", "pygents.turn.uuid": f"{service}-{n}"},
                WALL,
            )
            for n in range(count)
        ]

    busy = [f"busy-{n}" for n in range(4)]
    for service in busy:
        fleet.ingest(logs_batch(starts(service, busy_turns // 4), service=service))
    fleet.store.drain()
    beat = [Event("pygents.process.heartbeat", {}, WALL)]
    for n in range(newcomers):
        fleet.ingest(logs_batch(starts(f"new-{n}", 1), service=f"new-{n}"))
        if n % 10 == 0:
            for service in busy:
                fleet.ingest(logs_batch(beat, service=service))
    began = time.perf_counter()
    fleet.store.drain()
    took = time.perf_counter() - began
    assert len(fleet.store.turns) >= busy_turns, "the busy services' turns stayed indexed"
    return took, fleet.store.counters()["services_evicted"]


def test_a_flood_of_new_services_evicts_in_time_proportional_to_what_it_evicts() -> None:
    # The same flood twice, with an empty turn index and with a full one: evicting a
    # service must not scan the other services' turns. The best of three runs each,
    # so that another process's load on this machine does not decide the ratio.
    empty = [flood_seconds(busy_turns=0) for _ in range(3)]
    full = [flood_seconds(busy_turns=19_000) for _ in range(3)]

    assert {evicted for _, evicted in empty + full} == {1500 - 28}
    ratio = min(took for took, _ in full) / min(took for took, _ in empty)
    assert ratio < 4, f"evictions cost {ratio:.1f}x as much with 19,000 turns indexed"
