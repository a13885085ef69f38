"""The dashboard cuts text by the core's rule (one ``…``, the cut text fitting its
limit): the core's own function, with `cut_middle` naming its both-ends cut; the
previews and received values cut with it."""

from __future__ import annotations

import pytest

from pygents._errors import cut as core_cut
from pygents_tui.listen import values
from pygents_tui.text._cut import ELLIPSIS, cut, cut_middle
from pygents_tui.text._preview import preview


def test_the_cut_is_the_cores_one_implementation() -> None:
    assert cut is core_cut


def test_cut_middle_keeps_both_ends_as_the_cores_middle_cut() -> None:
    text = "start-" + "0" * 300 + "-end"
    for limit in (0, 1, 2, 3, 5, 256):
        assert cut_middle(text, limit) == core_cut(text, limit, "middle")
    assert cut_middle("short", 5) == "short"


def test_the_received_values_cut_is_the_same_function() -> None:
    assert values.cut_middle is cut_middle


@pytest.mark.parametrize("limit", [1, 2, 3, 8, 40])
def test_a_cut_received_value_fits_its_limit_and_shows_the_cut(limit: int) -> None:
    text = "trace-" + "0" * 100 + "-end"
    result = values.cut_middle(text, limit)
    assert len(result) == limit
    assert result.count(ELLIPSIS) == 1


@pytest.mark.parametrize("width", [1, 2, 10, 80])
def test_a_preview_fits_its_width_ellipsis_included(width: int) -> None:
    for value in ("y" * 500, list(range(500)), {"k" * 300: "v"}):
        text = preview(value, width)
        assert len(text) <= width
        assert ELLIPSIS in text
