"""The other-frameworks guide (docs/guides/other-frameworks.md), done as its reader does
it: its programs exporting to a real ``listen`` receiver on 127.0.0.1, the Agents SDK's
talking to the fake Chat Completions server the guide ships
(examples/frameworks/fake_chat_completions.py, started as a process, as the guide says).

The page is read by section (``## ...``): a section with programs (the Python blocks
that name their file) says what to install (``pip install ...``) and how to run each
one (``python weather_….py``). The programs get the variables the page's ``export``
lines set, with the receiver's and the fake server's addresses in place of the
defaults the page gives (checked to be ``listen``'s and the server's own).

* In this environment (``uv run`` has every framework of the page), each program must
  exit 0, its agents must reach the receiver's model as rows with no failed run, and
  the page's picture of it (scripts/screenshots.py) must show what it gives now: the
  status line and the agents' rows.
* Under ``CI=true`` only (it installs from the package index): each section's install
  lines run as written in a fresh ``python -m venv`` environment, activated, and the
  section's programs run there the same way. Adding a framework to the page is adding a
  section; its program's agents go in `PROGRAMS`, its picture in the script's ``SHOTS``.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from doc_blocks import ROOT, Block, blocks, commands, named_files
from install_commands import SHELL, Venv, in_ci_only, is_install

from pygents_tui.listen import Receiver

GUIDE = ROOT / "docs" / "guides" / "other-frameworks.md"
FAKE = ROOT / "examples" / "frameworks" / "fake_chat_completions.py"
HERE = "tests/docs/test_other_frameworks_guide.py"
PROGRAMS = {
    # program: the agent names whose rows it makes
    "weather_pydantic_ai.py": {"weather_agent"},
    "weather_agents_otel.py": {"triage", "specialist"},
    "weather_agents_openinference.py": {"triage", "specialist"},
}


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


screenshots = _load(ROOT / "scripts" / "screenshots.py")
fake = sys.modules["fake_chat_completions"]  # the script imports the shipped server


def _sections(page: Path) -> dict[str, list[Block]]:
    """The blocks of ``page`` by the ``## `` heading they are under ("" before the first)."""
    lines = page.read_text().split("\n")
    found = blocks(page)
    fenced = {n for b in found for n in range(b.line, b.line + b.code.count("\n") + 1)}
    headings = [
        (number, line.removeprefix("## ").strip())
        for number, line in enumerate(lines, 1)
        if line.startswith("## ") and number not in fenced
    ]
    sections: dict[str, list[Block]] = {"": []}
    for block in found:
        title = next((t for n, t in reversed(headings) if n < block.line), "")
        sections.setdefault(title, []).append(block)
    return sections


SECTIONS = {
    title: section
    for title, section in _sections(GUIDE).items()
    if any(b.file_name in PROGRAMS for b in section)
}


def _runs(section: list[Block]) -> list[str]:
    """The programs a section tells its reader to run, as ``python NAME.py``."""
    return [
        command.removeprefix("python ")
        for block in section
        for command in commands(block)
        if re.fullmatch(r"python [\w.-]+\.py", command)
    ]


def _installs(section: list[Block]) -> list[str]:
    return [c for b in section if b.language in SHELL for c in commands(b) if is_install(c)]


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    """The guide's fake Chat Completions server, a process of its own as the guide starts
    it (on a free port); its base URL. Ctrl-C stops it, with exit status 0."""
    process = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)
    first = process.stdout.readline() if ready else ""
    found = re.search(r"export OPENAI_BASE_URL=(\S+)", first)
    if found is None:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"the fake server did not start: {first!r} {err}")
    yield found[1]
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


def test_the_guide_shows_one_program_per_framework_and_a_picture_of_each() -> None:
    assert set(named_files(GUIDE)) == set(PROGRAMS) == set(screenshots.SHOTS)
    for name in screenshots.SHOTS.values():
        assert f"../images/other-frameworks-{name}.svg" in GUIDE.read_text()


