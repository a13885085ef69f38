"""Assistant definitions (personas): the tools offered and accepted, delegation only when
allowed and enabled, helpers' own persona, and watching delegated tasks work."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from assistant.agent import (
    ASSISTANT,
    HELPER,
    Event,
    Persona,
    enable_delegation,
    toolset,
)
from assistant.model import Message, Reply, ScriptedModel
from assistant.tasks import CHECKED, RECENT, RECENT_CHARS, TEXT_TAIL, Progress
from pygents import Turn

from .session_models import Sessions, Step, SteppedModel, answers, assert_well_formed, call, finish

READER = Persona("reader", "You only read.", tools=("read_file", "list_files"))


def offered(tools: tuple[dict[str, Any], ...]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]


async def test_only_the_personas_tools_and_stop_are_offered_with_its_prompt(
    new_session: Sessions,
) -> None:
    model = ScriptedModel([Reply("ok")])
    await finish(new_session(model, persona=READER), "read")
    messages, tools = model.calls[0]
    assert offered(tools) == ["read_file", "list_files", "stop"]
    assert messages[0] == Message("system", "You only read.")


async def test_a_tool_the_persona_does_not_enable_is_refused_and_never_runs(
    new_session: Sessions,
) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "bash", command="touch made.txt"),)),
            Reply("", (call(2, "stop", summary="could not"),)),
        ]
    )
    session = new_session(model, persona=READER)
    await finish(session, "make a file")
    assert answers(session)["c1"] == (
        "error: no tool named 'bash'; the tools are: read_file, list_files, stop"
    )
    assert await session.runtime.list_files() == []
    # the agent has no such tool either: a turn for it cannot even be queued
    bash = toolset().specs["bash"].tool
    with pytest.raises(ValueError, match="has no tool 'bash'"):
        await session.agent.put(Turn(bash, kwargs={"command": "true"}))


async def test_delegation_tools_are_offered_only_once_delegation_is_enabled(
    new_session: Sessions,
) -> None:
    model = ScriptedModel(
        [Reply("", (call(1, "delegate_task", task="help"),)), Reply("no helpers"), Reply("ok")]
    )
    session = new_session(model)
    assert ASSISTANT.may_delegate
    await finish(session, "delegate something")
    assert "delegate_task" not in offered(model.calls[0][1])
    assert answers(session)["c1"].startswith("error: no tool named 'delegate_task'")
    enable_delegation(session, lambda task: ScriptedModel([Reply("done")]))
    await finish(session, "now?")
    assert offered(model.calls[2][1]) == [
        "bash",
        "read_file",
        "write_file",
        "list_files",
        "delegate_task",
        "check_tasks",
        "wait_for_tasks",
        "stop",
    ]


async def test_a_persona_that_may_not_delegate_cannot_enable_delegation(
    new_session: Sessions,
) -> None:
    session = new_session(ScriptedModel([]), persona=HELPER)
    with pytest.raises(ValueError, match="may not delegate"):
        enable_delegation(session, lambda task: ScriptedModel([]))
    assert session.background is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tools": ("bash", "teleport")}, "unknown tool 'teleport'; choose from bash, "),
        ({"tools": ("delegate_task",)}, "set may_delegate=True"),
        ({"tools": ["bash"]}, "must be a tuple of tool names"),
        ({"tools": ("bash", "bash")}, "listed twice"),
        ({"system_prompt": " "}, "needs a non-empty system_prompt"),
    ],
)
def test_a_persona_with_bad_fields_is_refused_with_the_fix(
    options: dict[str, Any], message: str
) -> None:
    fields: dict[str, Any] = {"name": "p", "system_prompt": "Be brief."} | options
    with pytest.raises((ValueError, TypeError), match=message):
        Persona(**fields)


async def test_helpers_get_the_helper_persona_and_no_delegation_tools(
    new_session: Sessions,
) -> None:
    helper_model = ScriptedModel([Reply("", (call(1, "stop", summary="helped"),))])
    model = ScriptedModel(
        [
            Reply("", (call(1, "delegate_task", task="help me"), call(2, "wait_for_tasks"))),
            Reply("", (call(3, "stop", summary="done"),)),
        ]
    )
    session = new_session(model)
    manager = enable_delegation(session, lambda task: helper_model)
    await finish(session, "get help")
    assert answers(session)["c2"] == "t1: helped"
    child = manager.children["t1"]
    assert child.persona is HELPER
    assert child.background is None
    messages, tools = helper_model.calls[0]
    assert messages[0].content == HELPER.system_prompt
    assert offered(tools) == ["bash", "read_file", "write_file", "list_files", "stop"]


async def test_a_delegating_helper_persona_is_bounded_by_depth(new_session: Sessions) -> None:
    lead = Persona("lead", "Lead helpers.", may_delegate=True)
    session = new_session(ScriptedModel([]))
    manager = enable_delegation(
        session, lambda task: ScriptedModel([Reply("ok")]), persona=lead, depth=2
    )
    await manager.start("first level")
    child = manager.children["t1"]
    assert child.background is not None
    await child.background.start("second level")
    grandchild = child.background.children["t1"]
    assert grandchild.persona is lead
    assert grandchild.background is None  # depth exhausted: no task tools
    assert "delegate_task" not in grandchild.available()
    assert (await manager.wait_all()) == "t1: ok"


async def test_check_tasks_shows_a_running_tasks_latest_text_without_waiting_for_it(
    new_session: Sessions,
) -> None:
    child_release = asyncio.Event()
    child_first = Step(
        Reply("Counting the words...", (call(1, "bash", command="echo 3"),)), child_release
    )
    child_model = SteppedModel([child_first, Reply("", (call(2, "stop", summary="3 words"),))])
    collecting = Step(Reply("", (call(3, "wait_for_tasks"), call(4, "check_tasks", task_id="t1"))))
    model = SteppedModel(
        [
            Reply("", (call(1, "delegate_task", task="count the words"),)),
            # asked once the helper has streamed its text and waits for its reply
            Step(Reply("", (call(2, "check_tasks"),)), child_first.streamed),
            collecting,
            Reply("", (call(5, "stop", summary="counted"),)),
        ]
    )
    session = new_session(model)
    enable_delegation(session, lambda task: child_model)
    run = asyncio.create_task(finish(session, "count words with a helper"))
    async with asyncio.timeout(30):
        await collecting.entered.wait()
    checked = answers(session)["c2"]  # the helper is still held: check_tasks did not wait
    assert checked.splitlines() == [
        "t1 [running] count the words",
        "  tool calls so far: 0",
        "  latest text: 'Counting the words...'",
    ]
    child_release.set()
    async with asyncio.timeout(30):
        await run
    assert answers(session)["c3"] == "t1: 3 words"
    assert answers(session)["c4"].splitlines() == [
        "t1 [done] count the words",
        "  tool calls so far: 1",
        "  latest text: 'Counting the words...'",
        "  recent: bash: [exit code 0] 3 ",
    ]
    assert_well_formed([item.content for item in session.memory.items])


async def test_check_tasks_names_the_tasks_when_an_id_is_unknown(new_session: Sessions) -> None:
    session = new_session(ScriptedModel([]))
    manager = enable_delegation(session, lambda task: ScriptedModel([Reply("ok")]))
    assert manager.check() == "no tasks were delegated"
    await manager.start("a")
    assert manager.check("t9") == "no task 't9'; the tasks are: t1"
    await manager.wait_all()


def test_a_tasks_progress_stays_bounded_however_much_it_does() -> None:
    progress = Progress("big")
    for n in range(1000):
        progress.record(Event("text", "x" * 1000, "s"))
        progress.record(Event("tool", f"bash: {n} " + "y" * 10_000, "s"))
    assert progress.tool_calls == 1000
    assert len(progress.recent) == RECENT
    assert all(len(entry) <= RECENT_CHARS for entry in progress.recent)
    assert progress.recent[-1].startswith("bash: 999 ")
    assert len(progress.text) <= TEXT_TAIL
    assert len(progress.report("t1")) < 1000


async def test_no_more_tasks_start_than_the_manager_allows(new_session: Sessions) -> None:
    release = asyncio.Event()
    session = new_session(ScriptedModel([]))
    manager = enable_delegation(
        session, lambda task: SteppedModel([Step(Reply("slow"), release)]), max_tasks=1
    )
    assert await manager.start("one") == "started t1: one"
    refused = await manager.start("two")
    assert refused.startswith("not started: 1 tasks are already running (at most 1)")
    release.set()
    assert await manager.wait_all() == "t1: slow"
    assert await manager.start("three") == "started t2: three"
    await manager.wait_all()


async def test_checking_every_task_reports_the_latest_ones_only(new_session: Sessions) -> None:
    session = new_session(ScriptedModel([]))
    manager = enable_delegation(session, lambda task: ScriptedModel([Reply("ok")]))
    for n in range(CHECKED + 2):
        await manager.start(f"task {n}")
        await manager.wait_all()
    report = manager.check()
    assert report.startswith("(2 earlier tasks not shown: pass a task_id)\nt3 [done] task 2")
    assert report.count("[done]") == CHECKED
    assert manager.check("t1").startswith("t1 [done] task 0")
