"""Every install command of the README, docs/ and examples/ is run as written in a fresh
virtual environment, or its block says why it is not run here (`install_commands`).

This module runs the wheel's lines: the blocks of README.md, docs/getting-started.md,
docs/dashboard.md, docs/telemetry.md and docs/guides/scaling-out.md that build this
checkout's wheel and install it with an extra (``uv build --wheel``, ``uv pip install
"dist/pygents-0.1.0-py3-none-any.whl[all]"``). Each runs, command by command and as
written, in a copy of the checkout (``uv build`` writes ``dist/`` there), in a fresh
environment made with ``uv venv`` and activated, as the pages' "the active
environment" means. A page that only installs sends its reader to getting-started.md
to build the wheel first, so that page's build line runs first. Then the environment
must hold this version of pygents with every requirement of the extras named. uv
installs them from its cache, as tests/packaging does: these run in every run of the
suite (some ten seconds), not under ``CI=true`` only.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_blocks import ROOT, Block, commands, pages
from install_commands import NOT_RUN, RUNNERS, Venv, install_blocks, is_install
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pygents import __version__

HERE = "tests/docs/test_install_commands.py"
ALL_PAGES = pages(examples=True)
OURS = [b for page in ALL_PAGES for b in install_blocks(page) if b.detail == HERE]
GETTING_STARTED = ROOT / "docs" / "getting-started.md"
BUILD = "uv build --wheel"
WHEEL = re.compile(r"dist/(?P<wheel>pygents-[^\s\"'\[]+\.whl)\[(?P<extras>[^\]]*)\]")
# What a copy of the checkout leaves out (as .ci/run's copy does).
LEFT_OUT = (".git", ".venv*", ".worktrees", "site", "dist", "build", "__pycache__", ".*_cache")


@pytest.mark.parametrize("page", ALL_PAGES, ids=[str(p.relative_to(ROOT)) for p in ALL_PAGES])
def test_every_install_command_in_a_code_block_is_run_or_says_why_not(page: Path) -> None:
    wrong = [
        f"{block.where}: {block.marker or 'no marker'}: {block.detail}"
        for block in install_blocks(page)
        if not (block.marker == "run by" and block.detail in RUNNERS)
        and not (block.marker == "fragment" and NOT_RUN in block.detail)
    ]
    assert not wrong, (
        "an install command must run as written: mark its block "
        f"<!-- example: run by ... --> with one of {sorted(RUNNERS)} (and make that "
        f"module run it), or <!-- example: fragment: {NOT_RUN}: why -->: {wrong}"
    )


def test_the_check_finds_the_install_blocks_this_module_runs() -> None:
    assert {b.page.name for b in OURS} >= {
        "README.md",
        "getting-started.md",
        "dashboard.md",
        "telemetry.md",
        "scaling-out.md",
    }


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of this checkout, where the pages' commands write ``dist/``."""
    copy = tmp_path_factory.mktemp("checkout") / "pygents"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(*LEFT_OUT), symlinks=True)
    yield copy
    shutil.rmtree(copy, ignore_errors=True)


def _built(checkout: Path, tmp_path: Path) -> None:
    """The wheel in ``checkout/dist``, built by getting-started.md's own line."""
    if any((checkout / "dist").glob("pygents-*.whl")):
        return
    lines = [c for b in install_blocks(GETTING_STARTED) for c in commands(b)]
    assert BUILD in lines, f"getting-started.md no longer says {BUILD!r}"
    done = Venv.create(tmp_path, uv=True).run(BUILD, checkout)
    assert done.returncode == 0, done.stderr


def _missing(venv: Venv, extras: list[str]) -> list[str]:
    """The requirements of pygents with ``extras`` that ``venv`` does not hold."""
    (site,) = venv.root.glob("lib/python*/site-packages")
    installed = {
        canonicalize_name(d.metadata["Name"]): d
        for d in importlib.metadata.distributions(path=[str(site)])
    }
    if "pygents" not in installed:
        return ["pygents"]
    assert installed["pygents"].version == __version__
    missing: list[str] = []
    wanted, seen = list(extras), set()
    while wanted:
        extra = wanted.pop()
        seen.add(extra)
        for text in installed["pygents"].requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or not requirement.marker.evaluate({"extra": extra}):
                continue
            name = canonicalize_name(requirement.name)
            if name == "pygents":  # an extra made of others: all = pygents[otel,tui,...]
                wanted += [e for e in requirement.extras if e not in seen]
            elif name not in installed:
                missing.append(f"{requirement} (for [{extra}])")
    return missing


@pytest.mark.parametrize("block", OURS, ids=[b.where for b in OURS])
def test_a_wheel_install_block_runs_as_written_in_a_fresh_environment(
    block: Block, checkout: Path, tmp_path: Path
) -> None:
    lines = commands(block)
    installs = [line for line in lines if is_install(line)]
    assert installs, f"{block.where}: no install command to run"
    if BUILD not in lines:
        _built(checkout, tmp_path / "build-env")
    venv = Venv.create(tmp_path / "venv", uv=True)
    for line in lines:
        done = venv.run(line, checkout)
        assert done.returncode == 0, f"{block.where}: {line}\n{done.stderr[-3000:]}"
    for line in installs:
        wheel = WHEEL.search(line)
        assert wheel is not None, f"{block.where}: {line} installs no wheel of dist/"
        extras = [e.strip() for e in wheel["extras"].split(",") if e.strip()]
        assert _missing(venv, extras) == [], f"{block.where}: {line}"
