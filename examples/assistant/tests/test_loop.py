"""The assistant end to end, on scripted models: tool calls, delegation, timeouts,
refused path escapes, and the stop tool.

Every call the model makes is answered in the conversation, ``stop`` included ("stopped"),
so that a follow-up message can be sent: ``tool_messages`` leaves stop's answer out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from assistant.agent import Event, Session, build_session, close_session
from assistant.demo import demo_model, helper_model
from assistant.model import Message, Reply, ScriptedModel, ToolCall
from assistant.tasks import enable_delegation

MakeSession = Callable[[Sequence[Reply]], Session]


def call(n: int, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"c{n}", name=name, arguments=dict(arguments))


async def run(session: Session, task: str) -> list[Event]:
    try:
        return [event async for event in session.run(task)]
    finally:
        if session.background is not None:
            await session.background.close()
        await close_session(session)


@pytest.fixture
def session_of() -> MakeSession:
    made: list[Session] = []

    def make(script: Sequence[Reply]) -> Session:
        made.append(build_session(ScriptedModel(script)))
        return made[-1]

    return make


def tool_messages(session: Session) -> list[Message]:
    """The answers to every call but ``stop``."""
    stops = {
        call.id
        for item in session.memory.items
        for call in item.content.tool_calls
        if call.name == "stop"
    }
    return [
        item.content
        for item in session.memory.items
        if item.content.role == "tool" and item.content.tool_call_id not in stops
    ]


async def test_a_task_needing_several_tool_calls(session_of: MakeSession) -> None:
    session = session_of(
        [
            Reply(
                "Writing.",
                (
                    call(1, "write_file", path="a/b.txt", content="hello world\n"),
                    call(2, "read_file", path="a/b.txt"),
                    call(3, "bash", command="wc -w < a/b.txt"),
                ),
            ),
            Reply("Done.", (call(4, "stop", summary="two words"),)),
        ]
    )
    events = await run(session, "write a file and count its words")
    assert session.summary == "two words"
    assert "".join(e.text for e in events if e.kind == "text") == "Writing.Done."
    results = {m.tool_call_id: m.content for m in tool_messages(session)}
    assert results["c2"] == "hello world\n"
    assert "2" in results["c3"]
    assert events[-1].kind == "done"
    # every tool message answers a call the assistant made, in order; stop's too
    roles = [item.content.role for item in session.memory.items]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "assistant", "tool"]
    assert session.memory.items[-1].content.tool_call_id == "c4"


async def test_a_delegated_sub_task_runs_in_the_background_and_reports_back() -> None:
    session = build_session(demo_model())
    manager = enable_delegation(session, helper_model)
    events = await run(session, "write two notes and count their words")
    assert session.summary == "notes written, words counted"
    checked = next(m.content for m in tool_messages(session) if m.tool_call_id == "call-7")
    assert checked.startswith("t1 [")  # progress, whatever it was at that moment
    assert "\nt2 [" in checked
    waited = next(m.content for m in tool_messages(session) if m.tool_call_id == "call-8")
    assert waited.splitlines()[0].startswith("t1: count the words of a short poem")
    assert "t2: count the words of a proverb" in waited
    assert set(manager.children) == {"t1", "t2"}
    assert all(child.summary for child in manager.children.values())
    assert any(e.kind == "tool" and e.text.startswith("delegate_task") for e in events)


async def test_a_command_that_times_out_is_reported_and_the_loop_goes_on(
    session_of: object,
) -> None:
    session = session_of(
        [
            Reply("", (call(1, "bash", command="sleep 5", timeout=0.2),)),
            Reply("", (call(2, "stop", summary="gave up waiting"),)),
        ]
    )
    await run(session, "wait for something slow")
    (result,) = [m.content for m in tool_messages(session)]
    assert "timed out" in result.lower()
    assert session.summary == "gave up waiting"


async def test_a_path_escape_is_refused_and_reported_to_the_model(
    session_of: MakeSession, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    session = session_of(
        [
            Reply("", (call(1, "read_file", path="../../etc/passwd"),)),
            Reply("", (call(2, "write_file", path=str(outside), content="x"),)),
            Reply("", (call(3, "stop", summary="refused"),)),
        ]
    )
    await run(session, "read something outside")
    results = [m.content for m in tool_messages(session)]
    assert len(results) == 2
    assert all("PathEscapeError" in r and "outside the working directory" in r for r in results)
    assert not await asyncio.to_thread(outside.exists)
    assert session.summary == "refused"


async def test_stop_called_with_other_calls_runs_them_first_and_leaves_nothing_queued(
    session_of: MakeSession,
) -> None:
    # Formerly stop ended the run at once, leaving `bash` and a `respond` queued for the
    # next message (issue 15, item 4): the calls of one reply now all run, stop last.
    session = session_of(
        [Reply("", (call(1, "stop", summary="early"), call(2, "bash", command="touch late")))]
    )
    await run(session, "stop at once")
    assert session.summary == "early"
    assert session.agent.turns == []
    (result,) = tool_messages(session)
    assert result.tool_call_id == "c2"
    assert result.content.startswith("[exit code 0]")


async def test_a_reply_without_tool_calls_finishes_with_its_text(session_of: MakeSession) -> None:
    session = session_of([Reply("Nothing to do: the answer is 4.")])
    events = await run(session, "what is 2 + 2?")
    assert session.summary == "Nothing to do: the answer is 4."
    assert events[-1] == Event("done", "Nothing to do: the answer is 4.", session.name)


async def test_an_unknown_tool_is_answered_with_an_error(session_of: MakeSession) -> None:
    session = session_of(
        [
            Reply("", (call(1, "teleport", where="moon"),)),
            Reply("", (call(2, "stop", summary="ok"),)),
        ]
    )
    await run(session, "go")
    (result,) = tool_messages(session)
    assert result.tool_call_id == "c1"
    assert "no tool named 'teleport'" in result.content


async def test_missing_arguments_are_reported_back_not_fatal(session_of: MakeSession) -> None:
    session = session_of(
        [
            Reply("", (call(1, "write_file", path="x.txt"),)),  # no content
            Reply("", (call(2, "stop", summary="recovered"),)),
        ]
    )
    await run(session, "write")
    (result,) = tool_messages(session)
    assert result.tool_call_id == "c1"
    # Checked against the tool's schema before a turn is made (issue 15, item 11), no
    # longer a TypeError from inside the call.
    assert result.content.startswith("error: invalid arguments for write_file:")
    assert "'content' is a required property" in result.content
    assert session.summary == "recovered"
