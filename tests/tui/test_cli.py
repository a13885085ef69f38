"""``pygents-tui``: arguments, errors, entry-point loading, and what ``demo``/``run`` start.

Running the app through ``main()`` needs a real terminal; the workloads ``main()``
would hand to the dashboard are run here under ``Dashboard.run_test`` instead.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pygents import AgentRegistry
from pygents_tui import Dashboard, __version__, run_dashboard
from pygents_tui.cli._commands import _telemetry, _without_console, main
from pygents_tui.cli._entry import run
from pygents_tui.cli._target import TargetError, load_target
from pygents_tui.cli._terminal import terminal_problem
from pygents_tui.cli.demo import build_demo


@pytest.fixture(autouse=True)
def forget_loaded_files(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``run PATH.py`` adds the file's folder to sys.path and the module to sys.modules."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("_pygents_tui_", "tuipkg")):
            del sys.modules[name]


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- arguments ---------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pygents-tui {__version__}"


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pygents-tui")
    for text in ("demo", "run", "--version", "Watch pygents agents live"):
        assert text in out


@pytest.mark.parametrize("command", ["demo", "run"])
def test_command_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: pygents-tui {command}" in out
    assert "--trace-url" in out
    assert ("--seed" in out) == (command == "demo")
    assert ("PATH.py[:callable]" in out) == (command == "run")


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: pygents-tui")
    assert "demo" in err
    assert "run" in err


def test_console_script_exits_with_mains_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["pygents-tui"])
    with pytest.raises(SystemExit) as exit_info:
        run()
    assert exit_info.value.code == 2
    assert "usage: pygents-tui" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "prefix", "detail"),
    [
        (["--bogus"], "pygents-tui: error: ", "unrecognized arguments: --bogus"),
        (["launch"], "pygents-tui: error: ", "invalid choice: 'launch'"),
        (["demo", "--seed", "many"], "pygents-tui demo: error: ", "invalid int value: 'many'"),
        (["demo", "--speed"], "pygents-tui demo: error: ", "expected one argument"),
        (["run"], "pygents-tui run: error: ", "required: target"),
        (["run", "a.py", "b.py"], "pygents-tui: error: ", "unrecognized arguments: b.py"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(
    argv: list[str], prefix: str, detail: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    line = one_line_error(capsys)
    assert line.startswith(prefix)
    assert detail in line
    assert line.endswith("(see --help)")


# -- `run` with a target that cannot run -------------------------------------------------


@pytest.fixture
def drawable(monkeypatch: pytest.MonkeyPatch) -> None:
    """``main()`` draws only on a terminal, and pytest captures the output; a driver
    chosen in ``TEXTUAL_DRIVER`` (here the headless one) is the documented way past
    that check. These tests end before anything is drawn."""
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.headless_driver:HeadlessDriver")


def run_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    line = one_line_error(capsys)
    assert line.startswith("pygents-tui: error: ")
    return line


@pytest.mark.usefixtures("drawable")
def test_run_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.py"
    line = run_error(["run", str(missing)], capsys)
    assert line == f"pygents-tui: error: no such file: {missing}"


@pytest.mark.usefixtures("drawable")
def test_run_module_without_the_callable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write(tmp_path / "empty_app.py", "VALUE = 1\n")
    line = run_error(["run", str(script)], capsys)
    assert "has no 'main'" in line
    line = run_error(["run", f"{script}:serve"], capsys)
    assert "has no 'serve'" in line
    assert f"{script}:NAME" in line


@pytest.mark.usefixtures("drawable")
def test_run_non_async_callable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write(
        tmp_path / "sync_app.py",
        """
        def main():
            return 1

        async def stream():
            yield 1

        NOT_CALLABLE = 3

        async def needs(arg):
            return arg
        """,
    )
    assert "is not async: define it with 'async def'" in run_error(["run", str(script)], capsys)
    assert "async generator" in run_error(["run", f"{script}:stream"], capsys)
    assert "is not callable" in run_error(["run", f"{script}:NOT_CALLABLE"], capsys)
    assert "callable with no arguments" in run_error(["run", f"{script}:needs"], capsys)


@pytest.mark.usefixtures("drawable")
def test_run_file_that_raises_at_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write(
        tmp_path / "broken_app.py",
        """
        raise RuntimeError("config missing\\nsecond line")

        async def main():
            pass
        """,
    )
    line = run_error(["run", str(script)], capsys)
    assert line.endswith("raised while loading: RuntimeError: config missing; second line")


@pytest.mark.usefixtures("drawable")
def test_a_load_error_says_its_control_characters_visibly_not_to_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = write(
        tmp_path / "hostile_app.py",
        """
        raise RuntimeError("bad\\x1b]0;T\\x07\\x9b\\r")

        async def main():
            pass
        """,
    )
    line = run_error(["run", str(script)], capsys)
    assert line.endswith("raised while loading: RuntimeError: bad␛]0;T␇\\x9b")
    assert line.isprintable()


@pytest.mark.usefixtures("drawable")
def test_run_file_with_a_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write(tmp_path / "typo_app.py", "async def main(:\n    pass\n")
    line = run_error(["run", str(script)], capsys)
    assert "syntax error on line 1" in line


@pytest.mark.usefixtures("drawable")
def test_run_unimportable_module(capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(["run", "no_such_package_xyz.jobs:main"], capsys)
    assert "cannot import 'no_such_package_xyz.jobs'" in line


# -- load_target --------------------------------------------------------------------------


async def test_load_target_path_defaults_to_main(tmp_path: Path) -> None:
    script = write(
        tmp_path / "plain_app.py",
        """
        import helper_mod  # a sibling module: the file's folder is importable

        async def main():
            return helper_mod.VALUE
        """,
    )
    write(tmp_path / "helper_mod.py", "VALUE = 'from main'\n")
    workload = load_target(str(script))
    assert await workload() == "from main"
    sys.modules.pop("helper_mod", None)


async def test_load_target_path_with_name(tmp_path: Path) -> None:
    script = write(
        tmp_path / "named_app.py",
        """
        async def main():
            return "main"

        async def serve():
            return "serve"
        """,
    )
    assert await load_target(f"{script}:serve")() == "serve"
    assert await load_target(f"{script}:main")() == "main"


async def test_load_target_package_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "tuipkg" / "__init__.py", "")
    write(
        tmp_path / "tuipkg" / "jobs.py",
        """
        async def main():
            return "package main"

        async def nightly():
            return "package nightly"
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert await load_target("tuipkg.jobs:nightly")() == "package nightly"
    assert await load_target("tuipkg.jobs:")() == "package main"  # empty name: main
    with pytest.raises(TargetError, match="has no 'missing'"):
        load_target("tuipkg.jobs:missing")


