"""The version floors: declared for every dependency, and checked by ``.ci/run`` in an
environment resolved to them (``floors.py`` says when a floor was not what ran)."""

from __future__ import annotations

from floors import checked_floors, floor_of, requirements, unproven, workspace
from packaging.version import Version
from wheel_envs import ROOT

PROJECTS = workspace()


def test_every_dependency_of_the_workspace_and_of_the_dev_group_declares_a_floor() -> None:
    missing = [str(r) for r in requirements(PROJECTS) if floor_of(r) is None]
    assert missing == []


def test_the_floors_the_issue_found_wrong_are_raised() -> None:
    """Textual 0.80 and OpenTelemetry 1.27 fail the tests; see the run of .ci/run."""
    floors = checked_floors(PROJECTS)
    assert floors["textual"] >= Version("6.0")
    assert floors["opentelemetry-api"] >= Version("1.43")
    assert floors["opentelemetry-sdk"] == floors["opentelemetry-api"]
    assert floors["opentelemetry-proto"] == floors["opentelemetry-api"]


def test_the_floor_check_names_a_floor_another_requirement_lifted() -> None:
    floors = {"opentelemetry-api": Version("1.43"), "textual": Version("6.0")}
    held = {"opentelemetry-api": "1.45.0", "textual": "6.0.0"}
    (problem,) = unproven(floors, held.get)
    assert problem.startswith("opentelemetry-api: resolved to 1.45.0, not its floor 1.43")


def test_the_floor_check_accepts_an_environment_that_holds_every_floor() -> None:
    floors = {"redis": Version("5.0.1"), "textual": Version("6")}
    assert unproven(floors, {"redis": "5.0.1", "textual": "6.0.0"}.get) == []
    assert unproven(floors, {"redis": "5.0.1"}.get) == ["textual: not installed (floor 6)"]


def test_ci_runs_the_otel_and_tui_tests_at_the_lowest_versions_in_a_copy() -> None:
    """The step must not rewrite the real uv.lock (lowest-direct re-locks)."""
    script = (ROOT / ".ci" / "run").read_text()
    assert "uv sync --resolution lowest-direct" in script.replace('"${UV[@]}"', "uv")
    assert "tests/packaging/floors.py" in script
    assert "tests/otel tests/tui" in script
    assert "examples/assistant/tests/test_libraries.py" in script


def test_the_lowest_versions_step_makes_every_warning_an_error() -> None:
    """It once downgraded unraisable warnings (seven unclosed sockets, the event loops
    pytest-asyncio 0.24 left open) to a printed line; they fail it now, as they fail
    the run at the locked versions."""
    script = (ROOT / ".ci" / "run").read_text()
    lowest = script[script.index("--resolution lowest-direct") :]
    assert "-W" not in lowest.split()
    assert "PytestUnraisableExceptionWarning" not in lowest
    assert "tests/packaging/test_event_loops.py" in lowest
    assert checked_floors(PROJECTS)["pytest-asyncio"] >= Version("1.4")


def test_the_workspace_is_the_library_and_the_example_assistant() -> None:
    assert [project["project"]["name"] for project in PROJECTS] == ["pygents", "pygents-assistant"]


def test_the_assistant_projects_floors_are_checked_by_the_lowest_run() -> None:
    """They were proved through the library's ``assistant`` extra; the member's own
    dependencies carry them now. The dev group's frameworks (tests/frameworks, issue
    32) lifted four of them in the lowest run, so they were raised to what it installs:
    openai 3.19 (the OpenAI Agents SDK needs openai 3, and openai 3 before 3.19 fails to
    import beside aiohttp < 3.10), httpx 0.25.1, util-genai 1.0b0, jsonschema 4.20."""
    floors = checked_floors(PROJECTS)
    assert floors["openai"] == Version("3.19")
    assert floors["opentelemetry-instrumentation-openai-v2"] == Version("2.4b0")
    assert floors["opentelemetry-util-genai"] == Version("1.0b0")
    assert floors["httpx"] == Version("0.25.1")
    assert floors["docker"] == Version("7.1")
    assert floors["jsonschema"] == Version("4.20")


def test_the_workspaces_own_projects_are_not_third_party_requirements() -> None:
    """The dev group names the assistant, and the assistant names pygents, without a
    floor: uv takes both from the checkout."""
    names = {requirement.name for requirement in requirements(PROJECTS)}
    assert not names & {"pygents", "pygents-assistant"}
