"""W12: the fleet view as an operator uses it, ``pygents-tui listen`` under a big fleet.

100 services × 20 agents (2,000 rows in the agents table) send live records at
2,000 turns a second, and the operator works the keyboard meanwhile. The listen app
runs headless, as ``pygents-tui listen`` builds it (`listen_app`), at 160 × 45, with
the garbage collector paced as that command paces it (`paced_collector`). The
requests are built and decoded before the clock starts, one service's records each,
so that what is measured is the model and the screen, not the protobuf encoder: a
producer task hands them to `FleetModel.ingest` on the schedule a real fleet keeps
(each service sends every 100 ms, the services' phases spread over the interval; a
turn's end goes 0.5 s after its start), paced by the wall clock in slices of a few
milliseconds. The records are stamped with the planned times and the model's wall
clock follows the run, so turns start "now" as far as the model can tell.

Measured, in the same run:

- **keys**: tab switches, the agents table's cursor, ``/`` with a filter typed and
  erased, ``esc``; each from the key being posted, as a terminal would, to the app
  having handled it (`_answer`, as W6k measures);
- **freshness**: for one turn in ten, from `FleetModel.ingest` returning with its
  start to the end of the refresh that shows it in `FleetModel.running_turns` (the
  Running panel's source; as W6l measures). Waiting for the repaint after that
  (``call_after_refresh``) was tried and left out: the callback can queue behind
  the very repaint it should follow and then wait a whole refresh interval more;
- **memory**: the process's resident size when the load starts and when it ends.

Under attack (``Plan.attack``, W12a): the same, while a real `Receiver` on
127.0.0.1 feeds the same model and another thread posts it gzipped OTLP/JSON bodies
of 5,000 spans (3.6 MB inflated: within every per-request bound, about a second of
parsing each) at the rate that once held a key press 13.5 s (twelve in 20 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import statistics
import sys
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from textual import events
from textual.widgets import Input, TabbedContent

from pygents_tui import Dashboard
from pygents_tui.cli._collector import paced_collector
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetLimits, FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.listen.decode import Batch, Limits, decode
from pygents_tui.ui.widgets import AgentsTable

__all__ = [
    "FleetRun",
    "Freshness",
    "Plan",
    "paced",
    "percentile",
    "press",
    "produce",
    "rss_mib",
    "w12",
]

SIZE = (160, 45)
SEND_EVERY = 0.1  # seconds between two requests of one service
TURN_SECONDS = 0.5  # from a turn's start record to its end record
SLICE = 0.005  # the producer's pacing step
SAMPLE_EVERY = 10  # one request in ten has its first turn's freshness measured
KEY_GAP = 0.06  # between an answered key and the next press
_S = 10**9
_PAGE = os.sysconf("SC_PAGE_SIZE")

# One round of keys, each with the panel (tab id) it leaves visible. Tab keys repaint
# the visible panel, ``down`` moves the agents table's cursor (and so the selected
# agent, which repaints the panel), ``/`` on the Queue tab filters the agents table
# itself: every character typed or erased re-filters its 2,000 rows.
ROUND: tuple[str, ...] = (
    "2",
    "down",
    "down",
    "3",
    "4",
    "5",
    "6",
    "1",
    "slash",
    *"svc-04",
    "escape",
    "slash",
    *("backspace",) * 6,
    "escape",
    "up",
)
_CHARACTERS = {"slash": "/", "escape": None, "backspace": "\x08", "down": None, "up": None}
_TABS = {
    str(i): f"tab-{name}"
    for i, name in enumerate(
        ("queue", "running", "values", "context", "events", "timeline", "output"), 1
    )
}


@dataclass(frozen=True)
class Plan:
    """The fleet and its load: ``services`` × ``agents`` sending ``rate`` turns/s."""

    services: int = 100
    agents: int = 20
    rate: float = 2000.0
    seconds: float = 10.0
    attack: float = 0.0  # OTLP/JSON bodies a second posted to a receiver (W12a)

    @classmethod
    def quick(cls) -> Plan:
        return cls(services=10, agents=20, rate=200.0, seconds=2.0)

    def under_attack(self) -> Plan:
        """The same load while JSON bodies arrive as in the issue: twelve in 20 s."""
        return replace(self, attack=12 / 20)


@dataclass(frozen=True)
class Request:
    at: float  # seconds after the start of the load
    batch: Batch
    sample: tuple[str, str] | None  # (agent label, turn uuid) whose freshness is measured


@dataclass(frozen=True)
class FleetRun:
    """What W12 measured (milliseconds unless named otherwise)."""

    rows: int  # agents in the model at the end
    turns_per_second: float  # turns whose start was ingested, per second of load
    key_p50_ms: float
    key_p95_ms: float
    key_worst_ms: float
    keys: int
    fresh_p50_ms: float
    fresh_p95_ms: float
    fresh_worst_ms: float
    fresh_samples: int
    refresh_p50_ms: float  # one refresh of the app (drain and repaint requests)
    refresh_p95_ms: float
    late_ms: float  # the furthest the producer fell behind its schedule
    rss_before_mib: float
    rss_after_mib: float
    fresh_missed: int  # sampled turns that ended before a refresh showed them running
    dropped: int  # records the model's inbox dropped (expected: none)
    attack_sent: int = 0  # OTLP/JSON bodies posted (W12a)
    attack_accepted: int = 0  # of which answered 200


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE / 2**20


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * fraction + 0.5) - 1)] if ordered else 0.0


# -- the requests, built before the clock starts ------------------------------------------------


def _kv(key: str, value: str | float) -> KeyValue:
    if isinstance(value, str):
        return KeyValue(key=key, value=AnyValue(string_value=value))
    return KeyValue(key=key, value=AnyValue(double_value=value))


def _names(service: int, agent: int) -> tuple[str, str, str]:
    """The service, its instance and the agent's name: labels ``svc-007@pod-007/agent-03``."""
    return f"svc-{service:03d}", f"pod-{service:03d}", f"agent-{agent:02d}"


