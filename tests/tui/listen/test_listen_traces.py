"""The trace store: spans grouped by trace within a byte budget, and trees built
however the spans arrived — parents missing, in a cycle, or thousands deep."""

from __future__ import annotations

from otlp_requests import SpanSpec, new_id, spans_batch

from pygents_tui.feeders import TraceStore, flatten
from pygents_tui.listen.decode import ReceivedSpan


def received(*specs: SpanSpec) -> list[ReceivedSpan]:
    return list(spans_batch(specs).spans)


def test_a_span_whose_parent_never_arrived_is_a_root_marked_orphan() -> None:
    store = TraceStore()
    trace, root, lost = new_id(16), new_id(8), new_id(8)
    for span in received(
        SpanSpec("root", trace, root, start_ns=10, end_ns=100),
        SpanSpec("child", trace, new_id(8), parent_id=root, start_ns=20, end_ns=30),
        SpanSpec("stray", trace, new_id(8), parent_id=lost, start_ns=50, end_ns=90),
    ):
        store.add(span)

    tree = store.tree(trace.hex())
    assert tree is not None
    assert [(n.name, n.orphan) for n in tree.roots] == [("root", False), ("stray", True)]
    assert [(d, n.name) for d, n in flatten(tree)] == [(0, "root"), (1, "child"), (0, "stray")]
    child = tree.roots[0].children[0]
    assert (child.start, child.end) == (10e-9, 20e-9)
    assert tree.duration == 90e-9


def test_parent_cycles_and_self_parents_still_give_every_span_once() -> None:
    store = TraceStore()
    trace, a, b, c = new_id(16), new_id(8), new_id(8), new_id(8)
    for span in received(
        SpanSpec("a", trace, a, parent_id=b),
        SpanSpec("b", trace, b, parent_id=a),
        SpanSpec("c", trace, c, parent_id=c),
    ):
        store.add(span)

    tree = store.tree(trace.hex())
    assert tree is not None
    names = sorted(n.name for _, n in flatten(tree))
    assert names == ["a", "b", "c"]
    assert all(n.orphan for n in tree.roots)


def test_a_chain_thousands_deep_builds_without_recursion() -> None:
    store = TraceStore(max_spans=10_000)
    trace = new_id(16)
    ids = [new_id(8) for _ in range(5000)]
    specs = [
        SpanSpec(f"s{i}", trace, ids[i], parent_id=ids[i - 1] if i else b"") for i in range(5000)
    ]
    for span in received(*specs):
        store.add(span)

    tree = store.tree(trace.hex())
    assert tree is not None
    rows = flatten(tree)
    assert len(rows) == 5000
    assert rows[-1][0] == 4999


def test_the_byte_budget_evicts_whole_traces_least_recently_touched_first() -> None:
    first, second, third = new_id(16), new_id(16), new_id(16)
    spans = {t: received(SpanSpec("x", t, new_id(8)))[0] for t in (first, second, third)}
    store = TraceStore(max_bytes=2 * spans[first].size + 10)
    store.add(spans[first])
    store.add(spans[second])
    store.add(received(SpanSpec("y", first, new_id(8)))[0])  # touches the first again...
    assert store.evicted == 1
    assert second.hex() not in store  # ...so the second was the least recently touched
    store.add(spans[third])

    assert first.hex() not in store
    assert third.hex() in store
    assert store.size <= store.max_bytes


def test_a_trace_keeps_its_span_bound_and_a_resent_span_replaces_its_copy() -> None:
    store = TraceStore(max_spans=2)
    trace, repeated = new_id(16), new_id(8)
    for span in received(
        SpanSpec("one", trace, repeated),
        SpanSpec("one again", trace, repeated),
        SpanSpec("two", trace, new_id(8)),
        SpanSpec("three", trace, new_id(8)),
    ):
        store.add(span)

    tree = store.tree(trace.hex())
    assert tree is not None
    assert sorted(n.name for _, n in flatten(tree)) == ["one again", "two"]
    assert (tree.spans, tree.dropped, store.dropped) == (2, 1, 1)
    assert store.size == sum(s.size for s in store.spans(trace.hex()))
    assert store.tree(new_id(16).hex()) is None
