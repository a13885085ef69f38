"""Turn and agent ids: version 4 UUIDs, written exactly as the ``uuid`` module writes them."""

from __future__ import annotations

import uuid

from pygents._ids import new_uuid


def test_ids_are_version_4_uuids_in_the_uuid_modules_own_text() -> None:
    for _ in range(2000):
        text = new_uuid()
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_ids_do_not_repeat() -> None:
    assert len({new_uuid() for _ in range(10_000)}) == 10_000
