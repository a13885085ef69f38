"""Tests for the JSON Schemas (Draft 2020-12) ``tool.metadata.input_schema`` /
``output_schema`` inferred from type hints (SPEC §1.2).

Every schema a test produces is checked by a real validator (``jsonschema``): that it is
a valid Draft 2020-12 schema, and where it matters that sample instances pass or fail,
references included.

This module deliberately does *not* use ``from __future__ import annotations``: the
classes used as annotations are defined inside the tests, so annotations must be real
objects. String annotations are covered by their own test through ``define()``.
"""

import asyncio
import copy
import enum
import itertools
import json
import textwrap
import typing
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from ipaddress import IPv4Address, IPv6Address
from pathlib import Path, PurePosixPath
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    NamedTuple,
    NewType,
    NotRequired,
    Optional,
    TypedDict,
    TypeVar,
    Union,
)
from uuid import UUID

import pytest
from jsonschema import Draft202012Validator

from pygents import DecoratedTool, ToolRegistry, tool

# --------------------------------------------------------------------------- helpers

_probe_ids = itertools.count()


def _probe_tool(fn: Any, annotations: dict[str, Any]) -> DecoratedTool[..., Any]:
    """Decorate ``fn`` under a fresh name after giving it ``annotations``."""
    fn.__annotations__ = annotations
    fn.__name__ = fn.__qualname__ = f"probe_{next(_probe_ids)}"
    return tool(fn)


def param_document(annotation: Any) -> dict[str, Any]:
    """The whole input schema of a tool with one required parameter annotated ``annotation``."""

    async def probe(value):  # type: ignore[no-untyped-def]
        return value

    schema = _probe_tool(probe, {"value": annotation}).metadata.input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["value"]
    return schema


def param_schema(annotation: Any) -> dict[str, Any]:
    """The schema pygents infers for one required parameter annotated ``annotation``."""
    return dict(param_document(annotation)["properties"]["value"])


