"""The quick starts of README.md and docs/getting-started.md print what they say.

``test_code_blocks`` runs every complete example; these two also check the output
line by line, since they are the first code a newcomer runs.
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
    (block,) = _complete(page)
    lines = _run(block, tmp_path / "getting_started.py")
    assert lines == EXPECTED
    for line in lines:
        assert line in page.read_text()  # the page shows the output it promises
