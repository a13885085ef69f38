"""A model call's token usage, from the endpoint to the dashboard: the official client
reports it, ``respond`` passes it on as a value of its turn, and the dashboard adds it
to that turn (the local chat server, a real session, the in-process dashboard model)."""

from __future__ import annotations

from assistant.agent import build_session, close_session
from assistant.openai_model import OpenAIModel
from pygents import subscribe
from pygents_tui import DashboardModel

from .chat_server import chat_stream, serve_chat


async def test_each_respond_turn_carries_the_usage_of_its_model_call() -> None:
    dashboard = DashboardModel()
    async with serve_chat() as server:
        server.answer(
            chat_stream("Looking.", tool_calls=[("c1", "list_files", {})], usage=(20, 5)),
            chat_stream("nothing here", usage=(31, 4)),
        )
        model = OpenAIModel("gpt-test", base_url=server.base_url, api_key="k", max_retries=0)
        session = build_session(model, name="counted")
        try:
            with subscribe(dashboard):
                async for _ in session.run("what is here?"):
                    pass
        finally:
            await close_session(session)
            await model.aclose()
    dashboard.store.drain()
    responds = [r for r in dashboard.store.recent if r.tool.endswith("respond") and r.tokens]
    assert [r.tokens for r in responds] == [(20, 5), (31, 4)]
    shown = [v.text for v in dashboard.agent("counted").values_tail if v.text.startswith("tok")]
    assert shown == ["tokens: 20 in, 5 out", "tokens: 31 in, 4 out"]
