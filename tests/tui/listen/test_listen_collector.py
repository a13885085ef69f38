"""``pygents-tui listen`` paces the garbage collector for a fleet's churn
(`pygents_tui.cli._collector`): under W12 the default pace ran full collections several
times a second, each stopping the dashboard for 100 ms and more."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from terminal import free_port

from pygents_tui.cli import listen as serve
from pygents_tui.cli._collector import YOUNG, paced_collector
from pygents_tui.cli._commands import main


@pytest.fixture
def threshold() -> Iterator[tuple[int, int, int]]:
    """The process's pace, put back whatever the test does."""
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_listen_serves_with_young_collections_paced_and_gives_the_pace_back(
    threshold: tuple[int, int, int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[tuple[int, int, int]] = []
    refuse = serve.refuse_without_terminal

    def watched() -> bool:  # the real check, with the pace it runs under noted
        seen.append(gc.get_threshold())
        return refuse()

    monkeypatch.setattr(serve, "refuse_without_terminal", watched)
    assert main(["listen", "--grpc-port", "0", "--http-port", str(free_port())]) == 2
    assert seen == [(YOUNG, threshold[1], threshold[2])]
    assert gc.get_threshold() == threshold
    assert "not a terminal" in capsys.readouterr().err


def test_a_pace_chosen_by_hand_is_kept(threshold: tuple[int, int, int]) -> None:
    for chosen in ((2 * YOUNG, 10, 10), (0, 10, 10)):  # slower; young collections off
        gc.set_threshold(*chosen)
        with paced_collector():
            assert gc.get_threshold() == chosen
        assert gc.get_threshold() == chosen
