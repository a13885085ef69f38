"""The system programs the tests start are installed by ``.ci/run`` and named in the
README's install line, and a missing one is skipped (failed under ``CI=true``) with
the line that installs it: the rule of ``tests/system_programs.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_blocks import ROOT

from system_programs import PROGRAMS, install_line, needs, require


def test_ci_installs_the_package_of_every_program_the_tests_start() -> None:
    script = (ROOT / ".ci/run").read_text()
    checked = dict(re.findall(r"command -v (\S+) >/dev/null 2>&1 \|\| missing\+=\((\S+)\)", script))
    assert checked == PROGRAMS


def test_the_readme_names_every_package_in_its_apt_line() -> None:
    lines = re.findall(r"apt-get install ([^`;)\n]+)", (ROOT / "README.md").read_text())
    named = {word for line in lines for word in line.split()}
    assert set(PROGRAMS.values()) <= named, sorted(set(PROGRAMS.values()) - named)


def test_a_missing_program_skips_with_the_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require("redis-server", "redis-sentinel")
    assert str(skipped.value) == (
        "redis-server, redis-sentinel not installed "
        "(Debian/Ubuntu: apt-get install redis-server redis-sentinel)"
    )


def test_under_ci_a_missing_program_fails_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install bubblewrap\)"):
        require("bwrap")


def test_a_program_on_the_path_is_required_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "tmux"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    require("tmux")


def test_one_package_is_named_once_and_an_unknown_program_is_refused() -> None:
    assert install_line("redis-server", "redis-cli") == "apt-get install redis-server redis-tools"
    assert install_line("chromium", "chromium") == "apt-get install chromium"
    with pytest.raises(ValueError, match="not in PROGRAMS"):
        needs("docker")