def return_schema(annotation: Any) -> dict[str, Any]:
    """The output schema pygents infers for a coroutine tool returning ``annotation``."""

    async def probe():  # type: ignore[no-untyped-def]
        return None

    return _probe_tool(probe, {"return": annotation}).metadata.output_schema


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema``, or the ``$defs`` entry of ``root`` it refers to."""
    ref = schema.get("$ref")
    if ref is None:
        return schema
    assert ref.startswith("#/$defs/"), ref
    return dict(root["$defs"][ref.removeprefix("#/$defs/")])


def param_definition(annotation: Any) -> dict[str, Any]:
    """The definition a parameter annotated with a class refers to."""
    document = param_document(annotation)
    return resolve(document["properties"]["value"], document)


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def accepts(schema: dict[str, Any], instance: Any) -> bool:
    """Whether a real Draft 2020-12 validator accepts ``instance`` (refs resolved)."""
    return validator(schema).is_valid(instance)


def accepts_value(annotation: Any, value: Any) -> bool:
    """Whether the input schema of a one-parameter tool accepts ``{"value": value}``."""
    return accepts(param_document(annotation), {"value": value})


@pytest.fixture(autouse=True)
def every_schema_is_a_valid_draft_2020_12_schema(pygents_isolated: None) -> Iterator[None]:
    """After each test, every tool it defined has valid, JSON-ready schemas."""
    yield
    for t in ToolRegistry.all():
        for schema in (t.metadata.input_schema, t.metadata.output_schema):
            Draft202012Validator.check_schema(schema)
            assert json.loads(json.dumps(schema)) == schema


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
    """Duck-typed stand-in for a pydantic model: only ``model_json_schema()`` matters.

    Subclasses stand for other models: each sets its own ``SCHEMA``.
    """

    SCHEMA: ClassVar[dict[str, Any]] = {
        "title": "FakeModel",
        "type": "object",
        "properties": {"name": {"title": "Name", "type": "string"}},
        "required": ["name"],
        "x-custom": [1, 2, 3],
    }

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return copy.deepcopy(cls.SCHEMA)  # a fresh document per call, as pydantic returns


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
def test_primitive_parameters_and_return_types(annotation: Any, expected: dict[str, Any]) -> None:
    assert param_schema(annotation) == expected
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

    document = param_document(Point)
    assert document["properties"]["value"] == {"$ref": "#/$defs/Point"}
    schema = param_definition(Point)
    assert schema["type"] == "object"
    assert schema["title"] == "Point"
    assert schema["properties"] == {
        "x": {"type": "integer"},
        "y": {"type": "integer"},
        "label": {"type": "string", "default": "origin"},
        "tags": {"type": "array", "items": {"type": "string"}},
    }
    assert schema["required"] == ["x", "y"]
    output = return_schema(Point)
    assert resolve(output, output)["properties"] == schema["properties"]
    assert accepts(document, {"value": {"x": 1, "y": 2}})
    assert not accepts(document, {"value": {"x": 1}})
    assert not accepts(document, {"value": {"x": 1, "y": "two"}})


def test_nested_dataclass() -> None:
    @dataclass
    class Inner:
        value: float

    @dataclass
    class Outer:
        inner: Inner
        many: list[Inner]

    document = param_document(Outer)
    schema = param_definition(Outer)
    inner = {"value": {"type": "number"}}
    assert schema["properties"]["inner"] == {"$ref": "#/$defs/Inner"}
    assert schema["properties"]["many"] == {"type": "array", "items": {"$ref": "#/$defs/Inner"}}
    assert document["$defs"]["Inner"]["properties"] == inner
    assert schema["required"] == ["inner", "many"]
    assert accepts(document, {"value": {"inner": {"value": 1.5}, "many": [{"value": 2}]}})
    assert not accepts(document, {"value": {"inner": {"value": 1.5}, "many": [{"value": "x"}]}})


def test_typed_dict() -> None:
    class Movie(TypedDict):
        title: str
        year: int
        rating: NotRequired[float]

    class Partial(TypedDict, total=False):
        note: str

    schema = param_definition(Movie)
    assert schema["type"] == "object"
    assert schema["properties"] == {
        "title": {"type": "string"},
        "year": {"type": "integer"},
        "rating": {"type": "number"},
    }
    assert sorted(schema["required"]) == ["title", "year"]

    partial = param_definition(Partial)
    assert partial["properties"] == {"note": {"type": "string"}}
    assert partial.get("required", []) == []


def test_annotated_uses_the_underlying_type_and_its_text_as_the_description() -> None:
    assert param_schema(Annotated[int, "a positive number"]) == {
        "type": "integer",
        "description": "a positive number",
    }
    assert param_schema(Annotated[list[str], "names"]) == {
        "type": "array",
        "items": {"type": "string"},
        "description": "names",
    }


# --------------------------------------------------------------------------- model_json_schema


def test_class_with_model_json_schema_is_used_verbatim_as_a_definition() -> None:
    ref = {"$ref": "#/$defs/FakeModel"}
    assert param_document(FakeModel)["$defs"] == {"FakeModel": FakeModel.SCHEMA}
    assert param_schema(FakeModel) == ref
    assert return_schema(FakeModel) == {**ref, "$defs": {"FakeModel": FakeModel.SCHEMA}}
    assert param_schema(list[FakeModel]) == {"type": "array", "items": ref}
    assert param_schema(FakeModel | None) == {"anyOf": [ref, {"type": "null"}]}


def test_model_json_schema_duck_typing_beats_dataclass_inference() -> None:
    @dataclass
    class Hybrid:
        a: int

        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            return {"title": "Hybrid", "description": "from the model"}

    assert param_definition(Hybrid) == {"title": "Hybrid", "description": "from the model"}


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
    assert models.metadata.output_schema == {
        "$ref": "#/$defs/FakeModel",
        "$defs": {"FakeModel": FakeModel.SCHEMA},
    }
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
    node = resolve(schema["properties"]["root"], schema)
    assert node["type"] == "object"
    assert node["properties"]["value"] == {"type": "integer"}
    json.dumps(schema)


def test_model_json_schema_that_raises_does_not_break_decoration() -> None:
    class Broken:
        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            raise RuntimeError("cannot build schema")

    schema = param_schema(Broken)
    assert isinstance(schema, dict)
    json.dumps(schema)


# --------------------------------------------------------------------------- string formats


@pytest.mark.parametrize(
    ("annotation", "expected", "good", "bad"),
    [
        (datetime, {"type": "string", "format": "date-time"}, "2024-05-01T12:30:00Z", 1714566600),
        (date, {"type": "string", "format": "date"}, "2024-05-01", "2024-13-01"),
        (time, {"type": "string", "format": "time"}, "12:30:00Z", 45000),
        (timedelta, {"type": "string", "format": "duration"}, "P1DT2S", 5),
        (UUID, {"type": "string", "format": "uuid"}, str(UUID(int=7)), "not-a-uuid"),
        (Path, {"type": "string", "format": "path"}, "/tmp/x", 3),
        (PurePosixPath, {"type": "string", "format": "path"}, "a/b", None),
        (IPv4Address, {"type": "string", "format": "ipv4"}, "10.0.0.1", "10.0.0.300"),
        (IPv6Address, {"type": "string", "format": "ipv6"}, "::1", "1.2.3.4"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_dates_times_uuids_and_paths_are_strings_with_a_format(
    annotation: Any, expected: dict[str, Any], good: Any, bad: Any
) -> None:
    assert param_schema(annotation) == expected
    assert return_schema(annotation) == expected
    assert accepts_value(annotation, good)
    # Bad strings are caught only for the formats jsonschema checks without extra packages.
    assert not accepts_value(annotation, bad)


def test_subclasses_of_formatted_and_primitive_types_keep_their_schema() -> None:
    class Stamp(datetime):
        pass

    class Name(str):
        pass

    assert param_schema(Stamp) == {"type": "string", "format": "date-time"}
    assert param_schema(Name) == {"type": "string"}
    assert param_schema(bytes) == {"type": "string", "contentEncoding": "base64"}


def test_a_decimal_is_a_json_number_or_a_string_of_digits() -> None:
    schema = param_schema(Decimal)
    assert schema["anyOf"][0] == {"type": "number"}
    assert schema["anyOf"][1]["type"] == "string"
    for good in (1, 2.5, "19.99", "-0.001", "1e-7", ".5"):
        assert accepts_value(Decimal, good), good
    for bad in ("abc", "1.2.3", "", True, None, [1]):
        assert not accepts_value(Decimal, bad), bad


# --------------------------------------------------------------------------- enums and literals


def test_an_enum_is_typed_and_lists_its_values() -> None:
    assert param_schema(Colour) == {"title": "Colour", "type": "string", "enum": ["red", "green"]}
    assert param_schema(Priority) == {"title": "Priority", "type": "integer", "enum": [1, 2]}
    assert accepts_value(Colour, "red")
    assert not accepts_value(Colour, "RED")
    assert not accepts_value(Priority, 3)


def test_an_enum_whose_values_json_cannot_hold_lists_its_member_names() -> None:
    class Shape(enum.Enum):
        SQUARE = (object(), 4)
        CIRCLE = (object(), 0)

    assert param_schema(Shape) == {"title": "Shape", "type": "string", "enum": ["SQUARE", "CIRCLE"]}


def test_a_literal_of_one_value_is_a_const_and_of_several_an_enum() -> None:
    assert param_schema(Literal["only"]) == {"type": "string", "const": "only"}
    assert param_schema(Literal["fast", "slow"]) == {"type": "string", "enum": ["fast", "slow"]}
    assert param_schema(Literal[1, "one", None]) == {"enum": [1, "one", None]}
    assert param_schema(Literal[Colour.RED]) == {"type": "string", "const": "red"}
    assert accepts_value(Literal["only"], "only")
    assert not accepts_value(Literal["only"], "other")
    assert not accepts_value(Literal["fast", "slow"], "medium")


# --------------------------------------------------------------------------- containers, validated


def test_a_fixed_tuple_validates_each_position_and_its_length() -> None:
    assert accepts_value(tuple[int, str], [1, "a"])
    assert not accepts_value(tuple[int, str], [1, 2])
    assert not accepts_value(tuple[int, str], [1, "a", 3])
    assert not accepts_value(tuple[int, str], [1])
    assert param_schema(tuple[()]) == {"type": "array", "maxItems": 0}
    assert accepts_value(tuple[()], [])
    assert not accepts_value(tuple[()], [1])


def test_sets_refuse_repeated_items() -> None:
    assert accepts_value(set[int], [1, 2])
    assert not accepts_value(set[int], [1, 1])
    assert not accepts_value(frozenset[str], ["a", "a"])


def test_optionals_accept_null_and_unions_each_member() -> None:
    assert accepts_value(int | None, None)
    assert accepts_value(int | None, 3)
    assert not accepts_value(int | None, "3")
    assert accepts_value(Union[int, list[str]], ["a"])  # noqa: UP007
    assert not accepts_value(Union[int, list[str]], [1])  # noqa: UP007
    assert accepts_value(None, None)
    assert not accepts_value(None, 0)


def test_new_types_and_type_variables_use_what_they_stand_for() -> None:
    UserId = NewType("UserId", int)
    Bounded = TypeVar("Bounded", bound=str)
    Either = TypeVar("Either", int, str)
    Free = TypeVar("Free")

    assert param_schema(UserId) == {"type": "integer"}
    assert param_schema(Bounded) == {"type": "string"}
    assert param_schema(Either) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert param_schema(Free) == {}


def test_a_named_tuple_is_an_array_of_its_fields() -> None:
    class Pair(NamedTuple):
        left: int
        right: str = "r"

    document = param_document(Pair)
    schema = param_definition(Pair)
    assert schema["prefixItems"] == [{"type": "integer"}, {"type": "string", "default": "r"}]
    assert (schema["minItems"], schema["maxItems"]) == (1, 2)
    assert accepts(document, {"value": [1, "x"]})
    assert accepts(document, {"value": [1]})
    assert not accepts(document, {"value": ["x", "y"]})


# --------------------------------------------------------------------------- $defs and $ref


@dataclass
class Employee:
    name: str
    team: "Team | None" = None


@dataclass
class Team:
    title: str
    members: "list[Employee]" = field(default_factory=list)


class Comment(TypedDict):
    text: str
    replies: "list[Comment]"


def test_a_recursive_dataclass_refers_to_itself_instead_of_expanding() -> None:
    document = param_document(TreeNode)
    assert document["properties"]["value"] == {"$ref": "#/$defs/TreeNode"}
    assert document["$defs"] == {
        "TreeNode": {
            "type": "object",
            "title": "TreeNode",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/TreeNode"}},
            },
            "required": ["value"],
        }
    }
    tree = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}
    assert accepts(document, {"value": tree})
    deep_error = {"value": 1, "children": [{"value": 2, "children": [{"value": "three"}]}]}
    assert not accepts(document, {"value": deep_error})


def test_mutually_recursive_dataclasses_are_each_defined_once() -> None:
    document = param_document(Team)
    assert set(document["$defs"]) == {"Team", "Employee"}
    employee = document["$defs"]["Employee"]["properties"]["team"]
    assert employee == {"anyOf": [{"$ref": "#/$defs/Team"}, {"type": "null"}], "default": None}
    team = {"title": "core", "members": [{"name": "ada", "team": {"title": "core"}}]}
    assert accepts(document, {"value": team})
    assert not accepts(document, {"value": {"title": "core", "members": [{"team": None}]}})


def test_a_recursive_typed_dict_refers_to_itself() -> None:
    document = param_document(Comment)
    replies = document["$defs"]["Comment"]["properties"]["replies"]
    assert replies == {"type": "array", "items": {"$ref": "#/$defs/Comment"}}
    assert accepts(document, {"value": {"text": "a", "replies": [{"text": "b", "replies": []}]}})
    assert not accepts(document, {"value": {"text": "a", "replies": [{"text": "b"}]}})


def test_a_class_used_by_several_parameters_is_defined_once() -> None:
    @tool
    async def move(start: TreeNode, end: TreeNode, path: list[TreeNode]) -> TreeNode:
        return end

    schema = move.metadata.input_schema
    assert list(schema["$defs"]) == ["TreeNode"]
    assert {p["$ref"] for p in (schema["properties"]["start"], schema["properties"]["end"])} == {
        "#/$defs/TreeNode"
    }
    assert move.metadata.output_schema["$ref"] == "#/$defs/TreeNode"
    assert list(move.metadata.output_schema["$defs"]) == ["TreeNode"]


def test_two_classes_with_one_name_get_two_definitions() -> None:
    def make(kind: type) -> type:
        @dataclass
        class Item:
            value: kind  # type: ignore[valid-type]

        return Item

    Text, Number = make(str), make(int)

    @tool
    async def pair(a: Text, b: Number) -> None:  # type: ignore[valid-type]
        return None

    schema = pair.metadata.input_schema
    a, b = (resolve(schema["properties"][n], schema) for n in ("a", "b"))
    assert a["properties"]["value"] == {"type": "string"}
    assert b["properties"]["value"] == {"type": "integer"}
    assert accepts(schema, {"a": {"value": "x"}, "b": {"value": 1}})
    assert not accepts(schema, {"a": {"value": 1}, "b": {"value": 1}})


class Address(FakeModel):
    """A pydantic-shaped model: what ``model_json_schema()`` of pydantic 2 returns."""

    SCHEMA: ClassVar[dict[str, Any]] = {
        "title": "Address",
        "type": "object",
        "properties": {
            "street": {"title": "Street", "type": "string"},
            "city": {"title": "City", "type": "string"},
        },
        "required": ["street", "city"],
    }


class Order(FakeModel):
    """A model nesting another: pydantic puts ``Address`` under its own ``$defs``."""

    SCHEMA: ClassVar[dict[str, Any]] = {
        "$defs": {"Address": Address.model_json_schema()},
        "title": "Order",
        "type": "object",
        "properties": {
            "id": {"title": "Id", "type": "integer"},
            "ship_to": {"$ref": "#/$defs/Address"},
            "bill_to": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
            "$ref": {"title": "A field named $ref", "type": "string"},
        },
        "required": ["id", "ship_to"],
    }


class Category(FakeModel):
    """A recursive pydantic model: the document is only a reference to its own entry."""

    SCHEMA: ClassVar[dict[str, Any]] = {
        "$defs": {
            "Category": {
                "title": "Category",
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Category"}},
                },
                "required": ["name"],
            }
        },
        "$ref": "#/$defs/Category",
    }


class Parcel(FakeModel):
    """Another model whose ``$defs`` has an ``Address`` - a different one."""

    SCHEMA: ClassVar[dict[str, Any]] = {
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {"locker": {"type": "integer"}},
                "required": ["locker"],
            }
        },
        "type": "object",
        "properties": {"to": {"$ref": "#/$defs/Address"}},
        "required": ["to"],
    }


ORDER = {"id": 1, "ship_to": {"street": "1 Main St", "city": "Springfield"}}


def test_a_nested_models_references_resolve_from_the_root_of_the_tool_schema() -> None:
    @tool
    async def place(order: Order, note: str = "") -> Order:
        return order

    schema = place.metadata.input_schema
    assert schema["properties"]["order"] == {"$ref": "#/$defs/Order"}
    assert schema["$defs"]["Address"] == Address.model_json_schema()
    assert schema["$defs"]["Order"]["properties"]["ship_to"] == {"$ref": "#/$defs/Address"}
    assert schema["$defs"]["Order"]["properties"]["$ref"]["type"] == "string"
    assert accepts(schema, {"order": ORDER})
    assert accepts(schema, {"order": {**ORDER, "bill_to": ORDER["ship_to"]}})
    assert not accepts(schema, {"order": {**ORDER, "ship_to": {"street": "1 Main St"}}})
    assert not accepts(schema, {"order": {**ORDER, "bill_to": {"city": 5}}})
    output = place.metadata.output_schema
    assert accepts(output, ORDER)
    assert not accepts(output, {"id": 1, "ship_to": {}})


def test_a_model_also_nested_in_another_is_defined_once() -> None:
    @tool
    async def ship(order: Order, extra: Address, parcels: list[Parcel]) -> None:
        return None

    schema = ship.metadata.input_schema
    assert schema["properties"]["extra"] == {"$ref": "#/$defs/Address"}
    assert sorted(schema["$defs"]) == ["Address", "Address_2", "Order", "Parcel"]
    locker = {"locker": 3}
    assert accepts(schema, {"order": ORDER, "extra": ORDER["ship_to"], "parcels": [{"to": locker}]})
    assert not accepts(
        schema, {"order": ORDER, "extra": ORDER["ship_to"], "parcels": [{"to": ORDER["ship_to"]}]}
    )
    assert not accepts(schema, {"order": ORDER, "extra": locker, "parcels": []})


def test_a_recursive_model_refers_to_its_own_definition() -> None:
    document = param_document(list[Category])
    assert document["properties"]["value"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Category"},
    }
    assert list(document["$defs"]) == ["Category"]
    tree = [{"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}]
    assert accepts(document, {"value": tree})
    assert not accepts(document, {"value": [{"name": "a", "children": [{"children": []}]}]})


def test_the_model_schema_is_asked_for_once_when_the_tool_is_decorated() -> None:
    calls: list[str] = []

    class Counted:
        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            calls.append("schema")
            return {"type": "object"}

    @tool
    async def use(a: Counted, b: list[Counted]) -> Counted:
        return a

    assert calls == ["schema", "schema"]  # one for the input schema, one for the output

    async def run() -> None:
        for _ in range(3):
            await use(Counted(), [])

    asyncio.run(run())
    assert calls == ["schema", "schema"]


def test_a_model_schema_that_is_not_a_mapping_is_unconstrained() -> None:
    class Odd:
        @classmethod
        def model_json_schema(cls) -> Any:
            return ["not", "a", "schema"]

    assert param_definition(Odd) == {}


# --------------------------------------------------------------------------- descriptions


def test_google_style_docstrings_describe_parameters() -> None:
    @tool
    async def search(query: str, limit: int = 10, *, lang: str | None = None) -> list[str]:
        """Search the index.

        Args:
            query: The text to look for,
                on one or more lines.
            limit (int): How many hits to return.
            lang (str, optional): A language code.

        Returns:
            The matching titles.
        """
        return []

    props = search.metadata.input_schema["properties"]
    assert props["query"]["description"] == "The text to look for, on one or more lines."
    assert props["limit"] == {
        "type": "integer",
        "description": "How many hits to return.",
        "default": 10,
    }
    assert props["lang"]["description"] == "A language code."


def test_numpy_style_docstrings_describe_parameters() -> None:
    @tool
    async def scale(x: float, y: float, factor: float = 2.0) -> float:
        """Scale a point.

        Parameters
        ----------
        x, y : float
            The point's coordinates.
        factor : float, optional
            What to multiply by.
            Defaults to two.

        Returns
        -------
        float
            The scaled distance.
        """
        return x

    props = scale.metadata.input_schema["properties"]
    assert props["x"]["description"] == "The point's coordinates."
    assert props["y"]["description"] == "The point's coordinates."
    assert props["factor"]["description"] == "What to multiply by. Defaults to two."


def test_rest_style_docstrings_describe_parameters() -> None:
    @tool
    async def send(to: str, body: str) -> None:
        """Send a message.

        :param to: Who receives it.
        :param str body: What it says,
            in plain text.
        :returns: nothing.
        """

    props = send.metadata.input_schema["properties"]
    assert props["to"]["description"] == "Who receives it."
    assert props["body"]["description"] == "What it says, in plain text."


def test_annotated_text_wins_over_the_docstring_and_reaches_the_output() -> None:
    @tool
    async def add(a: Annotated[int, "the first term"], b: int) -> Annotated[int, "the sum"]:
        """Add.

        Args:
            a: From the docstring.
            b: The second term.
        """
        return a + b

    props = add.metadata.input_schema["properties"]
    assert props["a"] == {"type": "integer", "description": "the first term"}
    assert props["b"] == {"type": "integer", "description": "The second term."}
    assert add.metadata.output_schema == {"type": "integer", "description": "the sum"}


def test_annotated_metadata_objects_with_a_description_are_read() -> None:
    @dataclass(frozen=True)
    class FieldInfo:  # the shape of pydantic's Field(description=...)
        description: str

    assert param_schema(Annotated[str, FieldInfo("a name")])["description"] == "a name"
    assert param_schema(Annotated[str, 42]) == {"type": "string"}


def test_dataclass_fields_are_described_by_the_class_docstring_and_field_metadata() -> None:
    @dataclass
    class Booking:
        """A reservation.

        Attributes:
            guest: Who booked.
        """

        guest: str
        nights: Annotated[int, "how long"] = 1
        room: str = field(default="any", metadata={"description": "a room number"})

    schema = param_definition(Booking)
    assert schema["description"] == "A reservation."
    assert schema["properties"]["guest"]["description"] == "Who booked."
    assert schema["properties"]["nights"] == {
        "type": "integer",
        "description": "how long",
        "default": 1,
    }
    assert schema["properties"]["room"]["description"] == "a room number"


# --------------------------------------------------------------------------- defaults


ONE = UUID(int=1)


def test_defaults_are_written_as_json_and_left_out_when_json_cannot_hold_them() -> None:
    loop: list[Any] = []
    loop.append(loop)

    @tool
    async def plan(
        colour: Colour = Colour.GREEN,
        when: datetime = datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        day: date = date(2024, 5, 1),
        wait: timedelta = timedelta(minutes=1),
        odd_wait: timedelta = timedelta(milliseconds=5),
        ident: UUID = ONE,
        where: Path = Path("/tmp"),
        price: Decimal = Decimal("9.99"),
        raw: bytes = b"hi",
        tags: frozenset[str] = frozenset({"b", "a"}),
        options: dict[str, Any] = {"depth": 2},  # noqa: B006
        cursor: object = object(),
        ratio: float = float("nan"),
        looped: list[Any] = loop,
    ) -> None:
        return None

    props = plan.metadata.input_schema["properties"]
    assert props["colour"]["default"] == "green"
    assert props["when"]["default"] == "2024-05-01T12:00:00+00:00"
    assert props["day"]["default"] == "2024-05-01"
    assert props["wait"]["default"] == "P0DT60S"
    assert props["ident"]["default"] == str(ONE)
    assert props["where"]["default"] == "/tmp"
    assert props["price"]["default"] == "9.99"
    assert props["raw"]["default"] == "aGk="
    assert props["tags"]["default"] == ["a", "b"]
    assert props["options"]["default"] == {"depth": 2}
    for name in ("odd_wait", "cursor", "ratio", "looped"):
        assert "default" not in props[name], name
    validating = validator(plan.metadata.input_schema)
    for name in ("colour", "when", "day", "ident", "price", "tags"):
        validating.validate({name: props[name]["default"]})


# --------------------------------------------------------------------------- edge cases


def test_a_bare_tuple_is_any_array_and_an_empty_one_has_no_items() -> None:
    assert param_schema(typing.Tuple) == {"type": "array"}  # noqa: UP006
    assert param_schema(tuple) == {"type": "array"}
    assert param_schema(tuple[()]) == {"type": "array", "maxItems": 0}


def test_a_description_that_is_not_text_is_left_out() -> None:
    @dataclass
    class Odd:
        size: int = field(default=1, metadata={"description": 42})

    assert param_definition(Odd)["properties"]["size"] == {"type": "integer", "default": 1}


def test_long_odd_docstring_lines_are_read_in_one_pass() -> None:
    """Lines that almost match a parameter entry must not make the reader backtrack
    for ages (a regular expression with overlapping parts would, on these)."""

    async def odd(a: int, b: int) -> None:
        pass

    odd.__doc__ = "\n".join(
        [
            "Odd.",
            "",
            ":param " + " " * 20_000 + "x",
            ":param " + "a " * 20_000 + "b",
            ":param a: Parameter a.",
            "",
            "Args:",
            "    b" + " " * 20_000 + "(int)" + " " * 20_000 + "no colon",
            "    b (int): Parameter b.",
        ]
    )
    props = tool(odd).metadata.input_schema["properties"]
    assert props["a"]["description"] == "Parameter a."
    assert props["b"]["description"] == "Parameter b."


def test_a_model_documents_own_id_and_dialect_are_dropped_once_nested() -> None:
    class Identified:
        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            return {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": "https://example.com/identified",
                "$defs": {"Part": {"type": "integer"}},
                "type": "object",
                "properties": {"part": {"$ref": "#/$defs/Part"}},
            }

    document = param_document(Identified)
    assert param_definition(Identified) == {
        "type": "object",
        "properties": {"part": {"$ref": "#/$defs/Part"}},
    }
    assert accepts(document, {"value": {"part": 1}})
    assert not accepts(document, {"value": {"part": "one"}})


def test_a_realistic_tool_input_validates_good_calls_and_refuses_bad_ones() -> None:
    @dataclass
    class Window:
        start: datetime
        length: timedelta

    @tool
    async def book(
        room: Annotated[UUID, "the room"],
        window: Window,
        guests: set[str],
        seat: tuple[int, Literal["aisle", "window"]],
        budget: Decimal | None = None,
        order: Order | None = None,
    ) -> Annotated[list[Window], "the slots booked"]:
        """Book a room.

        Args:
            guests: Who comes.
        """
        return [window]

    schema = book.metadata.input_schema
    good = {
        "room": str(UUID(int=3)),
        "window": {"start": "2024-05-01T09:00:00Z", "length": "PT1H"},
        "guests": ["ada", "alan"],
        "seat": [12, "aisle"],
        "budget": "120.50",
        "order": ORDER,
    }
    assert accepts(schema, good)
    assert accepts(schema, {k: good[k] for k in ("room", "window", "guests", "seat")})
    for key, bad in [
        ("room", "nope"),
        ("window", {"start": "2024-05-01T09:00:00Z"}),
        ("guests", ["ada", "ada"]),
        ("seat", [12, "middle"]),
        ("budget", "lots"),
        ("order", {"id": 1, "ship_to": {"street": "x"}}),
    ]:
        assert not accepts(schema, {**good, key: bad}), key
    assert schema["properties"]["guests"]["description"] == "Who comes."
    assert book.metadata.output_schema["description"] == "the slots booked"
    assert accepts(book.metadata.output_schema, [good["window"]])
    assert not accepts(book.metadata.output_schema, [{"start": 5, "length": "PT1H"}])


def test_odd_annotation_metadata_and_model_schemas_do_not_break_decoration() -> None:
    class Touchy:
        @property
        def description(self) -> str:
            raise RuntimeError("not today")

    class MixedKeys:
        @classmethod
        def model_json_schema(cls) -> dict[Any, Any]:
            return {"type": "object", 1: "one", "required": ("x",)}

    assert param_schema(Annotated[int, Touchy()]) == {"type": "integer"}
    assert param_definition(MixedKeys) == {"type": "object", "1": "one", "required": ["x"]}


# --------------------------------------------------------------------------- pydantic 1


class V1Order:
    """Shaped like a pydantic 1 model: only ``schema()``, nested models under
    ``definitions`` and referenced as ``#/definitions/...``."""

    @classmethod
    def schema(cls) -> dict[str, Any]:
        return {
            "title": "V1Order",
            "type": "object",
            "properties": {
                "id": {"title": "Id", "type": "integer"},
                "ship_to": {"$ref": "#/definitions/V1Address"},
            },
            "required": ["id", "ship_to"],
            "definitions": {
                "V1Address": {
                    "title": "V1Address",
                    "type": "object",
                    "properties": {"city": {"title": "City", "type": "string"}},
                    "required": ["city"],
                }
            },
        }


