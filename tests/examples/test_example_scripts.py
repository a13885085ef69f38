"""Every example in examples/ runs and prints what it promises (SPEC §4)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# Each script's expected output: regular expressions, each matched against one line.
EXPECTED: dict[str, list[str]] = {
    "quickstart": [
        r"^single turn: 5 completed$",
        r"^queued: \['add', 'countdown'\]$",
        r"^add -> 42$",
        r"^countdown -> 3$",
        r"^countdown -> 1$",
        r"^queue empty: True$",
    ],
    "streaming": [
        r"^quote: ACME 10\.00$",
        r"^full stream: completed 3 values$",
        r"^timed out after \d of 10 values: timeout$",
        r"^stopped early: cancelled output so far: \['BIG 1\.00', 'BIG 2\.00'\]$",
        r"^on_complete fired: \['cancelled'\]$",
    ],
    "tool_driven_flow": [
        r"^\[plan\] planned A-1, B-7$",
        r"^\[pack\] A-1: packed pear$",
        r"^\[label\] label printed for B-7$",
        r"^context queue: \['planning 2 orders'\]$",
        r"^- \[receipt-A-1\] packing receipt for order A-1$",
        r"^receipt A-1: \{'order': 'A-1', 'items': 2\}$",
    ],
    "multi_agent": [
        r"^writer: draft based on: pygents is mostly made of examples$",
        r"^reviewer queue depth: 1$",
        r"^reviewer: review: .* looks fine$",
        r"^branch queue: \['draft', 'research', 'draft'\]$",
        r"^writer-alt: draft based on: .*; branching is mostly made of examples$",
        r"^writer memory: 1 alt memory: 2$",
    ],
    "research_assistant": [
        r"^- \[bees\] Why bees dance to share food sources$",
        r"^ask: What does the moon do\? -> .* \(sources: tides, moon\)$",
        r"^ask: Do bees dance\? -> A waggle dance encodes direction\. \(sources: bees\)$",
        r"^ask: Any news about volcanoes\? -> I found nothing on that\. \(sources: none\)$",
        r"^recap: we talked about 3 things: ",
        r"^memory window: 6 of 6$",
    ],
    "hooks_and_tags": [
        r"^  before charge: ada for 99\.50$",
        r"^  #audit <- charge \(billing\)$",
        r"^  vip turn finished: invoice 1001: ada charged 99\.50 EUR$",
        r"^  crm watcher saw: crm updated for ada$",
        r"^  #audit <- update_crm \(audit\)$",
        r"^charge: invoice 1002: bob charged 5\.00 EUR$",
        r"^  done: send_email \[error\]$",
        r"^run stopped by: no email address for 'nobody'$",
        r"^agent\.on_error saw: \[\"send_email: no email address for 'nobody'\"\]$",
    ],
    "completion_check": [
        r"^collected 5$",
        r"^stopped with 12 coins \(target 10\)$",
        r"^4 turns left queued; amounts not collected: \[6, 7\]$",
        r"^second run: collected 6$",
        r"^turns left after the second run: 2$",
    ],
    "pause_resume": [
        r"^\[hook\] batcher paused with 2 turns waiting$",
        r"^is_paused: True \| running: True$",
        r"^queue while paused: \[3, 4, 99\]$",
        r"^still waiting after 50 ms: True$",
        r"^\[hook\] batcher resumed with 3 turns waiting$",
        r"^step 99 done$",
        r"^finished 5 steps; is_paused: False$",
    ],
    "serialize_resume": [
        r"^\[original\] translator paused with 3 turns queued$",
        r"^\[original\] paused=True queue=3 turns, memory=2 items$",
        r"^\[resumer\] restored translator: paused=True, queue=\['ship', 'parrot', 'glossary'\]",
        r"^\[resumer\] hooks restored by name: "
        r"\['log_turn_end', 'on_pause_note', 'on_resume_note'\]$",
        r"^\[resumer\] translator resumed with 3 turns queued$",
        r"^\[resumer\] translated parrot$",
        r"^\[resumer\] glossary of 4 entries$",
        r"^\[original\] second process finished",
    ],
}

# Examples tested another way than by running them as scripts.
IMPORTED = {"dashboard_embedded"}
# Examples with a test module of their own (they need a service, e.g. redis-server).
OWN_TESTS = {"scaling_out"}  # test_scaling_out.py


def run_example(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_and_prints_what_it_promises(name: str) -> None:
    result = run_example(name)
    assert result.returncode == 0, f"{name}.py failed:\n{result.stdout}\n{result.stderr}"
    lines = result.stdout.splitlines()
    missing = [p for p in EXPECTED[name] if not any(re.search(p, line) for line in lines)]
    assert not missing, f"{name}.py printed no line matching {missing}:\n{result.stdout}"


def test_serialize_resume_finishes_in_a_second_process() -> None:
    lines = run_example("serialize_resume").stdout.splitlines()
    assert any(line.startswith("[original]") for line in lines)
    # Everything after the save happens in the child, then the parent reports back.
    resumed = [line for line in lines if line.startswith("[resumer]")]
    assert resumed, "the second process printed nothing"
    assert lines.index(resumed[0]) > max(
        i for i, line in enumerate(lines) if line.startswith("[original] saved")
    )


async def test_dashboard_embedded_runs_headless() -> None:
    path = EXAMPLES / "dashboard_embedded.py"
    spec = importlib.util.spec_from_file_location("example_dashboard_embedded", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    summary = await module.demo_headless()

    assert summary["workload_error"] is None
    assert summary["return_code"] == 0
    assert summary["completed_turns"] == 8  # 2 fetches, 5 edits, 1 publish
    assert summary["failed_turns"] == 0
    assert summary["values_seen"] == 6  # 5 headlines and the front page
    assert summary["events_received"] > 0


def test_every_example_is_tested() -> None:
    scripts = {
        p.stem
        for p in EXAMPLES.glob("*.py")  # top level only: examples/otel/ has its own tests
    }
    covered = set(EXPECTED) | IMPORTED | OWN_TESTS
    assert scripts == covered, (
        f"untested examples: {sorted(scripts - covered)}; "
        f"tests for missing examples: {sorted(covered - scripts)}"
    )
