"""The assistant's command line, offline (scripted model), printing its stream."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_plain_run_streams_the_conversation_and_prints_the_summary() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    result = subprocess.run(
        [sys.executable, "-m", "assistant", "--plain", "write two notes and count their words"],
        cwd=EXAMPLES,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = result.stdout
    assert "I'll write the notes first." in out  # streamed model text
    assert "[tool] write_file: wrote 22 characters to notes/tides.txt" in out
    assert "[tool] delegate_task: started t1: count the words of a short poem" in out
    assert "t2: count the words of a proverb" in out  # a sub-task's result came back
    assert out.rstrip().endswith("summary: notes written, words counted")
