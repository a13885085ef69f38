"""Tests for the JSON-schema-like ``tool.metadata.input_schema`` / ``output_schema``
inferred from type hints (SPEC §1.2).

This module deliberately does *not* use ``from __future__ import annotations``: the
classes used as annotations are defined inside the tests, so annotations must be real
objects. String annotations are covered by their own test through ``define()``.
"""

import enum
import itertools
import json
import textwrap
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pytest

from pygents import DecoratedTool, tool

# --------------------------------------------------------------------------- helpers

_probe_ids = itertools.count()


def _probe_tool(fn: Any, annotations: dict[str, Any]) -> DecoratedTool[..., Any]:
    """Decorate ``fn`` under a fresh name after giving it ``annotations``."""
    fn.__annotations__ = annotations
    fn.__name__ = fn.__qualname__ = f"probe_{next(_probe_ids)}"
    return tool(fn)


def param_schema(annotation: Any) -> dict[str, Any]:
    """The schema pygents infers for one required parameter annotated ``annotation``."""

    async def probe(value):  # type: ignore[no-untyped-def]
        return value

    schema = _probe_tool(probe, {"value": annotation}).metadata.input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["value"]
    return schema["properties"]["value"]


def return_schema(annotation: Any) -> dict[str, Any]:
    """The output schema pygents infers for a coroutine tool returning ``annotation``."""

    async def probe():  # type: ignore[no-untyped-def]
        return None

    return _probe_tool(probe, {"return": annotation}).metadata.output_schema


def define(source: str, **namespace: Any) -> dict[str, Any]:
    """Execute ``source`` as a module compiled with ``from __future__ import annotations``."""
    code = "from __future__ import annotations\n" + textwrap.dedent(source)
    env: dict[str, Any] = {"__name__": "pygents_schema_generated", **namespace}
    exec(compile(code, "<generated>", "exec"), env)
    return env


def required(t: DecoratedTool[..., Any]) -> list[str]:
    return list(t.metadata.input_schema.get("required", []))


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class FakeModel:
    """Duck-typed stand-in for a pydantic model: only ``model_json_schema()`` matters."""

    SCHEMA: dict[str, Any] = {  # noqa: RUF012
        "title": "FakeModel",
        "type": "object",
        "properties": {"name": {"title": "Name", "type": "string"}},
        "required": ["name"],
        "x-custom": [1, 2, 3],
    }

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return cls.SCHEMA


# --------------------------------------------------------------------------- primitives


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
    ],
    ids=["str", "int", "float", "bool", "None", "NoneType"],
)
def test_primitive_parameters(annotation: Any, expected: dict[str, Any]) -> None:
    assert param_schema(annotation) == expected


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
    ],
    ids=["str", "int", "float", "bool", "None"],
)
def test_primitive_return_types(annotation: Any, expected: dict[str, Any]) -> None:
    assert return_schema(annotation) == expected


def test_any_and_unannotated_are_unconstrained() -> None:
    @tool
    async def loose(a, b: Any, c: object):  # type: ignore[no-untyped-def]
        return a

    schema = loose.metadata.input_schema
    assert schema["properties"] == {"a": {}, "b": {}, "c": {}}
    assert schema["required"] == ["a", "b", "c"]
    assert loose.metadata.output_schema == {}
    assert return_schema(Any) == {}


# --------------------------------------------------------------------------- containers


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (list, {"type": "array"}),
        (Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (
            list[list[int]],
            {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        ),
        (
            list[dict[str, int]],
            {
                "type": "array",
                "items": {"type": "object", "additionalProperties": {"type": "integer"}},
            },
        ),
    ],
    ids=["list[str]", "list", "Sequence[int]", "list[list[int]]", "list[dict]"],
)
def test_list_types(annotation: Any, expected: dict[str, Any]) -> None:
    assert param_schema(annotation) == expected


def test_dict_types() -> None:
    assert param_schema(dict[str, int]) == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert param_schema(dict[str, list[float]]) == {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "number"}},
    }
    assert param_schema(dict)["type"] == "object"


def test_tuple_types() -> None:
    fixed = param_schema(tuple[int, str])
    assert fixed["type"] == "array"
    assert fixed["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert fixed["minItems"] == 2
    assert fixed["maxItems"] == 2
    assert param_schema(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}


def test_set_types() -> None:
    assert param_schema(set[str]) == {
        "type": "array",
        "uniqueItems": True,
        "items": {"type": "string"},
    }
    assert param_schema(frozenset[int]) == {
        "type": "array",
        "uniqueItems": True,
        "items": {"type": "integer"},
    }


# --------------------------------------------------------------------------- unions


def test_optional_and_unions() -> None:
    nullable_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert param_schema(int | None) == nullable_int
    assert param_schema(Optional[int]) == nullable_int  # noqa: UP045
    assert param_schema(Union[int, str]) == {  # noqa: UP007
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    }
    assert param_schema(int | str | None) == {
        "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]
    }
    assert param_schema(list[str] | None) == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    }
    assert return_schema(str | None) == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_union_with_any_is_unconstrained() -> None:
    assert param_schema(int | Any) == {}