def build(plan: Plan, t0: int) -> list[Request]:
    """Every request of the run, in the order they are sent; records stamped ``t0``
    (Unix ns) plus their planned time."""
    per_request = max(1, round(plan.rate * SEND_EVERY / plan.services))
    sends = int(plan.seconds / SEND_EVERY)
    lag = round(TURN_SECONDS / SEND_EVERY)  # requests between a turn's start and its end
    limits = Limits()
    requests: list[Request] = []
    for tick in range(sends):
        for service in range(plan.services):
            at = (tick + service / plan.services) * SEND_EVERY
            requests.append(_request(plan, service, tick, per_request, lag, at, t0, limits))
    return requests


def _request(
    plan: Plan, service: int, tick: int, per: int, lag: int, at: float, t0: int, limits: Limits
) -> Request:
    name, instance, _ = _names(service, 0)
    message = logs_service_pb2.ExportLogsServiceRequest()
    group = message.resource_logs.add()
    group.resource.attributes.extend(
        [_kv("service.name", name), _kv("service.instance.id", instance)]
    )
    scope = group.scope_logs.add()
    scope.scope.name = "pygents_otel.live"
    stamp = t0 + round(at * _S)
    sample: tuple[str, str] | None = None

    def turn(n: int) -> tuple[list[KeyValue], str, str]:
        agent = n % plan.agents
        agent_name = _names(service, agent)[2]
        who = [_kv("gen_ai.agent.name", agent_name), _kv("gen_ai.agent.id", f"{name}-{agent_name}")]
        return who, f"{name}-t{n}", f"{name}@{instance}/{agent_name}"

    for n in range(tick * per, (tick + 1) * per):  # the turns that start now
        who, uuid, label = turn(n)
        attributes = [
            *who,
            _kv("pygents.turn.uuid", uuid),
            _kv("gen_ai.tool.name", f"tool-{n % 7}"),
            _kv("pygents.turn.timeout", 5.0),
        ]
        scope.log_records.append(
            LogRecord(time_unix_nano=stamp, event_name="pygents.turn.start", attributes=attributes)
        )
        if sample is None and (tick * plan.services + service) % SAMPLE_EVERY == 0:
            sample = (label, uuid)
    for n in range(max(0, tick - lag) * per, max(0, tick - lag + 1) * per if tick >= lag else 0):
        who, uuid, _ = turn(n)
        attributes = [
            *who,
            _kv("pygents.turn.uuid", uuid),
            _kv("pygents.turn.stop_reason", "completed"),
        ]
        scope.log_records.append(
            LogRecord(time_unix_nano=stamp, event_name="pygents.turn.end", attributes=attributes)
        )
    body = message.SerializeToString()
    return Request(at, decode("logs", body, json_body=False, limits=limits), sample)


