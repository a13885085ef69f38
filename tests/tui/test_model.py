"""The dashboard's model without any UI: scopes and cold events in, per-agent state out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from pygents import (
    Agent,
    AgentHook,
    ContextItem,
    ContextPool,
    ContextQueue,
    Scope,
    ScopeKind,
    StopReason,
    ToolType,
    Turn,
    TurnTimeoutError,
    subscribe,
    tool,
)
from pygents_tui.feeders.process.model import THROUGHPUT_SECONDS, DashboardModel
from pygents_tui.state import HOOK_PHASE, PAUSED, RESUMED
from pygents_tui.text._preview import preview
from stuck_tools import blocking_tool


async def settle(predicate: Callable[[], bool], limit: int = 10_000) -> None:
    """Yield to the event loop until ``predicate()`` holds (no time needs to pass)."""
    for _ in range(limit):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


async def run_all(agent: Agent) -> list[Any]:
    return [value async for _turn, value in agent.run()]


def texts(model: DashboardModel, agent: str) -> list[str]:
    return [v.text for v in model.store.agents[agent].values_tail]


def log_texts(model: DashboardModel, agent: str | None = None) -> list[str]:
    return [e.text for e in model.store.log if agent is None or e.agent == agent]


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class BadError(Exception):
    def __repr__(self) -> str:
        raise ValueError("broken repr")


# -- counts, phases, outcomes ----------------------------------------------------------


async def test_turn_outcomes_are_counted_and_logged(model: DashboardModel) -> None:
    @tool()
    async def ok(n: int) -> int:
        return n

    @tool()
    async def broken() -> int:
        raise ValueError("bad input")

    stuck = blocking_tool()
    agent = Agent("counter", "counts", [ok, broken, stuck])
    for n in range(3):
        await agent.put(Turn(ok, args=[n]))
    assert await run_all(agent) == [0, 1, 2]

    await agent.put(Turn(broken))
    with pytest.raises(ValueError, match="bad input"):
        await run_all(agent)

    await agent.put(Turn(stuck, timeout=0.02))
    with pytest.raises(TurnTimeoutError):
        await run_all(agent)

    assert model.store.drain() is True
    state = model.store.agents["counter"]
    assert (state.completed, state.failed, state.timed_out, state.cancelled) == (3, 1, 1, 0)
    assert state.last_error is not None
    assert "TurnTimeoutError" in state.last_error  # the run's own error is the last one
    log = log_texts(model, "counter")
    assert log.count("✔ ok 0.00s") == 3  # the fake clock does not move
    assert "✖ broken: ValueError('bad input')" in log
    assert "◷ blocks timed out after 0.02s" in log
    assert log.count("run started") == 3
    assert "run ended: error" in log
    assert [r.stop_reason for r in model.store.recent] == [
        StopReason.COMPLETED,
        StopReason.COMPLETED,
        StopReason.COMPLETED,
        StopReason.ERROR,
        StopReason.TIMEOUT,
    ]
    assert model.store.recent[3].error == "ValueError('bad input')"
    assert model.store.running == {}
    # Nothing new: a second drain reports no change and keeps the version.
    version = model.store.version
    assert model.store.drain() is False
    assert model.store.version == version


async def test_phases_follow_the_agent(model: DashboardModel) -> None:
    gate = asyncio.Event()
    entered = asyncio.Event()

    @tool()
    async def step(n: int) -> int:
        entered.set()
        await gate.wait()
        return n

    @tool()
    async def fail() -> None:
        raise RuntimeError("nope")

    agent = Agent("phased", "phases", [step, fail])
    assert model.phase(agent) == "idle"  # never seen

    agent.pause()
    await agent.put(Turn(step, args=[1]))
    task = asyncio.create_task(run_all(agent))
    await settle(lambda: model.store.drain() and model.agent("phased").phase == "paused")
    assert model.phase(agent) == "paused"
    assert "‖ paused" in log_texts(model, "phased")
    assert agent.queue_depth == 1  # paused before taking the turn

    agent.resume()
    await entered.wait()
    model.store.drain()
    assert model.store.agents["phased"].phase == "running"
    assert model.phase(agent) == "running"
    assert "▶ resumed" in log_texts(model, "phased")
    [record] = model.store.running_turns("phased")
    assert record.tool == "step"
    assert record.ended is None
    assert model.store.running_turns("someone-else") == []

    gate.set()
    assert await task == [1]
    model.store.drain()
    assert model.store.agents["phased"].phase == "finished"
    assert model.phase(agent) == "finished"

    await agent.put(Turn(fail))
    with pytest.raises(RuntimeError):
        await run_all(agent)
    model.store.drain()
    assert model.store.agents["phased"].phase == "failed"
    assert model.phase(agent) == "failed"
    assert model.store.agents["phased"].last_error == "RuntimeError('nope')"


async def test_cancelled_turn_and_run(model: DashboardModel) -> None:
    entered = asyncio.Event()

    @tool()
    async def forever() -> None:
        entered.set()
        await asyncio.Event().wait()

    agent = Agent("cancelled", "gets cancelled", [forever])
    await agent.put(Turn(forever))
    task = asyncio.create_task(run_all(agent))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    model.store.drain()
    state = model.store.agents["cancelled"]
    assert (state.completed, state.failed, state.timed_out, state.cancelled) == (0, 0, 0, 1)
    assert state.phase == "idle"  # a cancelled run is not a failure
    assert "⊘ forever cancelled" in log_texts(model, "cancelled")
    assert "run ended: cancelled" in log_texts(model, "cancelled")
    assert model.store.recent[-1].stop_reason is StopReason.CANCELLED


# -- values ----------------------------------------------------------------------------


async def test_only_yielded_values_are_values(model: DashboardModel) -> None:
    """Routed turns and context items, and completion-check results, are not values."""

    @tool()
    async def plain(x: int) -> int:
        return x * 10

    @tool()
    async def nothing() -> None:
        return None

    @tool()
    async def hand_on() -> Turn:
        return Turn(plain, args=[5])

    @tool()
    async def note() -> ContextItem[str]:
        return ContextItem("for the queue")

    @tool()
    async def store() -> ContextItem[str]:
        return ContextItem("for the pool", description="a pooled note", id="kept")

    @tool(type=ToolType.COMPLETION_CHECK)
    async def finished() -> bool:
        return False

    @tool()
    async def mixed() -> AsyncIterator[Any]:
        yield "first"
        yield Turn(plain, args=[7])
        yield ContextItem("streamed note")
        yield ContextItem("streamed pooled", description="d", id="s1")
        yield "second"

    agent = Agent("valued", "values", [plain, nothing, hand_on, note, store, finished, mixed])
    for turn in (
        Turn(plain, args=[1]),
        Turn(nothing),
        Turn(hand_on),
        Turn(note),
        Turn(store),
        Turn(finished),
        Turn(mixed),
    ):
        await agent.put(turn)
    yielded = await run_all(agent)
    assert yielded == [10, None, "first", "second", 50, 70]

    model.store.drain()
    state = model.store.agents["valued"]
    assert state.values == len(yielded)
    assert texts(model, "valued") == [preview(v, 200) for v in yielded]
    assert state.completed == 9  # 7 queued + 2 routed turns
    by_tool = {r.tool: r.values for r in state.turns}
    assert by_tool["mixed"] == 2
    assert by_tool["hand_on"] == 0
    assert by_tool["store"] == 0
    assert by_tool["finished"] == 0
    assert len(agent.context_queue) == 2
    assert len(agent.context_pool) == 2


async def test_values_tail_is_bounded_but_the_count_is_exact(model: DashboardModel) -> None:
    @tool()
    async def flood(n: int) -> AsyncIterator[str]:
        for i in range(n):
            yield f"v{i}"

    agent = Agent("flooder", "floods", [flood])
    await agent.put(Turn(flood, args=[1200]))
    assert len(await run_all(agent)) == 1200
    model.store.drain()
    state = model.store.agents["flooder"]
    assert state.values == 1200
    assert state.values_tail.maxlen == 500
    assert len(state.values_tail) == 500
    assert state.values_tail[0].text == "v700"
    assert state.values_tail[-1].text == "v1199"
    assert state.turns[-1].values == 1200


async def test_running_stream_is_tailed_live(model: DashboardModel, clock: Any) -> None:
    gate = asyncio.Event()

    @tool()
    async def trickle() -> AsyncIterator[str]:
        yield "a"
        yield "b"
        await gate.wait()
        yield "c"

    agent = Agent("trickler", "trickles", [trickle])
    await agent.put(Turn(trickle))
    seen: list[str] = []

    async def consume() -> None:
        async for _turn, value in agent.run():
            seen.append(value)

    task = asyncio.create_task(consume())
    await settle(lambda: len(seen) == 2)
    clock.advance(1.5)
    assert model.store.drain() is True
    state = model.store.agents["trickler"]
    assert state.values == 2
    assert texts(model, "trickler") == ["a", "b"]
    assert state.values_tail[-1].at == clock.now
    [record] = model.store.running_turns("trickler")
    assert record.values == 2
    assert record.ended is None
    assert record.elapsed_at(clock.now) == pytest.approx(1.5)
    assert model.store.drain() is False  # nothing new: nothing counted twice
    assert state.values == 2

    gate.set()
    await task
    model.store.drain()
    assert state.values == 3
    assert texts(model, "trickler") == ["a", "b", "c"]
    assert state.completed == 1
    assert record.values == 3
    assert record.ended == clock.now


# -- rings, log, throughput ------------------------------------------------------------


async def test_recent_turns_ring(model: DashboardModel) -> None:
    @tool()
    async def quick(n: int) -> int:
        return n

    agent = Agent("busy", "many turns", [quick])
    turns = [Turn(quick, args=[n]) for n in range(510)]
    for turn in turns:
        await agent.put(turn)
    await run_all(agent)
    model.store.drain()
    state = model.store.agents["busy"]
    assert state.completed == 510
    assert len(model.store.recent) == 500
    assert len(state.turns) == 200
    assert model.store.recent[0].uuid == turns[10].uuid
    assert state.turns[0].uuid == turns[310].uuid
    found = model.store.find_turn(turns[-1].uuid)
    assert found is not None
    assert found.turn is None  # previews are kept, not the ended turn
    assert found.kept is not None
    assert found.kept.args == ("509",)
    assert found.kept.output == "509"
    assert found.stop_reason is StopReason.COMPLETED
    assert model.store.find_turn(turns[0].uuid) is None  # rolled out of the ring
    assert state.values == 510
    assert len(state.values_tail) == 500


async def test_event_log_puts_pauses_and_evictions(model: DashboardModel) -> None:
    @tool()
    async def remember(tag: str, pool: ContextPool[str]) -> None:
        await pool.add(ContextItem(f"about {tag}", description=f"note {tag}", id=f"id-{tag}"))

    @tool()
    async def jot(text: str, window: ContextQueue[str]) -> None:
        await window.append(ContextItem(text))

    agent = Agent(
        "keeper",
        "keeps notes",
        [remember, jot],
        context_queue=ContextQueue(limit=1),
        context_pool=ContextPool(limit=1),
    )
    for tag in ("first", "second"):
        await agent.put(Turn(remember, args=[tag]))
    for text in ("one", "two"):
        await agent.put(Turn(jot, args=[text]))
    agent.pause()
    task = asyncio.create_task(run_all(agent))
    await settle(lambda: model.store.drain() and model.agent("keeper").phase == "paused")
    agent.resume()
    await task
    model.store.drain()

    log = log_texts(model, "keeper")
    assert log.count("← remember queued") == 2
    assert log.count("← jot queued") == 2
    assert "‖ paused" in log
    assert "▶ resumed" in log
    assert "+ pool id-first" in log
    assert "♻ pool evicted id-first" in log  # pool evictions name the item id
    assert "♻ queue evicted one" in log  # queue items have no id: a content preview
    assert model.store.agents["keeper"].evictions == 2
    assert [item.id for item in agent.context_pool.items] == ["id-second"]
    kinds = {e.kind for e in model.store.log if e.agent == "keeper"}
    assert {"put", "pause", "evict", "context", "turn", "run"} <= kinds
    assert model.log_total == len(model.store.log)
    assert all(e.at == 1000.0 for e in model.store.log)  # stamped by the injected clock


async def test_event_log_is_bounded(clock: Any) -> None:
    small = DashboardModel(clock=clock, max_log=20)

    @tool()
    async def tick() -> None:
        return None

    agent = Agent("chatty", "many events", [tick])
    with subscribe(small):
        for _ in range(30):
            await agent.put(Turn(tick))
        await run_all(agent)
    small.store.drain()
    assert len(small.store.log) == 20
    assert small.log_total > 60  # puts, starts and ends were all counted
    assert small.store.log[-1].text == "run ended: completed"


async def test_throughput_buckets_per_second(model: DashboardModel, clock: Any) -> None:
    @tool()
    async def unit() -> None:
        return None

    agent = Agent("steady", "steady", [unit])

    async def turns_at(at: float, count: int) -> None:
        clock.now = at
        for _ in range(count):
            await agent.put(Turn(unit))
        await run_all(agent)
        model.store.drain()

    await turns_at(1000.2, 1)
    await turns_at(1000.9, 1)  # same second
    state = model.store.agents["steady"]
    assert list(state.throughput)[-1] == 2
    await turns_at(1003.5, 1)  # two empty seconds in between
    assert list(state.throughput)[-4:] == [2, 0, 0, 1]
    assert len(state.throughput) == THROUGHPUT_SECONDS
    await turns_at(1003.7, 3)
    assert list(state.throughput)[-1] == 4
    await turns_at(1200.0, 1)  # more than the window later: the old seconds are gone
    assert list(state.throughput) == [0] * (THROUGHPUT_SECONDS - 1) + [1]
    assert state.completed == 7


# -- overflow and trace ids -------------------------------------------------------------


async def test_overflowing_inbox_counts_what_was_dropped(clock: Any) -> None:
    small = DashboardModel(clock=clock, max_inbox=10)

    @tool()
    async def job(n: int) -> int:
        return n

    agent = Agent("overflowing", "too fast to watch", [job])
    with subscribe(small):
        for n in range(25):
            await agent.put(Turn(job, args=[n]))
        assert len(small.inbox) == 10
        assert small.received > 10
        assert small.dropped == small.received - 10
        small.store.drain()
        lost = small.dropped
        assert lost > 0
        assert lost == small.received - small.processed
        assert small.processed == 10
        # Only the newest records survived: the last puts (before/after-put pairs).
        assert 0 < len(small.store.log) <= 10
        assert all(e.text == "← job queued" for e in small.store.log)
        await run_all(agent)  # the model carries on after an overflow...
        small.store.drain()
    assert small.dropped > lost  # ...the run overflowed it again
    assert small.store.agents["overflowing"].phase == "finished"


async def test_trace_id_is_captured_when_the_turn_starts(clock: Any) -> None:
    calls: list[tuple[ScopeKind, StopReason | None]] = []

    def trace_of(scope: Scope) -> str | None:
        calls.append((scope.kind, scope.target.stop_reason))
        return f"trace-{scope.target.args[0]}"

    traced = DashboardModel(clock=clock, trace_id=trace_of)

    @tool()
    async def job(n: int) -> int:
        return n

    agent = Agent("traced", "traced", [job])
    with subscribe(traced):
        for n in range(3):
            await agent.put(Turn(job, args=[n]))
        await run_all(agent)
    traced.store.drain()
    assert [r.trace_id for r in traced.store.recent] == ["trace-0", "trace-1", "trace-2"]
    # Asked once per turn (never for the agent run), while the turn had not ended yet.
    assert calls == [(ScopeKind.TURN, None)] * 3


async def test_trace_id_that_raises_is_ignored(clock: Any) -> None:
    def trace_of(scope: Scope) -> str | None:
        raise LookupError("no span")

    traced = DashboardModel(clock=clock, trace_id=trace_of)

    @tool()
    async def job() -> str:
        return "done"

    agent = Agent("untraced", "untraced", [job])
    with subscribe(traced):
        await agent.put(Turn(job))
        assert await run_all(agent) == ["done"]
    traced.store.drain()
    assert traced.store.recent[-1].trace_id is None
    assert traced.store.agents["untraced"].completed == 1


async def test_turn_without_agent_is_recent_but_counts_nowhere(model: DashboardModel) -> None:
    @tool()
    async def alone() -> int:
        return 3

    turn = Turn(alone)
    assert await turn.returning() == 3
    model.store.drain()
    assert model.store.recent[-1].uuid == turn.uuid
    assert model.store.recent[-1].turn is None  # previews are kept, not the ended turn
    assert model.store.recent[-1].agent is None
    assert model.store.agents == {}


# -- hostile values and load ------------------------------------------------------------


async def test_hostile_values_never_raise(model: DashboardModel) -> None:
    huge = "x" * 10_000_000
    hostile: list[Any] = [
        huge,
        b"\x00\xff\x1b[31m" * 1000,
        bytearray(b"abc"),
        "line one\nline two\r\nline three\ttabbed\x1b[2J",
        BadRepr(),
        [BadRepr()],
        None,
    ]

    @tool()
    async def spew() -> AsyncIterator[Any]:
        for value in hostile:
            yield value

    @tool()
    async def odd_result() -> BadRepr:
        return BadRepr()

    @tool()
    async def loud_failure() -> None:
        raise ValueError("boom\n" * 1_000_000)

    @tool()
    async def unprintable_failure() -> None:
        raise BadError("x")

    agent = Agent(
        "hostile", "hostile values", [spew, odd_result, loud_failure, unprintable_failure]
    )
    await agent.put(Turn(spew))
    await agent.put(Turn(odd_result))
    assert len(await run_all(agent)) == len(hostile) + 1
    for bad in (loud_failure, unprintable_failure):
        await agent.put(Turn(bad))
        with pytest.raises((ValueError, BadError)):
            await run_all(agent)
    model.store.drain()

    state = model.store.agents["hostile"]
    assert state.values == len(hostile) + 1
    tail = texts(model, "hostile")
    for text in tail:
        assert len(text) <= 200
        assert "\n" not in text
        assert "\r" not in text
        assert "\x1b" not in text
        assert text.isprintable()
    assert tail[0] == "x" * 199 + "…"
    assert tail[1].startswith("<7000 bytes> b'")
    assert tail[3] == "line one⏎line two⏎line three tabbed␛[2J"
    assert tail[4] == "<BadRepr: repr failed (RuntimeError)>"
    assert tail[5] == "[<BadRepr: repr failed (RuntimeError)>]"  # the list is walked
    assert tail[-1] == "<BadRepr: repr failed (RuntimeError)>"
    errors = [r.error for r in state.turns if r.error is not None]
    assert len(errors) == 2
    assert all(e is not None and len(e) <= 200 and "\n" not in e for e in errors)
    assert errors[1] == "<BadError: repr failed (ValueError)>"
    assert state.failed == 2


async def test_million_value_stream_keeps_the_model_bounded(model: DashboardModel) -> None:
    total = 1_000_000
    every = 100_000

    @tool()
    async def firehose() -> AsyncIterator[int]:
        for i in range(total):
            yield i

    agent = Agent("firehose", "a million values", [firehose])
    await agent.put(Turn(firehose, timeout=120))
    state = model.agent("firehose")
    made = 0  # value entries the model creates: what one drain costs
    value = model._value

    def counting(*args: Any) -> None:
        nonlocal made
        made += 1
        value(*args)

    model._value = counting  # type: ignore[method-assign]
    count = 0
    drains = 0
    async for _turn, item in agent.run():
        count += 1
        if count % every == 0:
            made = 0
            model.store.drain()
            drains += 1
            # An exact count, a bounded tail, and at most one tail's worth of entries
            # made by this drain however many values arrived since the last one.
            assert made == 500
            assert state.values == count
            assert len(state.values_tail) == 500
            assert state.values_tail[-1].text == str(item)
            assert state.values_tail[0].text == str(count - 500)
    model.store.drain()
    assert drains == total // every
    assert state.values == total
    assert len(state.values_tail) == 500
    assert state.values_tail[-1].text == str(total - 1)
    assert state.completed == 1
    assert state.turns[-1].values == total
    assert model.store.running == {}
    assert model._seen_values == {}  # no per-stream bookkeeping left behind


async def test_five_hundred_agents_at_once(model: DashboardModel) -> None:
    gate = asyncio.Event()
    inside = 0

    @tool()
    async def wait_here(n: int) -> int:
        nonlocal inside
        inside += 1
        await gate.wait()
        return n

    agents = [Agent(f"crowd-{i:03d}", "one of many", [wait_here]) for i in range(500)]
    for i, agent in enumerate(agents):
        await agent.put(Turn(wait_here, args=[i]))
    tasks = [asyncio.create_task(run_all(agent)) for agent in agents]
    await settle(lambda: inside == 500)
    model.store.drain()
    assert len(model.store.running) == 500
    assert all(model.store.agents[a.name].phase == "running" for a in agents)
    assert [a.name for a in model.live_agents()] == [a.name for a in agents]
    assert len(model.store.running_turns("crowd-250")) == 1

    gate.set()
    results = await asyncio.gather(*tasks)
    assert results == [[i] for i in range(500)]
    model.store.drain()
    assert model.store.running == {}
    assert sum(s.completed for s in model.store.agents.values()) == 500
    assert {model.phase(a) for a in agents} == {"finished"}
    assert len(model.store.recent) == 500


async def test_a_busy_drain_previews_only_the_turns_it_keeps_and_lets_go_of_all(
    model: DashboardModel,
) -> None:
    previewed: list[int] = []

    class Counted:
        def __init__(self, n: int) -> None:
            self.n = n

        def __repr__(self) -> str:
            previewed.append(self.n)
            return f"Counted({self.n})"

    @tool()
    async def make(n: int) -> Counted:
        return Counted(n)

    kept = model.store.recent.maxlen or 0
    for n in range(kept + 100):  # bare turns: only the ring of recent turns keeps them
        await Turn(make, args=[n]).returning()
    assert model.store.drain() is True
    records = list(model.store.recent)

    assert len(records) == kept
    assert all(r.turn is None for r in records)
    assert [r.inspect().output for r in records[:2]] == ["Counted(100)", "Counted(101)"]
    # The 100 turns pushed out of the ring within the same drain got no details built.
    assert set(previewed) == set(range(100, kept + 100))


async def test_the_in_process_feeder_takes_an_agents_phase_from_the_one_hook_table(
    model: DashboardModel,
) -> None:
    """`HOOK_PHASE` is the one event-to-phase table (the OTLP feeder's too)."""
    gate = asyncio.Event()

    @tool()
    async def step() -> None:
        await gate.wait()

    agent = Agent("by-the-table", "pauses, then resumes", [step])
    agent.pause()
    await agent.put(Turn(step))
    task = asyncio.create_task(run_all(agent))
    await settle(lambda: model.store.drain() and PAUSED in log_texts(model, "by-the-table"))
    assert model.agent("by-the-table").phase == HOOK_PHASE[AgentHook.ON_PAUSE]
    agent.resume()
    await settle(lambda: model.store.drain() and RESUMED in log_texts(model, "by-the-table"))
    assert model.agent("by-the-table").phase == HOOK_PHASE[AgentHook.ON_RESUME]
    gate.set()
    assert await task == [None]