def test_a_pydantic_1_schema_method_describes_the_class_with_definitions_hoisted() -> None:
    @tool
    async def place_v1(order: V1Order) -> V1Order:
        return order

    schema = place_v1.metadata.input_schema
    assert schema["properties"]["order"] == {"$ref": "#/$defs/V1Order"}
    assert sorted(schema["$defs"]) == ["V1Address", "V1Order"]
    assert schema["$defs"]["V1Order"]["properties"]["ship_to"] == {"$ref": "#/$defs/V1Address"}
    assert schema["$defs"]["V1Order"]["required"] == ["id", "ship_to"]
    assert "definitions" not in schema["$defs"]["V1Order"]
    order = {"id": 1, "ship_to": {"city": "Springfield"}}
    assert accepts(schema, {"order": order})
    assert not accepts(schema, {"order": {"id": 1, "ship_to": {}}})
    assert not accepts(schema, {"order": {"id": "one", "ship_to": {"city": "x"}}})
    assert accepts(place_v1.metadata.output_schema, order)
    assert not accepts(place_v1.metadata.output_schema, {"id": 1})


def test_a_schema_method_that_cannot_be_called_on_the_class_leaves_an_untyped_object() -> None:
    class Plain:
        def schema(self) -> dict[str, Any]:  # an instance method, not a model's classmethod
            return {"type": "string"}

    assert param_definition(Plain) == {"type": "object", "title": "Plain"}
