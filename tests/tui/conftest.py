"""Fixtures for the dashboard's model, app and CLI tests (tests/tui only)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from fake_clock import FakeClock
from on_screen import screen_text
from opentelemetry.sdk.trace import TracerProvider
from textual.app import App
from textual.pilot import Pilot

from pygents import subscribe
from pygents_otel import PygentsInstrumentor
from pygents_tui.feeders.process.model import DashboardModel

Until = Callable[..., Awaitable[None]]


async def _until(pilot: Pilot[object], predicate: Callable[[], bool], limit: int = 300) -> None:
    """Let the app (and the agents, in the same loop) run until ``predicate()`` holds.

    Polls between short pauses and refreshes the view each round, so nothing waits on
    the 10 Hz timer; fails after ``limit`` rounds instead of hanging.
    """
    app = pilot.app
    for _ in range(limit):
        refresh = getattr(app, "refresh_view", None)
        if refresh is not None:
            refresh()
        if predicate():
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError(f"condition never held: {getattr(predicate, '__doc__', predicate)}")


@pytest.fixture(autouse=True)
def no_user_configuration(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pygents-tui`` reads the user's configuration file by default; the tests (and
    the commands they start, which inherit the environment) read none of it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def model(clock: FakeClock) -> Iterator[DashboardModel]:
    """A model on the fake clock, subscribed to the runtime for the test."""
    m = DashboardModel(clock=clock)
    with subscribe(m):
        yield m


@pytest.fixture
def until() -> Until:
    return _until


@pytest.fixture
def text_of() -> Callable[[App[Any]], str]:
    """The active screen as plain text (what a terminal would show)."""
    return screen_text


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    """An SDK provider pygents traces into (not the global one: tests share it)."""
    provider = TracerProvider()
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield provider
    instrumentor.uninstrument()
    provider.shutdown()
