"""The code shown in README.md is the code that runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_readme_quick_start_runs_and_prints_what_it_says(tmp_path: Path) -> None:
    (block,) = [b for b in _python_blocks(ROOT / "README.md") if "asyncio.run(main())" in b]
    script = tmp_path / "quick_start.py"
    script.write_text(block)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.splitlines() == ["greet Hello, world!", "count 1", "count 2", "count 3"]


def _complete_examples(path: Path) -> list[str]:
    """Code blocks a page marks as complete programs (``<!-- example: complete -->``)."""
    return re.findall(
        r"<!-- example: complete -->\s*```python\n(.*?)```", path.read_text(), flags=re.DOTALL
    )


def test_getting_started_quick_start_runs_and_prints_what_the_page_says(tmp_path: Path) -> None:
    page = ROOT / "docs" / "getting-started.md"
    (block,) = _complete_examples(page)
    script = tmp_path / "getting_started.py"
    script.write_text(block)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    lines = result.stdout.splitlines()
    assert lines == ["greet Hello, world!", "count 1", "count 2", "count 3"]
    for line in lines:
        assert line in page.read_text()  # the page shows the output it promises
