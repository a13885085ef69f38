"""``pygents-tui``'s configuration file (``--config``, default under the user's
configuration directory): what it sets, that the command line overrides it, and that
anything wrong in it is one line naming the file and the key, with exit status 2.

The example of docs/dashboard.md is read and loaded here, so the documented keys are
the ones the code accepts."""

from __future__ import annotations

import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pygents_tui import Dashboard
from pygents_tui.cli._commands import build_parser, main
from pygents_tui.cli._config import (
    MAX_BYTES,
    Budget,
    Config,
    ConfigError,
    Price,
    apply_config,
    default_path,
    load_config,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from doc_blocks import ROOT, blocks

GUIDE = ROOT / "docs" / "dashboard.md"  # its configuration example is loaded below


def write(folder: Path, text: str) -> Path:
    path = folder / "tui.toml"
    path.write_text(text)
    return path


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert "Traceback" not in err
    return line


# -- where it is looked for --------------------------------------------------------------


def test_the_default_file_is_under_xdg_config_home_or_dot_config_on_linux(tmp_path: Path) -> None:
    home = tmp_path / "home"
    xdg = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert default_path(xdg, "linux", home) == tmp_path / "xdg" / "pygents" / "tui.toml"
    assert default_path({}, "linux", home) == home / ".config" / "pygents" / "tui.toml"
    # A relative XDG_CONFIG_HOME is to be ignored, says the XDG specification.
    relative = {"XDG_CONFIG_HOME": "relative"}
    assert default_path(relative, "linux", home) == home / ".config" / "pygents" / "tui.toml"


def test_the_default_file_is_in_the_platforms_own_place_on_macos_and_windows(
    tmp_path: Path,
) -> None:
    mac = default_path({}, "darwin", tmp_path)
    assert mac == tmp_path / "Library" / "Application Support" / "pygents" / "tui.toml"
    roaming = tmp_path / "Roaming"
    assert default_path({"APPDATA": str(roaming)}, "win32", tmp_path) == (
        roaming / "pygents" / "tui.toml"
    )


def test_an_absent_default_file_configures_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_config() == Config()


def test_the_default_file_is_read_when_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "pygents").mkdir()
    write(tmp_path / "pygents", "[listen]\ngrpc_port = 14317\n")
    assert load_config().grpc_port == 14317


def test_an_absent_file_named_with_config_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^config .*nowhere\.toml: no such file$"):
        load_config(tmp_path / "nowhere.toml")


# -- what it holds -----------------------------------------------------------------------


def test_the_guides_example_configuration_loads_with_every_key_it_documents() -> None:
    (example,) = [b for b in blocks(GUIDE) if b.language == "toml" and "[prices" in b.code]
    assert example.marker == "run by"
    config = _load_text(example.code)
    assert config.host == "127.0.0.1"
    assert (config.grpc_port, config.http_port, config.stale_after) == (4317, 4318, 10.0)
    assert (config.web_host, config.web_port, config.web_sessions) == ("127.0.0.1", 8000, 4)
    assert config.trace_url == "http://localhost:16686/trace/{trace_id}"
    assert config.theme == "nord"
    assert config.filter == "planner"
    assert config.export_dir is not None
    assert config.export_dir.name == "pygents-exports"
    assert config.prices["gpt-4o"] == Price(input=2.5, output=10.0, cache=1.25)
    assert config.prices["claude-sonnet-4"] == Price(input=3.0, output=15.0, cache=0.3)
    assert config.fleet_budget == Budget(tokens=2_000_000, cost=50.0)
    assert config.agent_budgets == {"planner": Budget(tokens=200_000, cost=None)}


def _load_text(text: str) -> Config:
    with tempfile.TemporaryDirectory() as folder:
        return load_config(write(Path(folder), text))


def test_the_result_is_frozen(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'theme = "nord"\n'))
    with pytest.raises(AttributeError):
        config.theme = "gruvbox"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.prices["x"] = Price(1, 1)  # type: ignore[index]


# -- hostile or mistaken files: one line naming the file and the key ---------------------


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("[listen]\ngrpc_port = -1\n", "listen.grpc_port", "must be a port, 0 to 65535, got -1"),
        ("[listen]\nhttp_port = 70000\n", "listen.http_port", "must be a port"),
        ('[listen]\ngrpc_port = "4317"\n', "listen.grpc_port", "got '4317'"),
        ("[listen]\nstale_after = 0\n", "listen.stale_after", "must be a positive number"),
        ("[listen]\nstale_after = nan\n", "listen.stale_after", "must be a positive number"),
        ("[web]\nport = 0\n", "web.port", "must be a port, 1 to 65535"),
        ("[web]\nsessions = 0\n", "web.sessions", "must be a positive whole number"),
        ("[web]\nsessions = 65\n", "web.sessions", "must be 1 to 64, got 65"),
        ("[listen]\ngrcp_port = 4317\n", "listen.grcp_port", "unknown key"),
        ("colour = 'red'\n", "colour", "unknown key (known here: listen, web,"),
        ("listen = 3\n", "listen", "must be a table, got 3"),
        ("trace_url = 3\n", "trace_url", "must be a non-empty string, got 3"),
        ('theme = "no-such-theme"\n', "theme", "no theme 'no-such-theme' (one of: "),
        ('[prices."gpt-4o"]\ninput = 1\n', "prices.gpt-4o", "needs both input and output"),
        ('[prices."gpt-4o"]\ninput = -1\noutput = 1\n', "prices.gpt-4o.input", "zero or more"),
        ("[prices.m]\ninput = 1\noutput = 1\nfree = true\n", "prices.m.free", "unknown key"),
        ("[budgets.fleet]\ntokens = 0\n", "budgets.fleet.tokens", "positive whole number"),
        ("[budgets.fleet]\ntokens = true\n", "budgets.fleet.tokens", "positive whole number"),
        ("[budgets.agents.a]\n", "budgets.agents.a", "needs tokens, cost, or both"),
        ("[budgets.team]\ncost = 1\n", "budgets.team", "unknown key"),
    ],
)
def test_a_wrong_value_or_key_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, text: str, key: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"config {path}: {key}: ")
    assert problem in message
    assert "\n" not in message


