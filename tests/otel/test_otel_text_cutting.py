"""pygents_otel cuts user text with the core's `cut` (one ``…``, the cut text fitting
its limit): the same function, not a copy."""

from __future__ import annotations

import pytest

from pygents._errors import cut as core_cut
from pygents_otel._text import ELLIPSIS, bounded, bounded_tail, cut


def test_the_cut_is_the_cores_one_implementation() -> None:
    assert cut is core_cut


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