# -- the attack (W12a) ---------------------------------------------------------------------------

ATTACK_SPANS = 5_000


def attack_body() -> bytes:
    """A gzipped OTLP/JSON traces request of `ATTACK_SPANS` spans, 8 attributes each:
    185,000 JSON values, under the 200,000 a request may hold."""
    spans = [
        {
            "traceId": f"{n:032x}",
            "spanId": f"{n:016x}",
            "name": "x" * 100,
            "attributes": [{"key": f"k{i}", "value": {"stringValue": "v" * 20}} for i in range(8)],
        }
        for n in range(1, ATTACK_SPANS + 1)
    ]
    service = [{"key": "service.name", "value": {"stringValue": "attacker"}}]
    document = {
        "resourceSpans": [{"resource": {"attributes": service}, "scopeSpans": [{"spans": spans}]}]
    }
    return gzip.compress(json.dumps(document).encode())


def _post(url: str, body: bytes) -> int:
    """One attack body, blocking: the answer's status (0 for no answer)."""
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


async def _attack(url: str, body: bytes, rate: float, until: float) -> list[int]:
    """Post ``body`` ``rate`` times a second until ``until`` (perf counter), each from a
    thread of its own so that neither the sender's work nor a slow answer is the
    event loop's or holds the next one back; the answers' statuses."""
    loop = asyncio.get_running_loop()
    posts: list[asyncio.Future[int]] = []
    with ThreadPoolExecutor(32, thread_name_prefix="w12a") as senders:
        while time.perf_counter() < until:
            posts.append(loop.run_in_executor(senders, _post, url, body))
            await asyncio.sleep(1 / rate)
        return list(await asyncio.gather(*posts))


# -- the run -----------------------------------------------------------------------------------


class Freshness:
    """Sampled turns from their ingestion to the end of the refresh that shows them.

    A refresh folds for a slice of time (`FOLD_SLICE`) and what it leaves is folded
    between refreshes, so a sample is checked at each refresh after its ingestion
    until one shows it (running, in `FleetModel.running_turns`, which the Running
    panel and the agents table's Current column read). Once nothing is left to fold
    and it is still not shown, it is counted as ``missed`` (it ended before any
    refresh showed it, which only a stalled event loop allows). The end of the
    refresh that shows it is where W6l stops its clock too: what the panels were
    asked to draw is then set."""

    def __init__(self, fleet: FleetModel, refresh: Callable[[], None]) -> None:
        self.fleet = fleet
        self.ingested: list[tuple[str, str, float]] = []  # (agent label, uuid, when)
        self.lags: list[float] = []
        self.missed = 0
        self.refreshes: list[float] = []
        self._keys: dict[str, str] = {}  # agent key by label, as the model names them
        self._refresh = refresh

    def refresh_and_watch(self) -> None:
        """The app's refresh, timed; then whether it made the waiting samples visible."""
        began = time.perf_counter()
        self._refresh()
        ended = time.perf_counter()
        self.refreshes.append(ended - began)
        waiting, self.ingested = self.ingested, []
        backlog = self.fleet.backlog  # what the refresh left to fold: may hold samples
        for label, uuid, at in waiting:
            if self._visible(label, uuid):
                self.lags.append(ended - at)
            elif backlog:
                self.ingested.append((label, uuid, at))  # the next refresh, then
            else:
                self.missed += 1

    def _visible(self, label: str, uuid: str) -> bool:
        key = self._keys.get(label)
        if key is None:
            self._keys = {row.label: row.key for row in self.fleet.store.agent_rows()}
            key = self._keys.get(label)
        return key is not None and any(t.uuid == uuid for t in self.fleet.store.running_turns(key))