def test_load_target_without_a_location() -> None:
    with pytest.raises(TargetError, match=r"give PATH\.py\[:callable\]"):
        load_target(":main")


async def test_callable_object_that_is_not_async_fails_when_called(tmp_path: Path) -> None:
    script = write(
        tmp_path / "object_app.py",
        """
        class Entry:
            def __call__(self):
                return 42

        main = Entry()
        """,
    )
    workload = load_target(str(script))  # cannot be told apart before calling it
    with pytest.raises(TargetError, match="is not async"):
        await workload()


# -- what `run` and `demo` start, under the dashboard --------------------------------------


async def until(pilot: Any, predicate: Any, limit: int = 500) -> None:
    for _ in range(limit):
        pilot.app.refresh_view()
        if predicate():
            return
        await pilot.pause(0.01)
    raise AssertionError("condition never held")


async def test_run_target_under_the_dashboard(tmp_path: Path) -> None:
    script = write(
        tmp_path / "agents_app.py",
        """
        from pygents import Agent, Turn, tool

        @tool()
        async def double(n: int) -> int:
            return n * 2

        async def main():
            agent = Agent("scripted", "from a script", [double])
            for n in range(5):
                await agent.put(Turn(double, args=[n]))
            return [v async for _, v in agent.run()]
        """,
    )
    app = Dashboard(load_target(str(script)), title=str(script))
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.workload_done.is_set())
        await until(pilot, lambda: app.model.agent("scripted").completed == 5)
        assert app.workload_error is None
        assert app.sub_title == str(script)
        assert app.model.agent("scripted").values == 5
        await pilot.press("q")
    assert app.return_code == 0


async def test_run_target_that_is_not_async_at_call_time(tmp_path: Path) -> None:
    script = write(
        tmp_path / "callable_app.py",
        """
        class Entry:
            def __call__(self):
                return "not awaitable"

        main = Entry()
        """,
    )
    app = Dashboard(load_target(str(script)))
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.workload_done.is_set())
        assert isinstance(app.workload_error, TargetError)
        await pilot.press("q")
    assert app.return_code == 1


async def test_demo_workload_under_the_dashboard() -> None:
    demo = build_demo(seed=7, speed=20)
    assert [a.name for a in demo.agents] == [
        "planner",
        "fetcher-1",
        "fetcher-2",
        "summarizer",
        "archiver",
    ]
    app = Dashboard(demo.run, title="demo")
    app.animation_level = "none"
    model = app.model
    async with app.run_test(size=(100, 30)) as pilot:
        await until(
            pilot,
            lambda: (
                model.agent("planner").completed >= 2
                and model.agent("summarizer").completed >= 1
                and model.agent("fetcher-1").values + model.agent("fetcher-2").values >= 3
            ),
        )
        assert app.workload_error is None
        assert set(AgentRegistry.names()) >= {a.name for a in demo.agents}
        table = app._main.query_one("#agents")
        assert table.row_count >= 5
        await pilot.press("q")
    assert app.return_code == 0


def test_telemetry_stays_off_without_otlp_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    assert _telemetry() == (None, None)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")  # would write over the screen
    assert _telemetry() == (None, None)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert _telemetry() == (None, None)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console, none")
    assert _telemetry() == (None, None)


def test_console_is_taken_out_of_an_exporter_list_so_nothing_prints_over_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console,otlp")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp, console")
    assert _without_console("OTEL_TRACES_EXPORTER") == "otlp"
    assert _without_console("OTEL_METRICS_EXPORTER") == "otlp"
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "console")
    assert _without_console("OTEL_METRICS_EXPORTER") == "none"
    monkeypatch.delenv("OTEL_METRICS_EXPORTER")
    assert _without_console("OTEL_METRICS_EXPORTER") is None


# -- without a terminal ---------------------------------------------------------------------


def test_run_dashboard_refuses_without_a_terminal_and_runs_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran: list[bool] = []

    async def workload() -> None:
        ran.append(True)

    assert run_dashboard(workload) == 2  # pytest's captured stdout is not a terminal
    line = one_line_error(capsys)
    assert line.startswith("pygents-tui: error: standard output is not a terminal")
    assert ran == []


def test_a_chosen_textual_driver_draws_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert terminal_problem() is not None  # under pytest, stdout is captured
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")
    assert terminal_problem() is None  # e.g. `textual serve`: the driver draws elsewhere
