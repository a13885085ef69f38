"""The panels' filter language (`pygents_tui.ui._filter`) and the column fitting rule
(`pygents_tui.ui.widgets._fit`): pure functions, hostile input included."""

from __future__ import annotations

import time

import pytest

from pygents_tui.ui._filter import MAX_QUERY, MAX_SUBJECT, FilterError, parse
from pygents_tui.ui.widgets._fit import fit_label, fit_widths, split_label
from pygents_tui.ui.widgets._rows import RowChoice

ROW = {
    "agent": "planner-alpha",
    "service": "checkout",
    "instance": "f223448b",
    "state": "failed error",
    "tool": "fetch_pages",
    "text": "checkout@f223448b/planner-alpha",
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", True),
        ("agent:plan", True),
        ("agent:PLAN", True),  # case-insensitive
        ("agent:fetch", False),
        ("state:error", True),  # the older word for failed
        ("state:failed", True),
        ("tool:fetch service:checkout", True),  # every term must match
        ("tool:fetch service:billing", False),
        ("!state:failed", False),
        ("!agent:fetch", True),
        ("f223", True),  # a bare term: any field
        ("agent:^plan.*alpha$", True),  # a regular expression
        ("agent:^alpha", False),
        ("kind:put", False),  # a field the row lacks never matches...
        ("!kind:put", True),  # ...so its negation always does
    ],
)
def test_a_query_matches_the_rows_its_terms_describe(query: str, expected: bool) -> None:
    assert parse(query).matches(ROW) is expected


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("agent:(unbalanced", "bad regular expression"),
        ("[", "bad regular expression"),
        ("colour:red", "unknown field 'colour'"),
        ("agent:", "nothing to match"),
        ("!", "nothing to match"),
        ("a(?=b)", "bad regular expression 'a(?=b)': invalid perl operator: (?="),
        (r"(\w)\1", "bad regular expression"),  # no backreferences in RE2
        (r"\pL{1000}", "pattern too large"),
        ("x" * (MAX_QUERY + 1), "filter too long"),
        (" ".join("a" * 17), "too many terms"),
    ],
)
def test_a_bad_query_is_one_line_saying_why(query: str, says: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse(query)
    message = str(caught.value)
    assert says in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("(a|a)*$", True),  # (the empty match at the end: a backtracking search tries every
        ("(a|aa)*$", True),  # start first, each in exponential time)
        ("^(a|a)*$", False),
        ("(a+)+$", False),
        (r"(\w*)*x", False),
        ("(a{2,})+$", False),
        (".*.*.*.*x", False),
        ("^(a|a?)+$", False),
    ],
)
def test_a_pattern_that_backtracks_in_re_is_matched_in_linear_time_by_re2(
    pattern: str, found: bool
) -> None:
    """No guess at which patterns are slow: every pattern runs on RE2, linear in the
    subject by construction. The subject is a sender's choice (an agent's name), the
    worst case for a backtracking engine: all ``a`` then a character that fails."""
    query = parse(f"agent:{pattern}")
    (term,) = query.terms
    assert type(term.pattern).__module__ == "re2"
    assert query.matches({"agent": "a" * (MAX_SUBJECT - 1) + "!"}) is found


def test_a_regular_expression_meets_any_text_a_sender_can_send() -> None:
    query = parse("agent:^plan.*r$")
    assert query.matches({"agent": "plan\ud800ner"})  # a lone surrogate (OTLP/JSON escapes)
    assert query.matches({"agent": "PLAN\x00\u202er"})
    assert not query.matches({"agent": "\udfff" * MAX_SUBJECT})


def test_a_regular_expression_runs_on_a_bounded_subject() -> None:
    """A pattern that is slow on long text meets at most `MAX_SUBJECT` characters of a
    field: a row with a huge field is matched at once, on its head only."""
    query = parse("a.*a.*b")
    huge = {"text": "a" * 1_000_000}
    started = time.perf_counter()
    assert not query.matches(huge)
    assert time.perf_counter() - started < 1.0
    assert parse("zz").matches({"text": "a" * MAX_SUBJECT + "zz"}) is False


def test_a_bad_query_keeps_the_last_good_filter_and_says_why() -> None:
    choice = RowChoice()
    choice.set_query("agent:plan")
    choice.set_query("agent:plan(")
    assert choice.error is not None
    assert "bad regular expression" in choice.error
    assert choice.query.text == "agent:plan"
    assert choice.describe().startswith("filter error: bad regular expression")
    assert "filter: agent:plan" in choice.describe()
    choice.set_query("")
    assert choice.error is None
    assert not choice.query
    assert choice.describe() == ""


def test_sorting_cycles_through_the_columns_then_back_and_reverses() -> None:
    choice = RowChoice(("agent", "tool"))
    rows = [{"agent": "b", "tool": "y"}, {"agent": "a", "tool": "z"}, {"agent": "c", "tool": "x"}]

    def order() -> list[str]:
        chosen = choice.choose(rows, lambda row: row, lambda row, column: row[column])
        return [row["agent"] for row in chosen]

    assert order() == ["b", "a", "c"]  # the panel's own order
    choice.cycle_sort()
    assert (choice.sort_column, order()) == ("agent", ["a", "b", "c"])
    choice.flip_sort()
    assert order() == ["c", "b", "a"]
    choice.cycle_sort()  # the next column, in the direction chosen: tools z, y, x
    assert (choice.sort_column, order()) == ("tool", ["a", "b", "c"])
    choice.cycle_sort()
    assert choice.sort_column is None
    assert order() == ["b", "a", "c"]
    assert RowChoice().describe() == ""


def test_a_listen_label_gives_up_its_instance_then_its_service_before_the_name() -> None:
    label, name = "lab-fleet-alpha@f223448b/planner-alpha", "planner-alpha"
    assert split_label(label, name) == ("lab-fleet-alpha", "f223448b", name)
    assert split_label(name, name) == ("", "", name)
    assert fit_label(label, name, 60) == label
    assert fit_label(label, name, 34) == "lab-fleet-alpha@f22…/planner-alpha"
    assert fit_label(label, name, 29) == "lab-fleet…@f22…/planner-alpha"
    assert fit_label(label, name, 21) == "l…@f22…/planner-alpha"
    assert fit_label(label, name, 20) == "lab-f…/planner-alpha"
    assert fit_label(label, name, 15) == "…/planner-alpha"
    assert fit_label(label, name, 13) == name
    for width in range(1, 45):
        shown = fit_label(label, name, width)
        assert len(shown) <= width
        if width >= len(name):
            assert shown.endswith(name)
        if shown != label:
            assert "…" in shown or shown == name


def test_names_that_differ_at_their_end_stay_apart_when_cut() -> None:
    assert fit_label("assistant.t1", "assistant.t1", 10) != fit_label(
        "assistant.t2", "assistant.t2", 10
    )


def test_columns_give_width_back_in_order_down_to_their_floor() -> None:
    natural = {"agent": 30, "current": 20, "rate": 8}
    give = (("current", 7), ("rate", 4), ("agent", 6))
    assert fit_widths(natural, give, 100) == natural
    assert fit_widths(natural, give, 6 + 30 + 7 + 8) == {"agent": 30, "current": 7, "rate": 8}
    assert fit_widths(natural, give, 6 + 30 + 7 + 4) == {"agent": 30, "current": 7, "rate": 4}
    assert fit_widths(natural, give, 6 + 20 + 7 + 4) == {"agent": 20, "current": 7, "rate": 4}
    assert fit_widths(natural, give, 0) == {"agent": 6, "current": 7, "rate": 4}