async def produce(
    fleet: FleetModel, requests: deque[Request], fresh: Freshness, start: float
) -> tuple[float, float]:
    """Ingest every request at its planned time (in slices of `SLICE`), letting each go
    once ingested; the furthest it fell behind, and when the last went (seconds after
    ``start``)."""
    late = 0.0
    while requests:
        now = time.perf_counter() - start
        late = max(late, now - requests[0].at)
        while requests and requests[0].at <= now:
            request = requests.popleft()
            fleet.ingest(request.batch)
            if request.sample is not None:
                label, uuid = request.sample
                fresh.ingested.append((label, uuid, time.perf_counter()))
        await asyncio.sleep(SLICE)
    return max(late, 0.0), time.perf_counter() - start


def _conditions(app: Dashboard) -> Callable[[str, str | None], Callable[[], bool]]:
    """For a key (and the filter's text it leaves, while typing), when the app has
    acted on it."""
    screen = app.screen
    table = screen.query_one(AgentsTable)
    field = screen.query_one("#filter", Input)
    tabs = screen.query_one(TabbedContent)

    def condition(key: str, typed: str | None) -> Callable[[], bool]:
        if typed is not None:
            return lambda: field.value == typed
        if key in _TABS:
            return lambda: tabs.active == _TABS[key]
        if key in ("down", "up"):
            step = 1 if key == "down" else -1
            wanted = min(max(table.cursor_row + step, 0), max(table.row_count - 1, 0))
            return lambda: table.cursor_row == wanted
        if key == "escape":
            return lambda: app.focused is table
        if key == "slash":
            return lambda: app.focused is field
        raise ValueError(f"no answer known for {key!r}")

    return condition


_KEY_NAMES = {"-": "minus"}


async def _answer(app: Dashboard, key: str, answered: Callable[[], bool]) -> float:
    """Post ``key`` as the terminal would; the time until ``answered()`` holds, as
    W6k measures it: the app has handled the key and asked for what it changes to be
    drawn."""
    start = time.perf_counter()
    name = _KEY_NAMES.get(key, key)
    app.post_message(events.Key(name, _CHARACTERS.get(name, key)))
    try:
        async with asyncio.timeout(10):
            while not answered():  # noqa: ASYNC110 - what the app shows is the measurement
                await asyncio.sleep(0.001)
    except TimeoutError:
        raise RuntimeError(f"the key {key!r} was not answered in 10 s") from None
    return time.perf_counter() - start


async def press(app: Dashboard, until: float) -> list[float]:
    """Rounds of `ROUND` until ``until`` (perf counter), one key at a time."""
    condition = _conditions(app)
    field = app.screen.query_one("#filter", Input)
    lags: list[float] = []
    while time.perf_counter() < until:
        for key in ROUND:
            typed: str | None = None
            if app.focused is field and key != "escape":  # the key edits the filter
                typed = field.value[:-1] if key == "backspace" else field.value + key
            lags.append(await _answer(app, key, condition(key, typed)))
            await asyncio.sleep(KEY_GAP)
    return lags


@contextlib.asynccontextmanager
async def paced() -> AsyncIterator[None]:
    with paced_collector():
        yield


