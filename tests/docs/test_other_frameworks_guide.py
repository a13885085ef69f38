"""The other-frameworks guide's programs, saved and run the way the guide says, each
exporting to a real ``listen`` receiver on 127.0.0.1 (docs/guides/other-frameworks.md).

Each named block (``# weather_pydantic_ai.py``, ...) is written to a folder of its own
and run with only the variables the guide sets (``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_SERVICE_NAME``); the Agents SDK's programs also get ``OPENAI_BASE_URL`` of the
frameworks' harness's fake Chat Completions server (tests/frameworks/harness.py), so
nothing leaves the machine. Each must exit 0 and its agent must reach the receiver's
model as a row of its service.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from doc_blocks import ROOT, named_files, reader_environment

from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver

_FRAMEWORKS = str(ROOT / "tests" / "frameworks")
if _FRAMEWORKS not in sys.path:
    sys.path.append(_FRAMEWORKS)

import harness  # noqa: E402 - found through the line above

GUIDE = ROOT / "docs" / "guides" / "other-frameworks.md"
PROGRAMS = {
    # program: (the agent names whose rows it makes, whether it talks to the fake OpenAI)
    "weather_pydantic_ai.py": ({"weather_agent"}, False),
    "weather_agents_otel.py": ({"triage", "specialist"}, True),
    "weather_agents_openinference.py": ({"triage", "specialist"}, True),
}


def test_the_guide_shows_one_program_per_framework() -> None:
    assert set(named_files(GUIDE)) == set(PROGRAMS)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
async def test_a_program_of_the_guide_shows_its_agents_in_listen(
    program: str, tmp_path: Path
) -> None:
    (tmp_path / program).write_text(named_files(GUIDE)[program])
    names, openai = PROGRAMS[program]
    service = program.removesuffix(".py").replace("_", "-")
    fleet = FleetModel(stale_after=3600.0)
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        settings = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": str(receiver.http_endpoint),
            "OTEL_SERVICE_NAME": service,
        }
        with harness.fake_chat_completions() as base_url:
            if openai:
                settings |= {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "offline"}
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                program,
                cwd=tmp_path,
                env=reader_environment(**settings),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                stdin=asyncio.subprocess.DEVNULL,
            )
            async with asyncio.timeout(120):
                out, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        assert out.strip(), "the program prints its agent's answer"
        fleet.store.drain()
    rows = {row.name for row in fleet.store.agent_rows() if service in row.label}
    assert names <= rows, (rows, err.decode()[-2000:])
