"""The key map, as a modal screen, generated from the bindings in force.

Nothing here is written by hand: the keys are the ``BINDINGS`` of the app, of the
screen the help was opened over and of the widget that has the focus there (and its
containers), each with its description; the symbols are the ``LEGEND`` of the
widgets on that screen. A key added anywhere shows up here by itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from rich.text import Text
from textual.actions import parse
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from pygents_tui.ui.widgets._text import Legend, legend

_KEYS = 14  # the width of the keys column


def bindings_of(node: DOMNode) -> list[Binding]:
    """``node``'s own bindings, from its class and the classes it inherits from (a
    subclass's binding of a key replaces its base's), in declaration order. The
    app's command palette key is one of the app's."""
    found: dict[str, Binding] = {}
    for kind in type(node).__mro__:
        declared: list[BindingType] = kind.__dict__.get("BINDINGS", [])
        for binding in Binding.make_bindings(declared):
            found.setdefault(binding.key, binding)
    if isinstance(node, App) and node.ENABLE_COMMAND_PALETTE:
        palette = Binding(node.COMMAND_PALETTE_BINDING, "command_palette", "Command palette")
        found.setdefault(palette.key, palette)
    return list(found.values())


def _available(node: DOMNode, binding: Binding) -> bool:
    """Whether ``node`` offers the action now (as it tells the footer)."""
    name, parameters = parse(binding.action)[1:]
    try:
        return node.check_action(name, parameters) is not False
    except Exception:  # a check that fails must not take the help down with it
        return True


def _applies(app: App[object], action: str) -> bool:
    """Whether the app's source offers ``action`` at all (``key_applies``): a key for
    what it never does (pausing a remote agent) is not listed; one that has nothing
    to act on yet is, dimmed (`_available`)."""
    applies = getattr(app, "key_applies", None)
    return applies is None or bool(applies(action))


def _tooltip(app: App[object], action: str, tooltip: str) -> str:
    """What the help says of ``action``'s key: its binding's tooltip, as the app's
    ``key_tooltip`` puts it for what it runs (no workload: no failure to report)."""
    say = getattr(app, "key_tooltip", None)
    return tooltip if say is None else str(say(action, tooltip))


def _lines(
    app: App[object], node: DOMNode, listed: set[str]
) -> Iterator[tuple[str, str, str, bool]]:
    """(keys, description, tooltip, available) per action of ``node``: the keys bound
    to one action are listed together, and so are the keys of one action called with
    different arguments (``1`` … ``7``: show a panel), their descriptions joined.

    A key in ``listed`` (by a node before) is not listed again, and the keys listed
    here are added to it: each key is listed once (the app's ``ctrl+c`` interrupts;
    a screen's copy of selected text under the same key would say otherwise)."""
    grouped: dict[str, list[Binding]] = {}
    for binding in bindings_of(node):
        action = parse(binding.action)[1]
        if binding.key in listed or not _applies(app, action):
            continue
        grouped.setdefault(action, []).append(binding)
    listed.update(b.key for bindings in grouped.values() for b in bindings)
    for bindings in grouped.values():
        keys = " ".join(dict.fromkeys(app.get_key_display(b) for b in bindings))
        by_action = {b.action: b for b in reversed(bindings)}  # the first binding of each
        described = [b.description for b in reversed(by_action.values()) if b.description]
        first = bindings[0]
        description = ", ".join(dict.fromkeys(described)) or parse(first.action)[1]
        tooltip = _tooltip(app, parse(first.action)[1], first.tooltip)
        yield keys, description, tooltip, _available(node, first)


def _title(node: DOMNode) -> str:
    if isinstance(node, App):
        return "Everywhere"
    if isinstance(node, Screen):
        return "On this screen"
    name = (node.id or type(node).__name__).replace("-", " ")
    return f"With the focus on the {name}"


def key_map(screen: Screen[object]) -> Text:
    """The keys in force on ``screen``: its focused widget's (and containers'), the
    screen's, the app's; then what the symbols of its widgets mean. Keys in bold,
    descriptions in plain text (styled spans, never markup)."""
    app = screen.app
    focused = screen.focused
    chain: list[DOMNode] = [app, screen]
    if focused is not None:
        ancestors = [node for node in focused.ancestors_with_self if isinstance(node, Widget)]
        chain += [node for node in reversed(ancestors) if not isinstance(node, Screen)]
    text = Text()
    listed: set[str] = set()
    for node in chain:
        lines = list(_lines(app, node, listed))
        if not lines:
            continue
        text.append(f"{_title(node)}\n", style="bold underline")
        for keys, description, tooltip, available in lines:
            style = "" if available else "dim"
            text.append(f"{keys:<{_KEYS}} ", style=f"bold {style}".strip())
            text.append(description, style=style)
            if tooltip:
                text.append(f" — {tooltip}", style="dim")
            text.append("\n")
        text.append("\n")
    for widget in screen.query(Widget):
        entries: Legend | None = getattr(type(widget), "LEGEND", None)
        if entries:
            name = (widget.id or type(widget).__name__).replace("-", " ")
            text.append(f"Symbols in the {name}\n", style="bold underline")
            text.append(legend(entries))
            text.append("\n\n")
    text.rstrip()
    return text


class HelpScreen(ModalScreen[None]):
    """What every key does, on the screen the help was opened over; ``note`` (listen
    mode: why it is read-only) under them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", tooltip="close the help")
    ]

    def __init__(self, over: Screen[object], note: str | None = None) -> None:
        super().__init__()
        self.over = over
        self.note = note

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("pygents-tui — keys\n", style="bold"), id="help-title")
            yield Static(key_map(self.over), id="help-keys")
            if self.note:
                yield Static(Text(f"\n{self.note}", style="bold yellow"), id="help-note")
            yield Static(Text("\nesc or ? to close · ↑ ↓ to scroll", style="dim"))