async def w12(plan: Plan | None = None) -> FleetRun:
    """Run W12 (see the module docstring) with ``plan`` (the full size by default)."""
    plan = plan or Plan()
    t0 = time.time_ns()
    requests = deque(build(plan, t0))
    base = [time.perf_counter()]
    limits = FleetLimits()
    if plan.services * plan.agents > limits.agents:
        raise ValueError(f"{plan.services * plan.agents} agents exceed the fleet's bound")
    fleet = FleetModel(
        wall=lambda: t0 + round((time.perf_counter() - base[0]) * _S),
        stale_after=3600.0,
        limits=limits,
    )
    app = listen_app(fleet, "127.0.0.1", 4317, None)
    fresh = Freshness(fleet, app.refresh_view)
    body = attack_body() if plan.attack else b""
    statuses: list[int] = []
    async with contextlib.AsyncExitStack() as stack:
        pilot = await stack.enter_async_context(app.run_test(size=SIZE))
        await stack.enter_async_context(paced())
        receiver = Receiver(fleet, grpc_port=None, http_port=0)
        if plan.attack:
            await stack.enter_async_context(receiver)
        await pilot.pause()
        app.refresh_timer.stop()
        app.refresh_timer = app.set_interval(1 / app.refresh_hz, fresh.refresh_and_watch)
        rss_before = rss_mib()
        base[0] = start = time.perf_counter()
        samples = sum(1 for request in requests if request.sample is not None)
        producer = asyncio.create_task(produce(fleet, requests, fresh, start))
        await asyncio.sleep(min(1.0, plan.seconds / 4))  # the table fills up first
        attacker = None
        if plan.attack:
            url = f"{receiver.http_endpoint}/v1/traces"
            attacker = asyncio.create_task(_attack(url, body, plan.attack, start + plan.seconds))
        keys = await press(app, start + plan.seconds)
        late, elapsed = await producer
        if attacker is not None:
            statuses = await attacker
        async with asyncio.timeout(10):
            while fresh.ingested or len(fresh.lags) + fresh.missed < samples:  # noqa: ASYNC110 - the screen is the measurement
                await asyncio.sleep(0.01)
        rss_after = rss_mib()
        rows = len(fleet.store.agent_rows())
        dropped = fleet.store.counters().get("dropped", 0)
        await pilot.press("q")
    ms = [k * 1000 for k in keys]
    lags = [lag * 1000 for lag in fresh.lags]
    refreshes = [r * 1000 for r in fresh.refreshes]
    turns = plan.services * max(1, round(plan.rate * SEND_EVERY / plan.services))
    return FleetRun(
        rows=rows,
        turns_per_second=turns * int(plan.seconds / SEND_EVERY) / elapsed,
        key_p50_ms=statistics.median(ms),
        key_p95_ms=percentile(ms, 0.95),
        key_worst_ms=max(ms),
        keys=len(ms),
        fresh_p50_ms=statistics.median(lags),
        fresh_p95_ms=percentile(lags, 0.95),
        fresh_worst_ms=max(lags),
        fresh_samples=len(lags),
        fresh_missed=fresh.missed,
        refresh_p50_ms=statistics.median(refreshes),
        refresh_p95_ms=percentile(refreshes, 0.95),
        late_ms=late * 1000,
        rss_before_mib=rss_before,
        rss_after_mib=rss_after,
        dropped=dropped,
        attack_sent=len(statuses),
        attack_accepted=statuses.count(200),
    )


def main(argv: list[str]) -> int:
    """``python -m benchmarks.fleet_workloads [--quick] [--attack]``: W12 alone, or
    W12a (``--attack``)."""
    plan = Plan.quick() if "--quick" in argv else Plan()
    res = asyncio.run(w12(plan.under_attack() if "--attack" in argv else plan))
    for name, value in vars(res).items():
        print(f"{name:<18} {value:,.1f}" if isinstance(value, float) else f"{name:<18} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
