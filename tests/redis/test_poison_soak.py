"""The poison-entry soak (``poison_soak.py``), run for a few seconds."""

from __future__ import annotations

from pathlib import Path

from poison_soak import soak

from system_programs import require


async def test_under_a_poison_soak_every_good_turn_has_one_outcome_and_every_poison_a_dead_letter(
    tmp_path: Path,
) -> None:
    require("redis-server")
    result = await soak(4.0, workers=2, logs=tmp_path)

    assert result.good_put >= 100
    assert result.poison_put >= 50
    assert result.good_outcomes == result.good_put
    assert result.duplicate_outcomes == 0
    assert result.good_failed == 0
    assert result.poison_dead_lettered == result.poison_put == result.dead_letters
    assert result.wrong_reasons == []
    assert result.unexpected_dead_letters == 0
    assert result.left_in_mailbox == 0
    assert result.workers_died == 0
    assert result.worker_tracebacks == 0
    assert result.worker_exit_codes == [0, 0]
    assert result.ok
