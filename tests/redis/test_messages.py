"""The Redis layer's messages cut user text by the core's one rule."""

from __future__ import annotations

import pytest

from pygents._errors import cut
from pygents.redis._mailbox_types import bounded


@pytest.mark.parametrize("limit", [1, 2, 10, 80])
def test_the_redis_layers_messages_cut_by_the_cores_rule(limit: int) -> None:
    text = "x" * 200
    assert bounded(text, limit) == cut(text, limit)
    assert bounded(b"raw", limit) == cut("bytes", limit)  # not a string: named by its type