def test_a_file_that_is_not_toml_says_where_it_broke(tmp_path: Path) -> None:
    path = write(tmp_path, "[listen\ngrpc_port = 1\n")
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 1"):
        load_config(path)


def test_a_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tui.toml"
    path.write_bytes(b"theme = '\xff\xfe'\n")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(path)


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "tui.toml"
    with path.open("w") as file:  # valid TOML all along: only its size is wrong
        file.write("# " + "x" * (MAX_BYTES + 10) + "\n")
    with pytest.raises(ConfigError, match=f"larger than {MAX_BYTES} bytes"):
        load_config(path)


@pytest.mark.parametrize(
    "nested",
    ["x = " + "[" * 100_000, "x = " + "{a = " * 50_000],
    ids=["arrays", "inline tables"],
)
def test_a_deeply_nested_file_is_one_line_and_exits_2(
    tmp_path: Path, nested: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, nested + "\n")
    assert path.stat().st_size <= 400_000
    assert main(["demo", "--config", str(path)]) == 2
    assert (
        error_line(capsys)
        == f"pygents-tui: error: config {path}: nested too deeply; not a configuration"
    )


def test_a_folder_named_as_the_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(tmp_path)


@pytest.mark.parametrize("command", ["demo", "listen"])
def test_the_command_line_gives_the_files_error_in_one_line_and_exits_2(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "[listen]\ngrpc_port = -4317\n")
    assert main([command, "--config", str(path)]) == 2
    line = error_line(capsys)
    assert line.startswith(f"pygents-tui: error: config {path}: listen.grpc_port: ")


# -- the command line overrides the file -------------------------------------------------


def test_the_command_line_overrides_the_file_which_overrides_the_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[listen]\nhost = "127.0.0.2"\ngrpc_port = 14317\nstale_after = 9\n',
    )
    parser = build_parser()
    args = parser.parse_args(["listen", "--config", str(path), "--grpc-port", "24317"])
    apply_config(args, load_config(args.config))
    assert args.grpc_port == 24317  # the command line
    assert (args.host, args.stale_after) == ("127.0.0.2", 9.0)  # the file
    assert args.http_port == 4318  # the default
    args = parser.parse_args(["listen", "--http-port", "0", "--config", str(path)])
    apply_config(args, Config())
    assert (args.host, args.grpc_port, args.http_port) == ("127.0.0.1", 4317, 0)


def test_trace_url_comes_from_the_command_line_then_its_variable_then_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = Config(trace_url="http://file/{trace_id}")
    parser = build_parser()
    args = parser.parse_args(["demo", "--trace-url", "http://flag/{trace_id}"])
    monkeypatch.setenv("PYGENTS_TUI_TRACE_URL", "http://variable/{trace_id}")
    apply_config(args, file)
    assert args.trace_url == "http://flag/{trace_id}"
    args = parser.parse_args(["demo"])
    apply_config(args, file)
    assert args.trace_url == "http://variable/{trace_id}"
    monkeypatch.delenv("PYGENTS_TUI_TRACE_URL")
    args = parser.parse_args(["demo"])
    apply_config(args, file)
    assert args.trace_url == "http://file/{trace_id}"


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 that something listens on for the test."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def test_listen_takes_its_ports_from_the_file_and_the_command_line_wins(
    tmp_path: Path, taken_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both are seen by the receiver itself, before any screen: the file's HTTP port
    is in use (so the file was read), and ``--http-port 0`` turns it off again."""
    path = write(tmp_path, f"[listen]\ngrpc_port = 0\nhttp_port = {taken_port}\n")
    assert main(["listen", "--config", str(path)]) == 2
    assert f"127.0.0.1:{taken_port}" in error_line(capsys)
    assert main(["listen", "--config", str(path), "--http-port", "0"]) == 2
    assert "--grpc-port and --http-port are both 0" in error_line(capsys)


async def test_the_files_theme_and_export_folder_are_applied_to_the_dashboard(
    tmp_path: Path,
) -> None:
    app = Dashboard()
    async with app.run_test():
        Config(theme="nord", export_dir=tmp_path).configure(app)
        assert app.theme == "nord"
        assert app.export_dir == tmp_path
