"""One rule for cutting user text, in every message the core writes: one ``…`` marks
the cut, and the cut text, ellipsis included, fits the limit."""

from __future__ import annotations

from typing import Any

import pytest

from pygents import HookRegistry, TurnHook, UnregisteredHookError, hook
from pygents._errors import ELLIPSIS, brief, cut
from pygents._hooks import label

KEEPS = ("head", "tail", "middle")


@pytest.mark.parametrize("keep", KEEPS)
@pytest.mark.parametrize("limit", [0, 1, 2, 3, 10, 79, 80])
@pytest.mark.parametrize("length", [0, 1, 5, 80, 81, 500])
def test_a_cut_text_fits_its_limit_with_one_ellipsis(keep: Any, limit: int, length: int) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(length))
    result = cut(text, limit, keep)
    if length <= limit:
        assert result == text
        return
    assert len(result) == limit
    assert result.count(ELLIPSIS) == (1 if limit else 0)
    kept = result.replace(ELLIPSIS, "", 1)
    if keep == "head":
        assert text.startswith(kept)
    elif keep == "tail":
        assert text.endswith(kept)
    else:
        head, _, tail = result.partition(ELLIPSIS)
        assert text.startswith(head)
        assert text.endswith(tail)
        assert len(tail) - len(head) in (0, 1)


def test_the_middle_cut_keeps_both_ends() -> None:
    assert cut("abcdefghij", 5, "middle") == "ab…ij"
    assert cut("abcdefghij", 5) == "abcd…"
    assert cut("abcdefghij", 5, "tail") == "…ghij"


@pytest.mark.parametrize(
    "value",
    [
        "x" * 10_000,
        "é\n" * 5_000,
        list(range(1_000)),
        {str(i): "v" * 100 for i in range(1_000)},
        set(range(1_000)),
        10**4000,
        [["deep" * 50] * 20] * 20,
    ],
    ids=["str", "escapes", "list", "dict", "set", "int", "nested"],
)
@pytest.mark.parametrize("limit", [20, 60, 80])
def test_brief_and_label_follow_the_rule(value: Any, limit: int) -> None:
    text = brief(value, limit)
    assert len(text) <= limit
    assert "..." not in text
    assert ELLIPSIS in text or text.startswith("<int")
    described = label(value)
    assert "..." not in described
    assert len(described) <= len(type(value).__name__) + 1 + 60


def test_an_error_listing_many_registered_names_cuts_them_by_the_rule() -> None:
    async def a_rather_long_hook_name_number_one() -> None:
        return None

    for n in range(12):
        fn = a_rather_long_hook_name_number_one
        fn.__name__ = f"a_rather_long_hook_name_number_{n}"
        hook(TurnHook.AFTER_RUN)(fn)
    with pytest.raises(UnregisteredHookError) as caught:
        HookRegistry.get("missing")
    listed = str(caught.value).split("(registered: ")[1].split(")")[0]
    assert len(listed) == 80
    assert listed.endswith(ELLIPSIS)
