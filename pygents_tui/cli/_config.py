"""``pygents-tui``'s configuration file: the settings an operator would otherwise type
on every command line, read once, validated whole, and then overridden by the command
line.

The file is TOML (read with the standard library's ``tomllib``). It lives in the
user's configuration directory unless ``--config PATH`` names another; a missing file
at the default place is fine (nothing is configured), a missing file that was named
is an error. Anything wrong in it (not TOML, a key nobody reads, a value of the wrong
type or out of range, a file far too big to be a configuration) is one line naming
the file and the key, and exit status 2: a typo in a key must not silently leave a
setting at its default, so unknown keys are errors, not warnings.

Prices, budgets, the stuck-work thresholds and the default filter are read and checked
now and kept in `Config` for the dashboard's parts that will use them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pygents_tui.state._prices import Budget, Meters, Price

if TYPE_CHECKING:
    from pygents_tui.ui.app import Dashboard

__all__ = [
    "MAX_BYTES",
    "Budget",
    "Config",
    "ConfigError",
    "Price",
    "add_config_argument",
    "apply_config",
    "default_path",
    "load_config",
]

MAX_BYTES = 1 << 20
"""A configuration is a few hundred bytes; anything past a mebibyte is refused
before it is parsed, so a wrong path (a log, a disk image) costs no memory."""


class ConfigError(ValueError):
    """The configuration file cannot be used; the message is one line naming the file
    and, where there is one, the key."""


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Config:
    """The file's settings; ``None`` is "not set here" (the command line's value or
    the built-in default applies)."""

    path: Path | None = None  # the file read, if one was
    host: str | None = None
    grpc_port: int | None = None
    http_port: int | None = None
    stale_after: float | None = None
    web_host: str | None = None
    web_port: int | None = None
    web_sessions: int | None = None
    trace_url: str | None = None
    theme: str | None = None
    export_dir: Path | None = None
    filter: str | None = None
    prices: Mapping[str, Price] = field(default_factory=_empty)
    fleet_budget: Budget | None = None
    agent_budgets: Mapping[str, Budget] = field(default_factory=_empty)
    stuck_factor: float | None = None  # [stuck] factor: times a tool's recent p95
    stuck_silence: float | None = None  # [stuck] silence: seconds a stream may say nothing

    def configure(self, app: Dashboard) -> None:
        """Apply to a dashboard what has no command-line argument: its theme, the
        folder its exports go to, and its store's prices, budgets and stuck-work
        thresholds."""
        app.view.configure_meters(
            Meters(
                prices=self.prices,
                fleet_budget=self.fleet_budget,
                agent_budgets=self.agent_budgets,
                stuck_factor=self.stuck_factor,
                stuck_silence=self.stuck_silence,
            )
        )
        if self.theme is not None:
            app.theme = self.theme
        if self.export_dir is not None:
            app.export_dir = self.export_dir


def default_path(
    environ: Mapping[str, str] | None = None, platform: str | None = None, home: Path | None = None
) -> Path:
    """Where the configuration is looked for when ``--config`` is not given: the
    platform's place for a user's settings (standard library only)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    if platform == "win32":
        base = Path(environ["APPDATA"]) if environ.get("APPDATA") else home / "AppData/Roaming"
    elif platform == "darwin":
        base = home / "Library" / "Application Support"
    else:  # XDG: an empty or relative XDG_CONFIG_HOME is to be ignored
        xdg = environ.get("XDG_CONFIG_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else home / ".config"
    return base / "pygents" / "tui.toml"


def load_config(path: str | Path | None = None) -> Config:
    """The configuration in ``path`` (``None``: the default place, where a missing
    file means nothing is configured). Raises `ConfigError`."""
    named = path is not None
    where = Path(path) if path is not None else default_path()
    try:
        with where.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        if named:
            raise ConfigError(f"config {where}: no such file") from None
        return Config()
    except OSError as error:
        raise ConfigError(f"config {where}: cannot be read: {error.strerror or error}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"config {where}: larger than {MAX_BYTES} bytes; not a configuration")
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config {where}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config {where}: not valid TOML: {error}") from None
    except RecursionError:
        # tomllib parses arrays and inline tables recursively: a few hundred levels of
        # ``[[[…`` (a few hundred bytes) exhaust the interpreter's stack. No
        # configuration nests more than two deep, so this is not one.
        raise ConfigError(f"config {where}: nested too deeply; not a configuration") from None
    return _Reader(where).config(document)


class _Reader:
    """Checks one parsed document key by key; every error names the file and key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"config {self.path}: {key}: {problem}")

    def table(self, data: Any, key: str, allowed: tuple[str, ...] | None) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(key, f"must be a table, got {_kind(data)}")
        if allowed is not None:
            for name in data:
                if name not in allowed:
                    where = f"{key}.{name}" if key else name
                    raise self.fail(where, f"unknown key (known here: {', '.join(allowed)})")
        return data

    def text(self, data: Mapping[str, Any], key: str, name: str) -> str | None:
        value = data.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or not value or "\x00" in value:
            raise self.fail(_dotted(key, name), f"must be a non-empty string, got {_kind(value)}")
        return value

    def port(self, data: Mapping[str, Any], key: str, name: str, off: bool) -> int | None:
        value = data.get(name)
        if value is None:
            return None
        low = 0 if off else 1
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 65535:
            raise self.fail(_dotted(key, name), f"must be a port, {low} to 65535, got {value!r}")
        return value

    def number(
        self, data: Mapping[str, Any], key: str, name: str, *, positive: bool = False
    ) -> float | None:
        value = data.get(name)
        if value is None:
            return None
        bad = not isinstance(value, int | float) or isinstance(value, bool)
        if bad or not math.isfinite(value) or value < 0 or (positive and value == 0):
            least = "positive" if positive else "zero or more"
            raise self.fail(_dotted(key, name), f"must be a {least} number, got {value!r}")
        return float(value)

    def count(self, data: Mapping[str, Any], key: str, name: str) -> int | None:
        value = data.get(name)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise self.fail(_dotted(key, name), f"must be a positive whole number, got {value!r}")
        return value

    def config(self, document: dict[str, Any]) -> Config:
        top = self.table(document, "", _TOP)
        listen = self.table(top.get("listen", {}), "listen", _LISTEN)
        web = self.table(top.get("web", {}), "web", _WEB)
        stuck = self.table(top.get("stuck", {}), "stuck", _STUCK)
        factor = self.number(stuck, "stuck", "factor", positive=True)
        if factor is not None and factor < 1:
            # Below 1 a turn would be "stuck" before reaching its tool's usual time.
            raise self.fail("stuck.factor", f"must be 1 or more, got {factor!r}")
        theme = self.text(top, "", "theme")
        if theme is not None and theme not in _themes():
            raise self.fail("theme", f"no theme {theme!r} (one of: {', '.join(_themes())})")
        export_dir = self.text(top, "", "export_dir")
        sessions = self.count(web, "web", "sessions")
        if sessions is not None and sessions > 64:  # as --web-sessions: each is a process
            raise self.fail("web.sessions", f"must be 1 to 64, got {sessions!r}")
        return Config(
            path=self.path,
            host=self.text(listen, "listen", "host"),
            grpc_port=self.port(listen, "listen", "grpc_port", off=True),
            http_port=self.port(listen, "listen", "http_port", off=True),
            stale_after=self.number(listen, "listen", "stale_after", positive=True),
            web_host=self.text(web, "web", "host"),
            web_port=self.port(web, "web", "port", off=False),
            web_sessions=sessions,
            trace_url=self.text(top, "", "trace_url"),
            theme=theme,
            export_dir=Path(export_dir).expanduser() if export_dir is not None else None,
            filter=self.text(top, "", "filter"),
            prices=MappingProxyType(self.prices(top.get("prices", {}))),
            **self.budgets(top.get("budgets", {})),
            stuck_factor=factor,
            stuck_silence=self.number(stuck, "stuck", "silence", positive=True),
        )

    def prices(self, data: Any) -> dict[str, Price]:
        found: dict[str, Price] = {}
        for model, entry in self.table(data, "prices", None).items():
            key = f"prices.{model}"
            entry = self.table(entry, key, _PRICE)
            input_, output = self.number(entry, key, "input"), self.number(entry, key, "output")
            if input_ is None or output is None:
                raise self.fail(key, "needs both input and output (per 1M tokens)")
            cache = self.number(entry, key, "cache") or 0.0
            found[model] = Price(input_, output, cache, self.number(entry, key, "cache_write"))
        return found

    def budget(self, data: Any, key: str) -> Budget:
        entry = self.table(data, key, _BUDGET)
        budget = Budget(self.count(entry, key, "tokens"), self.number(entry, key, "cost"))
        if budget.tokens is None and budget.cost is None:
            raise self.fail(key, "needs tokens, cost, or both")
        return budget

    def budgets(self, data: Any) -> dict[str, Any]:
        table = self.table(data, "budgets", ("fleet", "agents"))
        agents = self.table(table.get("agents", {}), "budgets.agents", None)
        fleet = table.get("fleet")
        return {
            "fleet_budget": self.budget(fleet, "budgets.fleet") if fleet is not None else None,
            "agent_budgets": MappingProxyType(
                {
                    name: self.budget(entry, f"budgets.agents.{name}")
                    for name, entry in agents.items()
                }
            ),
        }


_TOP = (
    "listen",
    "web",
    "trace_url",
    "theme",
    "export_dir",
    "filter",
    "prices",
    "budgets",
    "stuck",
)
_LISTEN = ("host", "grpc_port", "http_port", "stale_after")
_WEB = ("host", "port", "sessions")
_PRICE = ("input", "output", "cache", "cache_write")
_BUDGET = ("tokens", "cost")
_STUCK = ("factor", "silence")


def _themes() -> tuple[str, ...]:
    """Textual's built-in themes, the ones a name in the file can pick."""
    from textual.theme import BUILTIN_THEMES  # only once a theme is named: Textual is big

    return tuple(sorted(BUILTIN_THEMES))


def _dotted(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _kind(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"a {type(value).__name__}"


# -- the command line ------------------------------------------------------------------

_FROM_FILE: dict[str, tuple[Callable[[Config], object], object]] = {
    # argument: (its value in the file, the built-in default)
    "host": (lambda c: c.host, "127.0.0.1"),
    "grpc_port": (lambda c: c.grpc_port, 4317),
    "http_port": (lambda c: c.http_port, 4318),
    "stale_after": (lambda c: c.stale_after, 5.0),
    "web_host": (lambda c: c.web_host, "127.0.0.1"),
    "web_port": (lambda c: c.web_port, 8000),
    "web_sessions": (lambda c: c.web_sessions, 4),
    "trace_url": (lambda c: os.environ.get("PYGENTS_TUI_TRACE_URL") or c.trace_url, None),
}
"""The arguments a file can set. Their parsers default to ``None`` ("not given"), so
that the order is: the command line, then (for the trace URL) its environment
variable, then the file, then the built-in default."""


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """``--config PATH`` on a subcommand."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=None,
        help=f"settings file (TOML; default: {default_path()}, if it exists)",
    )


def apply_config(args: argparse.Namespace, config: Config) -> None:
    """Fill in what the command line left unset from ``config``, then the defaults;
    ``args.settings`` keeps the whole `Config` for what has no argument."""
    for name, (from_file, default) in _FROM_FILE.items():
        if hasattr(args, name) and getattr(args, name) is None:
            value = from_file(config)
            setattr(args, name, default if value is None else value)
    args.settings = config
