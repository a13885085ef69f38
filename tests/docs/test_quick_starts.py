"""The quick starts of README.md and docs/getting-started.md print what they say.

``test_code_blocks`` runs every complete example; these also check the output line by
line, since they are the first code a newcomer runs (the failing-turn example of
getting-started.md too: what it prints is how the page explains failures).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from doc_blocks import ROOT, Block, blocks

EXPECTED = ["greet Hello, world!", "count 1", "count 2", "count 3"]


def _complete(page: Path) -> list[Block]:
    return [block for block in blocks(page) if block.marker == "complete"]


def _run(block: Block, script: Path) -> list[str]:
    script.write_text(block.code)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    return result.stdout.splitlines()


def test_readme_quick_start_runs_and_prints_what_it_says(tmp_path: Path) -> None:
    (block,) = [b for b in _complete(ROOT / "README.md") if "asyncio.run(main())" in b.code]
    assert _run(block, tmp_path / "quick_start.py") == EXPECTED


def test_getting_started_quick_start_runs_and_prints_what_the_page_says(tmp_path: Path) -> None:
    page = ROOT / "docs" / "getting-started.md"
    (block,) = [b for b in _complete(page) if 'Agent("greeter"' in b.code]
    lines = _run(block, tmp_path / "getting_started.py")
    assert lines == EXPECTED
    for line in lines:
        assert line in page.read_text()  # the page shows the output it promises


def test_the_failing_turns_example_carries_on_past_an_error_and_a_timeout(tmp_path: Path) -> None:
    page = ROOT / "docs" / "getting-started.md"
    (block,) = [b for b in _complete(page) if "TaskGroup" in b.code]
    (shown,) = [
        b.code.splitlines()
        for b in blocks(page)
        if b.language == "text" and b.code.startswith("parser parse 1")
    ]
    lines = _run(block, tmp_path / "failing_turns.py")
    # The two agents run at once: each one's lines keep their order, not the mix.
    for agent in ("parser", "waiter"):
        mine = [line for line in lines if line.startswith(f"{agent} ")]
        assert mine == [line for line in shown if line.startswith(f"{agent} ")]
    assert sorted(lines) == sorted(shown)
    assert len(shown) == 5
