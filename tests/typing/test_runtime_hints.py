"""``typing.get_type_hints`` works on every public class of pygents, and its ``__init__``.

Public classes report ``__module__ = "pygents"`` (see ``pygents/_public.py``), while
their annotations name things imported in the private module that defines them;
libraries that read hints at run time (pydantic, cattrs, FastAPI's dependency
injection, documentation tools) must still resolve them.
"""

from __future__ import annotations

import typing
from types import ModuleType

import pytest

import pygents
import pygents.context
import pygents.hooks
import pygents.testing

PUBLIC_MODULES: tuple[ModuleType, ...] = (
    pygents,
    pygents.hooks,
    pygents.context,
    pygents.testing,
)
CLASSES = sorted(
    {
        (module.__name__, name): value
        for module in PUBLIC_MODULES
        for name in module.__all__
        if isinstance(value := getattr(module, name), type)
    }.items()
)


def test_the_public_modules_export_classes_whose_hints_read_private_names() -> None:
    names = {name for (_, name), _ in CLASSES}
    assert {"ToolMetadata", "Hook", "Subscriber", "ContextItem", "RecordingSubscriber"} <= names
    assert pygents.ToolMetadata.__module__ == "pygents"  # why the names must be found elsewhere


@pytest.mark.parametrize(("where", "cls"), CLASSES, ids=[f"{m}.{n}" for (m, n), _ in CLASSES])
def test_get_type_hints_resolves_every_public_class_and_its_init(
    where: tuple[str, str], cls: type
) -> None:
    for include_extras in (False, True):
        hints = typing.get_type_hints(cls, include_extras=include_extras)
        assert all(not isinstance(v, (str, typing.ForwardRef)) for v in hints.values()), where
        typing.get_type_hints(cls.__init__, include_extras=include_extras)


def test_a_published_classs_hints_are_the_objects_its_module_means() -> None:
    hints = typing.get_type_hints(pygents.ToolMetadata)
    assert hints["name"] is str
    assert hints["input_schema"] == dict[str, typing.Any]