# --------------------------------------------------------------------------- literal / enum


def test_literal() -> None:
    assert param_schema(Literal["fast", "slow"])["enum"] == ["fast", "slow"]
    assert param_schema(Literal[1, 2, 3])["enum"] == [1, 2, 3]


def test_enums_list_their_values() -> None:
    assert param_schema(Colour)["enum"] == ["red", "green"]
    assert param_schema(Priority)["enum"] == [1, 2]
    assert return_schema(Colour)["enum"] == ["red", "green"]


# --------------------------------------------------------------------------- structured


def test_dataclass() -> None:
    @dataclass
    class Point:
        x: int
        y: int
        label: str = "origin"
        tags: list[str] = field(default_factory=list)

    schema = param_schema(Point)
    assert schema["type"] == "object"
    assert schema["properties"] == {
        "x": {"type": "integer"},
        "y": {"type": "integer"},
        "label": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    }
    assert schema["required"] == ["x", "y"]
    assert return_schema(Point)["properties"] == schema["properties"]


def test_nested_dataclass() -> None:
    @dataclass
    class Inner:
        value: float

    @dataclass
    class Outer:
        inner: Inner
        many: list[Inner]

    schema = param_schema(Outer)
    inner = {"value": {"type": "number"}}
    assert schema["properties"]["inner"]["properties"] == inner
    assert schema["properties"]["many"]["type"] == "array"
    assert schema["properties"]["many"]["items"]["properties"] == inner
    assert schema["required"] == ["inner", "many"]


def test_typed_dict() -> None:
    class Movie(TypedDict):
        title: str
        year: int
        rating: NotRequired[float]

    class Partial(TypedDict, total=False):
        note: str

    schema = param_schema(Movie)
    assert schema["type"] == "object"
    assert schema["properties"] == {
        "title": {"type": "string"},
        "year": {"type": "integer"},
        "rating": {"type": "number"},
    }
    assert sorted(schema["required"]) == ["title", "year"]

    partial = param_schema(Partial)
    assert partial["properties"] == {"note": {"type": "string"}}
    assert partial.get("required", []) == []


def test_annotated_uses_the_underlying_type() -> None:
    assert param_schema(Annotated[int, "a positive number"]) == {"type": "integer"}
    assert param_schema(Annotated[list[str], "names"]) == {
        "type": "array",
        "items": {"type": "string"},
    }


# --------------------------------------------------------------------------- model_json_schema


def test_class_with_model_json_schema_is_used_verbatim() -> None:
    assert param_schema(FakeModel) == FakeModel.SCHEMA
    assert return_schema(FakeModel) == FakeModel.SCHEMA
    assert param_schema(list[FakeModel]) == {"type": "array", "items": FakeModel.SCHEMA}
    assert param_schema(FakeModel | None) == {"anyOf": [FakeModel.SCHEMA, {"type": "null"}]}


def test_model_json_schema_duck_typing_beats_dataclass_inference() -> None:
    @dataclass
    class Hybrid:
        a: int

        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            return {"title": "Hybrid", "description": "from the model"}

    assert param_schema(Hybrid) == {"title": "Hybrid", "description": "from the model"}


# --------------------------------------------------------------------------- parameters


def test_defaults_are_recorded_and_required_lists_only_parameters_without_one() -> None:
    @tool
    async def search(
        query: str,
        limit: int = 10,
        exact: bool = False,
        ratio: float = 0.5,
        lang: str | None = None,
        fields: list[str] = ["title"],  # noqa: B006
        window: tuple[int, int] = (0, 5),
    ) -> list[str]:
        return []

    schema = search.metadata.input_schema
    props = schema["properties"]
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    assert "default" not in props["query"]
    assert props["limit"] == {"type": "integer", "default": 10}
    assert props["exact"] == {"type": "boolean", "default": False}
    assert props["ratio"] == {"type": "number", "default": 0.5}
    assert props["lang"]["default"] is None
    assert props["fields"]["default"] == ["title"]
    assert props["window"]["default"] == [0, 5]
    assert list(props) == ["query", "limit", "exact", "ratio", "lang", "fields", "window"]
    json.dumps(search.metadata.dict())  # JSON-ready as a whole


def test_keyword_only_parameters_are_included() -> None:
    @tool
    async def fetch(url: str, *, wait: float = 5.0, retries: int) -> str:
        return url

    schema = fetch.metadata.input_schema
    assert set(schema["properties"]) == {"url", "wait", "retries"}
    assert sorted(schema["required"]) == ["retries", "url"]


