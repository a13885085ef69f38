"""How the Redis layer is put together, read from its source: the worker is one class
that owns its parts, a reply record is encoded in one place, and the ``CANCELLED``
outcome is built in one place (the producer's and the worker's cancellations alike).
No Redis needed."""

from __future__ import annotations

import ast
from pathlib import Path

import pygents.redis
from pygents.redis import Worker

LAYER = Path(pygents.redis.__file__).resolve().parent
ENCODER = LAYER / "_mailbox_types.py"


def _modules() -> list[Path]:
    return sorted(LAYER.rglob("*.py"))


def test_the_worker_inherits_nothing_and_its_parts_stub_nothing() -> None:
    assert Worker.__mro__ == (Worker, object)
    stubs = [
        f"{path.relative_to(LAYER)}:{node.lineno}"
        for path in _modules()
        if path.parent.name == "_worker"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Name)
        and node.exc.id == "NotImplementedError"
    ]
    assert stubs == []


def _record_displays(source: str) -> list[int]:
    """The lines where ``source`` writes a reply record by hand: a list display whose
    second item is the record's kind, ``"v"`` or ``"o"`` (``[uuid, "o", index, delivery,
    data]``)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.List)
        and len(node.elts) == 5
        and isinstance(node.elts[1], ast.Constant)
        and node.elts[1].value in ("v", "o")
    ]


def test_every_reply_record_is_encoded_by_the_one_encoder() -> None:
    assert _record_displays('json.dumps([[turn_uuid, "o", 0, 0, outcome]])') == [1]
    by_hand = [
        f"{path.relative_to(LAYER)}:{line}"
        for path in _modules()
        for line in _record_displays(path.read_text())
    ]
    assert by_hand == []


def test_the_cancelled_outcome_is_built_in_one_place() -> None:
    users = [
        str(path.relative_to(LAYER))
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Name) and node.id in ("CANCELLED", "CANCEL_MESSAGE")
    ]
    assert set(users) == {ENCODER.name}
