"""The dashboard cuts text by the core's rule (one ``…``, the cut text fitting its
limit), with a copy of its own: the copy must give what the core's gives, and the
previews and received values cut with it."""

from __future__ import annotations

import itertools

import pytest

from pygents._errors import cut as core_cut
from pygents_tui.listen import values
from pygents_tui.text._cut import ELLIPSIS, cut, cut_middle
from pygents_tui.text._preview import preview

TEXTS = ["", "a", "abcdef", "x" * 300, "é\u200b" * 40]
LIMITS = [0, 1, 2, 3, 5, 256]
KEEPS = ("head", "tail", "middle")


def test_the_copy_gives_what_the_cores_rule_gives() -> None:
    for text, limit, keep in itertools.product(TEXTS, LIMITS, KEEPS):
        assert cut(text, limit, keep) == core_cut(text, limit, keep), (text[:10], limit, keep)  # type: ignore[arg-type]


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
