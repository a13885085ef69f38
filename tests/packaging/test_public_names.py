"""The public names of the three packages: where they say they live, that pickle and
``copy`` still find them there, and that every package reports the one version."""

from __future__ import annotations

import copy
import importlib
import importlib.metadata
import pickle
import traceback
from enum import Enum
from types import FunctionType, ModuleType

import pytest

import pygents
import pygents.context
import pygents.hooks
import pygents.redis
import pygents_otel
import pygents_tui

PUBLIC_MODULES = (
    pygents,
    pygents.context,
    pygents.hooks,
    pygents.redis,
    pygents_otel,
    pygents_tui,
)

# Every public class and function (constants and registry instances have no module of
# their own: their type says where they come from).
NAMES = [
    pytest.param(getattr(module, name), id=f"{module.__name__}.{name}")
    for module in PUBLIC_MODULES
    for name in module.__all__
    if isinstance(getattr(module, name), (type, FunctionType))
]
EXCEPTIONS = [
    cls
    for module in (pygents, pygents.redis)
    for name in module.__all__
    if isinstance(cls := getattr(module, name), type)
    and issubclass(cls, BaseException)
    and cls is not pygents.redis.RemoteTurnError  # it carries an outcome: tested below
]
ENUM_MEMBERS = [
    pytest.param(member, id=f"{cls.__name__}.{member.name}")
    for name in pygents.__all__
    if isinstance(cls := getattr(pygents, name), type) and issubclass(cls, Enum)
    for member in cls
]


def is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


@pytest.mark.parametrize("value", NAMES)
def test_every_public_class_and_function_reports_a_public_module_that_holds_it(
    value: type | FunctionType,
) -> None:
    assert not is_private(value.__module__), value.__module__
    home = importlib.import_module(value.__module__)
    assert getattr(home, value.__qualname__) is value


@pytest.mark.parametrize("package", [pygents, pygents.redis, pygents_otel])
def test_names_defined_in_private_modules_report_their_package(package: ModuleType) -> None:
    # The packages whose code lives in private modules: everything reports the package.
    reported = {
        name: value.__module__
        for name in package.__all__
        if isinstance(value := getattr(package, name), (type, FunctionType))
    }
    assert reported
    assert set(reported.values()) == {package.__name__}, reported


def test_a_traceback_names_the_public_exception_class() -> None:
    error = pygents.TurnTimeoutError("turn 'fetch' ran past its timeout of 1s")
    (line,) = traceback.format_exception_only(error)
    assert line.startswith("pygents.TurnTimeoutError: turn 'fetch'")
    assert repr(pygents.TurnHook).startswith("<enum 'TurnHook'>")
    assert repr(pygents.Turn) == "<class 'pygents.Turn'>"


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: cls.__name__)
def test_public_exceptions_survive_pickle_and_copy(cls: type[BaseException]) -> None:
    error = cls("what went wrong, and how to fix it")
    for twin in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(twin) is cls
        assert twin.args == error.args


def test_a_remote_turn_error_survives_pickle_and_copy_with_its_outcome() -> None:
    outcome = pygents.redis.Outcome("turn-1", "clerk", pygents.StopReason.ERROR, error="boom")
    error = pygents.redis.RemoteTurnError("turn turn-1 on agent 'clerk' failed", outcome)
    for twin in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(twin) is pygents.redis.RemoteTurnError
        assert twin.args == error.args
        assert twin.outcome == outcome


@pytest.mark.parametrize("member", ENUM_MEMBERS)
def test_public_enum_members_survive_pickle_and_copy(member: Enum) -> None:
    assert pickle.loads(pickle.dumps(member)) is member
    assert copy.copy(member) is member
    assert copy.deepcopy(member) is member


def test_every_package_reports_the_version_of_the_installed_distribution() -> None:
    installed = importlib.metadata.version("pygents")
    assert pygents.__version__ == installed
    assert pygents_otel.__version__ == installed
    assert pygents_tui.__version__ == installed
    # The instrumentor asks for the pygents it ships with.
    dependencies = pygents_otel.PygentsInstrumentor().instrumentation_dependencies()
    assert tuple(dependencies) == (f"pygents >= {installed}",)
