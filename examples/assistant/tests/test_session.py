"""A session holds a conversation: follow-up messages, and nothing left queued or
unanswered however a run ends (stop, an answer, an error, cancellation, a consumer
that stops reading, a pause)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from assistant.agent import Event, Session
from assistant.model import Message, Reply, ScriptedModel
from pygents import AgentHook, AgentRegistry, ScopeKind
from pygents.testing import RecordingSubscriber

from .session_models import (
    FailingModel,
    Sessions,
    Step,
    SteppedModel,
    Usage,
    assert_well_formed,
    call,
    finish,
)


def conversation(session: Session) -> list[Message]:
    return [item.content for item in session.memory.items]


def queued(session: Session) -> list[str]:
    return [turn.tool.name for turn in session.agent.turns]


async def test_a_follow_up_message_calls_the_model_again_and_returns_its_new_result(
    new_session: Sessions,
) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "stop", summary="done 1"),)),
            Reply("", (call(2, "stop", summary="done 2"),)),
        ]
    )
    session = new_session(model)
    first = await finish(session, "task one")
    assert first[-1] == Event("done", "done 1", session.name)
    second = await finish(session, "task two")
    assert second[-1] == Event("done", "done 2", session.name)
    assert session.summary == "done 2"
    assert len(model.calls) == 2
    assert model.remaining == 0


async def test_no_turn_is_left_queued_after_a_run(new_session: Sessions) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "write_file", path="a.txt", content="a"),)),
            Reply("", (call(2, "stop", summary="wrote a"),)),
            Reply("Nothing else to do."),
        ]
    )
    session = new_session(model)
    await finish(session, "write a")
    assert queued(session) == []
    await finish(session, "anything else?")
    assert queued(session) == []
    assert session.summary == "Nothing else to do."
    assert session.outcome is not None
    assert session.outcome.reason == "answer"


async def test_the_follow_up_sees_the_whole_conversation_with_every_call_answered(
    new_session: Sessions,
) -> None:
    model = ScriptedModel(
        [
            Reply("Listing.", (call(1, "list_files"), call(2, "stop", summary="listed"))),
            Reply("Still empty."),
        ]
    )
    session = new_session(model)
    await finish(session, "what is there?")
    await finish(session, "and now?")
    messages, _tools = model.calls[1]
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [m.content for m in messages if m.role == "user"] == ["what is there?", "and now?"]
    assert [(m.tool_call_id, m.content) for m in messages if m.role == "tool"] == [
        ("c1", "(empty)"),
        ("c2", "stopped"),
    ]
    assert_well_formed(messages[1:])
    assert_well_formed(conversation(session))


async def test_a_failed_model_call_ends_the_run_with_its_error_and_the_session_goes_on(
    new_session: Sessions,
) -> None:
    model = FailingModel(ConnectionError("endpoint down"), [Reply("Back again.")])
    session = new_session(model)
    with pytest.raises(ConnectionError, match="endpoint down"):
        await finish(session, "first")
    assert session.outcome is not None
    assert session.outcome.reason == "error"
    assert queued(session) == []
    events = await finish(session, "second")
    assert events[-1].text == "Back again."
    assert [m.role for m in conversation(session)] == ["user", "user", "assistant"]


async def test_cancelling_a_run_while_a_tool_runs_answers_its_calls_and_queues_nothing(
    new_session: Sessions,
    recorder: RecordingSubscriber,
) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "bash", command="sleep 30"), call(2, "list_files"))),
            Reply("Fine."),
        ]
    )
    session = new_session(model)
    task = asyncio.create_task(finish(session, "wait a while"))

    def bash_runs(rec: RecordingSubscriber) -> bool:
        return any(scope.target.name == "bash" for scope in rec.started(ScopeKind.TOOL))

    async with asyncio.timeout(30):
        await recorder.wait_for(bash_runs)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert session.outcome is not None
    assert session.outcome.reason == "cancelled"
    assert queued(session) == []
    answers = {m.tool_call_id: m.content for m in conversation(session) if m.role == "tool"}
    assert answers["c1"].startswith("not run: the run was cancelled")
    assert answers["c2"].startswith("not run: the run was cancelled")
    events = await finish(session, "never mind")
    assert events[-1].text == "Fine."
    assert_well_formed(model.calls[1][0][1:])


async def test_leaving_a_run_early_answers_the_calls_left_and_queues_nothing(
    new_session: Sessions,
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [
            Reply(
                "",
                (
                    call(1, "write_file", path="one.txt", content="1"),
                    call(2, "write_file", path="two.txt", content="2"),
                ),
            ),
            Reply("Alright."),
        ]
    )
    session = new_session(model)
    async with contextlib.aclosing(session.run("write two files")) as events:
        async for event in events:
            if event.kind == "tool":
                break  # the first file is written; the consumer leaves
    assert queued(session) == []
    assert await session.runtime.list_files() == ["one.txt"]
    answers = {m.tool_call_id: m.content for m in conversation(session) if m.role == "tool"}
    assert answers["c1"] == "wrote 1 characters to one.txt"
    assert answers["c2"].startswith("not run:")
    assert (await finish(session, "go on"))[-1].text == "Alright."
    assert await session.runtime.list_files() == ["one.txt"]


async def test_a_turn_queued_by_a_run_cancelled_during_a_pause_never_runs(
    new_session: Sessions,
    recorder: RecordingSubscriber,
) -> None:
    release = asyncio.Event()
    first = Step(Reply("", (call(1, "write_file", path="stale.txt", content="x"),)), release)
    model = SteppedModel([first, Reply("Nothing written.")])
    session = new_session(model)
    old_agent = session.agent
    task = asyncio.create_task(finish(session, "write a file"))
    async with asyncio.timeout(30):
        await first.streamed.wait()
        session.agent.pause()  # the agent holds before its next turn: the write
        release.set()
        await recorder.wait_for(lambda rec: bool(rec.of(AgentHook.ON_PAUSE)))
    assert [turn.tool.name for turn in old_agent.turns] == ["write_file"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # pygents cannot unqueue a turn: the session moved on to a fresh agent
    assert session.agent is not old_agent
    assert AgentRegistry.get(session.name) is session.agent
    assert queued(session) == []
    assert (await finish(session, "then do nothing"))[-1].text == "Nothing written."
    assert await session.runtime.list_files() == []
    assert_well_formed(conversation(session))


async def test_a_second_run_while_one_is_going_is_refused(new_session: Sessions) -> None:
    release = asyncio.Event()
    step = Step(Reply("Slow answer."), release)
    session = new_session(SteppedModel([step]))
    task = asyncio.create_task(finish(session, "first"))
    async with asyncio.timeout(30):
        await step.entered.wait()
    with pytest.raises(RuntimeError, match="already working on a message"):
        await finish(session, "second")
    release.set()
    assert (await task)[-1].text == "Slow answer."
    assert [m.content for m in conversation(session) if m.role == "user"] == ["first"]


async def test_token_usage_is_totalled_on_the_session_and_kept_out_of_the_conversation(
    new_session: Sessions,
) -> None:
    model = SteppedModel(
        [
            Step(Reply("", (call(1, "list_files"),)), parts=(Usage(120, 7),)),
            Step(Reply("Done."), parts=(Usage(150, None),)),
        ]
    )
    session = new_session(model)
    events = await finish(session, "look")
    assert (session.usage.input_tokens, session.usage.output_tokens) == (270, 7)
    assert [e.kind for e in events] == ["tool", "text", "done"]
    assert [m.role for m in conversation(session)] == ["user", "assistant", "tool", "assistant"]
