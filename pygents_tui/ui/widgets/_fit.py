"""Fitting the panels' columns to the screen: one rule for every table.

Columns take the width of their content; when the screen is narrower, they give
width back in the order a table declares (`fit_widths`), the agent's own name last:
it is what tells two rows apart. A listen label, ``service@instance/agent``, gives up
its instance first, then its service (`fit_label`). Whatever is cut ends in ``…``
(`pygents_tui.text._cut.cut`, the dashboard's one cutting rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from pygents_tui.text._cut import ELLIPSIS, cut, cut_middle
from pygents_tui.text._visible import visible

__all__ = ["fit_label", "fit_widths", "split_label"]

PADDING = 2  # a DataTable cell's padding, one cell each side
_INSTANCE_HEAD = 4  # ``f22…``: enough of an 8-hex instance id to tell processes apart


@lru_cache(maxsize=4096)  # an agent's label is split for every row a filter matches
def split_label(label: str, name: str) -> tuple[str, str, str]:
    """``(service, instance, name)`` of an agent's ``label``: listen labels are
    ``service@instance/name`` (or ``service/name`` without an instance); an in-process
    label is the name alone, with no service nor instance. Cached: a fleet's labels
    are a few thousand, and a filter over 2,000 agents splits them all at each tick."""
    if label == name or not label.endswith(f"/{name}"):
        return "", "", label
    prefix = label[: -len(name) - 1]
    service, at, instance = prefix.rpartition("@")
    if not at:
        return prefix, "", name
    return service, instance, name


def fit_label(label: str, name: str, width: int) -> str:
    """``label`` in ``width`` characters, cut so that the agent's ``name`` is kept
    whole as long as anything else can go: the instance first (down to the head of
    its id, which still tells two processes apart), then the service, then the
    instance's head, then the service. Both are made visible first (`visible`), so
    that what is cut is what is drawn, a cell a character: the escape of a control
    or format character is several cells wide."""
    label, name = visible(label), visible(name)
    if len(label) <= width:
        return label
    service, instance, own = split_label(label, name)
    if not service:
        return cut_middle(own, width)  # both ends: ``assistant.t1`` and ``.t2`` stay apart
    room = width - len(own) - 1  # what ``service@instance`` may take, before the ``/``
    head = cut(instance, _INSTANCE_HEAD, "head")
    if instance and room >= len(service) + 1 + len(head):
        return f"{service}@{cut(instance, room - len(service) - 1, 'head')}/{own}"
    if instance and room >= 2 + 1 + len(head):  # ``s…@`` and the instance's head
        return f"{cut(service, room - 1 - len(head), 'head')}@{head}/{own}"
    if room >= 2:  # the service's head, marked as cut since its instance went
        kept = service if len(service) < room else service[: room - 1]
        return f"{kept}{ELLIPSIS}/{own}"
    if room == 1:
        return f"{ELLIPSIS}/{own}"
    return cut_middle(own, width)


def fit_widths(
    natural: Mapping[str, int],
    give: Iterable[tuple[str, int]],
    available: int,
    padding: int = PADDING,
) -> dict[str, int]:
    """Column widths that fit ``available`` cells (padding included): ``natural``
    widths, less what ``give`` takes back, step by step, until they fit: each step is a
    column and the width it may shrink to; ``padding`` is what each column adds. What
    still does not fit overflows (the table scrolls sideways)."""
    widths = dict(natural)
    over = sum(width + padding for width in widths.values()) - available
    for key, floor in give:
        if over <= 0:
            break
        taken = min(over, max(widths[key] - floor, 0))
        widths[key] -= taken
        over -= taken
    return widths
