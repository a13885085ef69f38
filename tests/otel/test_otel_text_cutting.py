"""pygents_otel cuts user text by the core's rule (one ``…``, the cut text fitting its
limit), with a copy of its own: the copy must give what the core's gives."""

from __future__ import annotations

import itertools

import pytest

from pygents._errors import cut as core_cut
from pygents_otel._text import ELLIPSIS, bounded, bounded_tail, cut

TEXTS = ["", "a", "abcdef", "x" * 300, "é\n\u200b" * 40]
LIMITS = [0, 1, 2, 3, 5, 256]
KEEPS = ("head", "tail", "middle")


def test_the_copy_gives_what_the_cores_rule_gives() -> None:
    for text, limit, keep in itertools.product(TEXTS, LIMITS, KEEPS):
        assert cut(text, limit, keep) == core_cut(text, limit, keep), (text[:10], limit, keep)  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", [1, 10, 256])
def test_bounded_text_fits_its_limit_ellipsis_included(limit: int) -> None:
    text = "n" * 1000 + "END"
    assert len(bounded(text, limit)) == limit
    assert bounded(text, limit).endswith(ELLIPSIS)
    tail = bounded_tail(text, limit)
    assert len(tail) == limit
    assert tail.startswith(ELLIPSIS)
    if limit > 3:
        assert tail.endswith("END")
    assert bounded("short", limit) == ("short" if limit >= 5 else core_cut("short", limit))
