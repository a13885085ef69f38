"""Every code block of the README and docs/ that a reader could run is run here, or
declared a fragment on purpose (see ``doc_blocks`` for the markers).

* a block in a language that runs carries a marker, and the marker is well formed;
* ``complete`` programs run as written, in a directory of their own, and exit 0; and
  every name they use is defined (a name used only in a hook or a tool that the run
  never reaches would otherwise pass, and fail the reader who copies the function);
* ``pytest`` modules pass under pytest, with the page's own ``conftest.py`` (the one
  of testing.md, which that page marks as run here);
* ``run by`` blocks name a test module that exists and reads that page;
* fragments give their reason, and a Python fragment still compiles (top-level
  ``await`` allowed: a fragment may be the body of a coroutine).
"""

from __future__ import annotations

import ast
import builtins
import re
import subprocess
import symtable
import sys
from pathlib import Path

import pytest
from doc_blocks import (
    ROOT,
    RUNNABLE,
    Block,
    blocks,
    named_files,
    pages,
    reader_environment,
    shell_commands,
)

ALL = [block for page in pages() for block in blocks(page)]
TIMEOUT = 60  # seconds: only bounds a program that would hang if broken
# Where a program sets up telemetry, it prints it: the suite has no collector.


def _of(marker: str) -> list[Block]:
    return [block for block in ALL if block.marker == marker]


def _ids(found: list[Block]) -> list[str]:
    return [block.where for block in found]


def test_every_block_that_could_run_is_run_or_marked_as_a_fragment() -> None:
    unmarked = [b.where for b in ALL if b.language in RUNNABLE and b.marker is None]
    assert not unmarked, (
        "mark each of these blocks (on the line before its fence) with "
        "<!-- example: complete -->, <!-- example: pytest -->, "
        "<!-- example: run by tests/...py --> or <!-- example: fragment: why -->: "
        f"{unmarked}"
    )


def test_every_marker_is_well_formed() -> None:
    wrong: list[str] = []
    for block in ALL:
        if block.marker is None:
            continue
        if block.marker in ("complete", "pytest") and block.language != "python":
            wrong.append(f"{block.where}: {block.marker} on a {block.language!r} block")
        if block.marker == "fragment" and not block.detail:
            wrong.append(f"{block.where}: a fragment must say why it does not run")
        if block.marker == "fragment" and block.file_name is not None:
            wrong.append(f"{block.where}: {block.file_name} is a program: run it")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("block", _of("run by"), ids=_ids(_of("run by")))
def test_a_block_run_elsewhere_names_a_test_module_that_reads_its_page(block: Block) -> None:
    runner = block.runner
    assert runner is not None, f"{block.where}: name the module that runs it"
    assert runner.is_file(), f"{block.where}: no module {block.detail}"
    assert block.page.name in runner.read_text(), f"{runner.name} never reads {block.page.name}"


@pytest.mark.parametrize("block", _of("complete"), ids=_ids(_of("complete")))
def test_a_complete_example_runs_as_written(block: Block, tmp_path: Path) -> None:
    script = tmp_path / (block.file_name or "example.py")
    script.write_text(block.code)
    done = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        env=reader_environment(OTEL_TRACES_EXPORTER="console"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{block.where}:\n{done.stderr}"
    assert "Traceback" not in done.stderr, f"{block.where}:\n{done.stderr}"


# What a module has without binding it: the builtins and the module's own attributes.
_GIVEN = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__"}


def undefined_names(code: str, where: str = "<block>") -> list[str]:
    """The global names ``code`` uses (at module level or in any function or class,
    run or not) that it never binds: no assignment, import, ``def`` or ``class`` at
    module level, nor a ``global`` statement's assignment. Sorted, each once."""
    module = symtable.symtable(code, where, "exec")
    bound = {s.get_name() for s in module.get_symbols() if s.is_assigned() or s.is_imported()}
    used: set[str] = set()

    def visit(table: symtable.SymbolTable) -> None:
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if table is module:
                if symbol.is_referenced():
                    used.add(name)
            elif symbol.is_global() and symbol.is_referenced():
                used.add(name)
            if symbol.is_declared_global() and symbol.is_assigned():
                bound.add(name)
        for child in table.get_children():
            visit(child)

    visit(module)
    return sorted(used - bound - _GIVEN)


def test_the_undefined_name_check_sees_names_in_functions_that_never_run() -> None:
    code = (
        "import asyncio\nfrom contextlib import aclosing\n\n"
        "async def alert(turn):\n    await pager.send(turn)\n\n"
        "class Box:\n    def get(self):\n        return [open_async(x) for x in self.items]\n\n"
        "async def main():\n    async with aclosing(stream()) as s:\n        print(s, Box)\n\n"
        "async def stream():\n    yield 1\n\nasyncio.run(main())\n"
    )
    assert undefined_names(code) == ["open_async", "pager"]


@pytest.mark.parametrize("block", _of("complete"), ids=_ids(_of("complete")))
def test_a_complete_example_uses_no_name_it_does_not_define(block: Block) -> None:
    missing = undefined_names(block.code, block.where)
    assert not missing, f"{block.where}: used but never defined or imported: {missing}"


@pytest.mark.parametrize("block", _of("pytest"), ids=_ids(_of("pytest")))
def test_a_test_example_passes_under_pytest(block: Block, tmp_path: Path) -> None:
    for name, code in named_files(block.page).items():
        (tmp_path / name).write_text(code)
    (tmp_path / "test_example.py").write_text(block.code)
    # What the page assumes of the reader's project: pytest-asyncio in auto mode.
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
        cwd=tmp_path,
        env=reader_environment(OTEL_TRACES_EXPORTER="console"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{block.where}:\n{done.stdout}\n{done.stderr}"
    assert re.search(r"\b[1-9]\d* passed\b", done.stdout), done.stdout


PYTHON_FRAGMENTS = [b for b in _of("fragment") if b.language == "python"]


@pytest.mark.parametrize("block", PYTHON_FRAGMENTS, ids=_ids(PYTHON_FRAGMENTS))
def test_a_python_fragment_still_compiles(block: Block) -> None:
    try:
        compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as error:
        pytest.fail(f"{block.where}: line {error.lineno}: {error.msg}")


# A command that runs a saved program with whatever ``python`` or ``pygents-tui`` is on
# PATH: after any VAR=value settings, not through ``uv run``.
_BARE = re.compile(r"^(?:\w+=\S*\s+)*(?:python3?\s+[\w./-]+\.py|pygents-tui\s+run)\b")


def test_a_page_that_runs_a_program_with_a_bare_python_also_says_how_without_an_environment() -> (
    None
):
    """``python clerk.py`` works only in an activated environment that has pygents; a
    newcomer in a folder of their own got ``ModuleNotFoundError``. A page that shows
    such a command also shows the form with the checkout's environment."""
    silent = [
        f"{page.relative_to(ROOT)}: {command!r}"
        for page in pages(examples=True)
        for command in shell_commands(page)
        if _BARE.match(command) and "uv run --project" not in page.read_text()
    ]
    assert not silent, "say how to run these without an activated environment: " + str(silent)


def test_the_pages_have_blocks_to_check() -> None:
    """A parser that found nothing would make every test above pass vacuously."""
    assert len(_of("complete")) >= 5
    assert {b.page.name for b in ALL} >= {"README.md", "scaling-out.md", "telemetry.md"}
    assert ROOT / "README.md" in pages()
