"""What a person reads of the assistant's work: streamed text in the dashboard's
Values panel shows as the text itself, and cut text (``check_tasks``' reports, the
tools' short answers) is cut between words and marked with "…"."""

from __future__ import annotations

from assistant.agent import Event
from assistant.model import Reply, ScriptedModel, TextDelta
from assistant.tasks import TEXT_TAIL, Progress
from assistant.tools import clip
from pygents import subscribe
from pygents_tui import DashboardModel

from .session_models import Sessions, finish

WORDS = "the quick brown fox jumps over the lazy dog and keeps running far away "


async def test_the_values_panel_shows_each_streamed_piece_as_its_quoted_text(
    new_session: Sessions,
) -> None:
    dashboard = DashboardModel()
    session = new_session(ScriptedModel([Reply("write the note")], chunk=8), name="writer")
    with subscribe(dashboard):
        await finish(session, "note it")
    dashboard.store.drain()
    shown = [v.text for v in dashboard.agent("writer").values_tail if v.tool.endswith("respond")]
    assert shown[:2] == ["'write th'", "'e note'"]
    assert repr(TextDelta(" a b ")) == "' a b '"  # the spaces at its ends stay visible


def test_a_cut_falls_between_words_and_is_marked() -> None:
    text = "The quick brown fox jumps over the lazy dog"
    assert clip(text, 18) == "The quick brown…"
    assert clip(text, 18, keep="tail") == "…over the lazy dog"  # cut at a space already
    assert clip(text, 17, keep="tail") == "…the lazy dog"
    assert clip(text, len(text)) == text
    assert len(clip(text * 50, 100)) <= 100
    # One long token has no word to keep whole: it is cut where the limit falls.
    assert clip("/a/very/long/path/without/any/space", 12) == "/a/very/lon…"
    assert clip("x" * 20, 1) == "…"


def test_check_tasks_shows_the_latest_text_from_the_start_of_a_word() -> None:
    progress = Progress("summarize")
    text = WORDS * 20
    for start in range(0, len(text), 7):  # streamed in pieces that split words
        progress.record(Event("text", text[start : start + 7], "s"))
    assert len(progress.text) <= TEXT_TAIL
    assert progress.text.startswith("…")
    first = progress.text[1:].split(" ", 1)[0]
    assert first in WORDS.split()  # a whole word, not its tail
    assert text.endswith(progress.text[1:])  # the end of the text, nothing else dropped
    (latest,) = [line for line in progress.report("t1").splitlines() if "latest text" in line]
    assert latest.startswith("  latest text: '…")