@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_a_section_with_a_program_says_what_to_install_and_how_to_run_it(title: str) -> None:
    section = SECTIONS[title]
    assert _installs(section), f"{title}: no install line"
    programs = [b.file_name for b in section if b.file_name in PROGRAMS]
    assert sorted(_runs(section)) == sorted(programs), f"{title}: run each program"
    for block in section:
        if block.language in SHELL and (is_install(block.code) or _runs([block])):
            assert (block.marker, block.detail) == ("run by", HERE), block.where


def test_the_guide_sends_its_programs_to_listen_and_starts_the_fake_server_it_ships() -> None:
    settings = screenshots.guide_settings()
    http_port = inspect.signature(Receiver).parameters["http_port"].default
    assert settings[screenshots.ENDPOINT] == f"http://127.0.0.1:{http_port}"
    assert settings[screenshots.BASE_URL] == f"http://127.0.0.1:{fake.PORT}/v1"
    assert settings.get("OPENAI_API_KEY")
    assert settings.get("OTEL_SERVICE_NAME")
    started = f"uv run python {FAKE.relative_to(ROOT)}"
    assert started in [c for b in blocks(GUIDE) for c in commands(b)]


def _agents(ran: Any, program: str) -> None:
    """``ran`` (a `screenshots.Ran`) ended well and shows ``program``'s agents."""
    assert ran.returncode == 0, ran.err[-3000:]
    assert ran.out.strip(), "the program prints its agent's answer"
    rows = ran.fleet.store.agent_rows()
    assert PROGRAMS[program] <= {row.name for row in rows}, (rows, ran.err[-2000:])
    assert [(row.name, row.last_error) for row in rows if row.failed] == []


_INSTANCE = re.compile(r"@[0-9a-f]{6,}")  # the SDK's service.instance.id, new every process
_SPARKLINE = re.compile(r"[▁▂▃▄▅▆▇█\s]+$")


def _top(svg: str) -> list[str]:
    """A screenshot's lines above the panels' tabs (title, status line, banner, the
    agents' table), without what changes from run to run: the instance ids, the
    sparklines."""
    lines = screenshots.screen_text(svg)
    end = next(i for i, line in enumerate(lines) if line.startswith("Queue"))
    return [_SPARKLINE.sub("", _INSTANCE.sub("@…", line)) for line in lines[:end] if line]


@pytest.mark.parametrize("program", sorted(PROGRAMS))
async def test_a_program_of_the_guide_shows_its_agents_in_listen_as_its_picture_does(
    program: str, fake_server: str, tmp_path: Path
) -> None:
    ran = await screenshots.run_program(program, sys.executable, fake_server, cwd=tmp_path)
    _agents(ran, program)
    name = screenshots.SHOTS[program]
    now = _top(await screenshots.shoot(ran.fleet, name))
    picture = _top((screenshots.IMAGES / f"other-frameworks-{name}.svg").read_text())
    assert picture == now, (
        f"docs/images/other-frameworks-{name}.svg shows another scene than {program} gives "
        "now: run `uv run python scripts/screenshots.py`, look at the pictures, commit them"
    )


@in_ci_only(HERE)
@pytest.mark.parametrize("title", sorted(SECTIONS))
async def test_a_section_installs_as_written_in_a_fresh_venv_and_its_programs_show_their_agents(
    title: str, fake_server: str, tmp_path: Path
) -> None:
    section = SECTIONS[title]
    installs, runs = _installs(section), _runs(section)
    assert installs, f"{title}: no install line"
    assert runs, f"{title}: no program to run"
    venv = Venv.create(tmp_path / ".venv")
    for line in installs:
        done = venv.run(line, tmp_path)
        assert done.returncode == 0, f"{line}\n{done.stderr[-3000:]}"
    for program in runs:
        ran = await screenshots.run_program(
            program, venv.python, fake_server, cwd=tmp_path, env=venv.environment()
        )
        _agents(ran, program)