def test_var_args_and_var_kwargs_are_left_out() -> None:
    @tool
    async def spread(first: int, *args: int, **kwargs: str) -> None:
        return None

    schema = spread.metadata.input_schema
    assert schema["properties"] == {"first": {"type": "integer"}}
    assert schema["required"] == ["first"]


def test_tool_without_parameters() -> None:
    @tool
    async def ping() -> str:
        return "pong"

    schema = ping.metadata.input_schema
    assert schema["type"] == "object"
    assert schema["properties"] == {}
    assert schema.get("required", []) == []


def test_fixed_kwargs_are_excluded_from_the_input_schema() -> None:
    @tool(api_key="secret", region=lambda: "eu")
    async def call(path: str, api_key: str, region: str = "us", verbose: bool = False) -> str:
        return path

    schema = call.metadata.input_schema
    assert set(schema["properties"]) == {"path", "verbose"}
    assert required(call) == ["path"]
    assert "secret" not in json.dumps(schema)


def test_subtool_schemas() -> None:
    @tool
    async def users() -> None:
        return None

    @users.subtool(role="admin")
    async def create(name: str, role: str, age: int | None = None) -> bool:
        return True

    assert create.metadata.input_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        },
        "required": ["name"],
    }
    assert create.metadata.output_schema == {"type": "boolean"}


# --------------------------------------------------------------------------- outputs


def test_output_schema_of_coroutines() -> None:
    @tool
    async def nothing() -> None:
        return None

    @tool
    async def names() -> list[str]:
        return []

    @tool
    async def unannotated():  # type: ignore[no-untyped-def]
        return 1

    assert nothing.metadata.output_schema == {"type": "null"}
    assert names.metadata.output_schema == {"type": "array", "items": {"type": "string"}}
    assert unannotated.metadata.output_schema == {}


def test_output_schema_of_async_generators_is_the_item_type() -> None:
    @tool
    async def numbers() -> AsyncIterator[int]:
        yield 1

    @tool
    async def words() -> AsyncGenerator[str, None]:
        yield "a"

    @tool
    async def records() -> AsyncIterable[dict[str, int]]:
        yield {}

    @tool
    async def models() -> AsyncIterator[FakeModel]:
        yield FakeModel()

    @tool
    async def untyped():  # type: ignore[no-untyped-def]
        yield 1

    assert numbers.metadata.output_schema == {"type": "integer"}
    assert words.metadata.output_schema == {"type": "string"}
    assert records.metadata.output_schema == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert models.metadata.output_schema == FakeModel.SCHEMA
    assert untyped.metadata.output_schema == {}


def test_schemas_appear_in_metadata_dict() -> None:
    @tool
    async def add(a: int, b: int = 1) -> int:
        return a + b

    data = add.metadata.dict()
    assert data["input_schema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
        "required": ["a"],
    }
    assert data["output_schema"] == {"type": "integer"}
    assert json.loads(json.dumps(data)) == data


# --------------------------------------------------------------------------- robustness


def test_string_annotations_are_resolved() -> None:
    env = define(
        """
        async def typed(n: int, names: list[str], flag: bool | None = None) -> dict[str, int]:
            return {}
        """
    )
    typed = tool(env["typed"])
    assert typed.metadata.input_schema == {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "names": {"type": "array", "items": {"type": "string"}},
            "flag": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
        },
        "required": ["n", "names"],
    }
    assert typed.metadata.output_schema == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }


def test_one_forward_reference_does_not_erase_the_other_annotations() -> None:
    """With ``from __future__ import annotations`` a tool may name a class that the
    module defines further down; the parameters whose types *are* known keep them."""
    env = define(
        """
        @tool
        async def handle(count: int, state: State) -> int:
            return count

        class State:
            pass
        """,
        tool=tool,
    )
    handle = env["handle"]
    assert handle.metadata.input_schema["required"] == ["count", "state"]
    assert handle.metadata.input_schema["properties"]["count"] == {"type": "integer"}
    assert handle.metadata.output_schema == {"type": "integer"}


@dataclass
class TreeNode:
    value: int
    children: "list[TreeNode]" = field(default_factory=list)


def test_recursive_type_does_not_break_decoration() -> None:
    @tool
    async def walk(root: TreeNode) -> int:
        return root.value

    schema = walk.metadata.input_schema
    assert schema["required"] == ["root"]
    assert schema["properties"]["root"]["type"] == "object"
    assert schema["properties"]["root"]["properties"]["value"] == {"type": "integer"}
    json.dumps(schema)


def test_model_json_schema_that_raises_does_not_break_decoration() -> None:
    class Broken:
        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            raise RuntimeError("cannot build schema")

    schema = param_schema(Broken)
    assert isinstance(schema, dict)
    json.dumps(schema)
