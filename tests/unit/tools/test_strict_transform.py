"""The OpenAI strict transform, rule by rule (../shared/STRICT.md), as whole-dict comparisons."""

from __future__ import annotations

import copy
import json
from datetime import date, datetime
from enum import Enum
from typing import Annotated, Any, Literal
from uuid import UUID

import pytest
from jsonschema import Draft202012Validator
from pydantic import AnyUrl, BaseModel, ConfigDict, Field

from tools.schema import model_schema
from tools.schema._strict import StrictConversion, StrictIssue, to_strict_schema

NULL = {"type": "null"}


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The strict schema, asserting the conversion found nothing unsupported."""
    before = copy.deepcopy(schema)
    result = to_strict_schema(schema)
    assert result.unsupported == (), result.unsupported
    assert schema == before, "the input schema was mutated"
    Draft202012Validator.check_schema(result.schema)
    return result.schema


def issues(schema: Any) -> list[tuple[str, str]]:
    return [(i.path, i.reason) for i in to_strict_schema(schema).unsupported]


def paths(schema: Any) -> list[str]:
    return [path for path, _ in issues(schema)]


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A strict object node with every property required."""
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
        **extra,
    }


# -- pydantic models ------------------------------------------------------------------------


class WeatherRequest(BaseModel):
    city: str = Field(description="City name, e.g. 'Lisbon'")
    units: Literal["metric", "imperial"] = "metric"


def test_design_example_weather_request() -> None:
    assert strict(WeatherRequest.model_json_schema()) == obj(
        {
            "city": {"type": "string", "description": "City name, e.g. 'Lisbon'"},
            "units": {
                "anyOf": [{"type": "string", "enum": ["metric", "imperial"]}, NULL],
                "description": "Defaults to 'metric'.",
            },
        }
    )


class Defaults(BaseModel):
    limit: int = 10
    query: str = Field("*", description="Search text")
    ratio: float = Field(0.5, description="A ratio!")
    flag: bool = False
    tags: list[str] = []
    tags_factory: list[str] = Field(default_factory=list)
    note: str | None = None
    maybe: int | None = 5


def test_defaults_become_nullable_required_and_described() -> None:
    assert strict(Defaults.model_json_schema()) == obj(
        {
            "limit": {"type": ["integer", "null"], "description": "Defaults to 10."},
            "query": {"type": ["string", "null"], "description": "Search text. Defaults to '*'."},
            "ratio": {"type": ["number", "null"], "description": "A ratio! Defaults to 0.5."},
            "flag": {"type": ["boolean", "null"], "description": "Defaults to false."},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, NULL],
                "description": "Defaults to [].",
            },
            "tags_factory": {"anyOf": [{"type": "array", "items": {"type": "string"}}, NULL]},
            "note": {"anyOf": [{"type": "string"}, NULL]},
            "maybe": {"anyOf": [{"type": "integer"}, NULL], "description": "Defaults to 5."},
        }
    )


class Color(str, Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    """A postal address."""

    city: str
    zip: str | None = None


ADDRESS = obj(
    {"city": {"type": "string"}, "zip": {"anyOf": [{"type": "string"}, NULL]}},
    description="A postal address.",
)


class Nested(BaseModel):
    color: Color = Color.RED
    home: Address = Field(description="Where the user lives")
    office: Address
    work: Address | None = None
    alt: Address = Address(city="Porto")


def test_enums_and_nested_models() -> None:
    assert strict(Nested.model_json_schema()) == obj(
        {
            "color": {
                "anyOf": [{"$ref": "#/$defs/Color"}, NULL],
                "description": "Defaults to 'red'.",
            },
            # a $ref with a sibling description is inlined, keeping the field's description
            "home": {**ADDRESS, "description": "Where the user lives"},
            "office": {"$ref": "#/$defs/Address"},
            "work": {"anyOf": [{"$ref": "#/$defs/Address"}, NULL]},
            "alt": {
                "anyOf": [{"$ref": "#/$defs/Address"}, NULL],
                "description": 'Defaults to {"city": "Porto", "zip": null}.',
            },
        },
        **{"$defs": {"Color": {"type": "string", "enum": ["red", "green"]}, "Address": ADDRESS}},
    )


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class PetOwner(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


def test_discriminated_union_becomes_anyof_and_keeps_its_tag_required() -> None:
    assert strict(PetOwner.model_json_schema()) == obj(
        {"pet": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}},
        **{
            "$defs": {
                "Cat": obj(
                    {
                        "kind": {
                            "type": "string",
                            "const": "cat",
                            "description": "Defaults to 'cat'.",
                        },
                        "lives": {"type": ["integer", "null"], "description": "Defaults to 9."},
                    }
                ),
                "Dog": obj({"kind": {"type": "string", "const": "dog"}, "good": {"type": "boolean"}}),
            }
        },
    )


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Tree(BaseModel):
    root: Node
    spare: Node | None = None


def test_recursive_models_keep_defs_and_refs() -> None:
    node = obj(
        {
            "value": {"type": "integer"},
            "children": {
                "anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Node"}}, NULL],
                "description": "Defaults to [].",
            },
        }
    )
    assert strict(Tree.model_json_schema()) == obj(
        {
            "root": {"$ref": "#/$defs/Node"},
            "spare": {"anyOf": [{"$ref": "#/$defs/Node"}, NULL]},
        },
        **{"$defs": {"Node": node}},
    )


def test_optional_recursive_reference_becomes_nullable() -> None:
    # a hand-written linked list: `next` is optional and its $ref does not admit null
    schema = {
        "type": "object",
        "properties": {"head": {"$ref": "#/$defs/Item"}},
        "required": ["head"],
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"value": {"type": "integer"}, "next": {"$ref": "#/$defs/Item"}},
                "required": ["value"],
            }
        },
    }
    item = obj({"value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/$defs/Item"}, NULL]}})
    assert strict(schema) == obj({"head": {"$ref": "#/$defs/Item"}}, **{"$defs": {"Item": item}})


def test_recursive_root_model_is_inlined_at_the_root() -> None:
    schema = Node.model_json_schema()
    assert "$ref" in schema  # pydantic puts a recursive root behind a $ref
    out = strict(schema)
    assert out["type"] == "object"
    assert out["required"] == ["value", "children"]
    assert out["$defs"]["Node"]["properties"]["children"]["anyOf"][0]["items"] == {"$ref": "#/$defs/Node"}


class Constrained(BaseModel):
    n: Annotated[int, Field(ge=1, le=5, multiple_of=1)]
    x: Annotated[float, Field(gt=0, lt=1)]
    name: Annotated[str, Field(min_length=2, max_length=9, pattern=r"^[a-z]+$")]
    few: Annotated[list[int], Field(min_length=1, max_length=3)]
    unique: set[int]
    when: datetime
    day: date
    ident: UUID
    mail: Annotated[str, Field(json_schema_extra={"format": "email"})]
    url: AnyUrl


def test_constraints_kept_or_dropped() -> None:
    assert strict(Constrained.model_json_schema()) == obj(
        {
            "n": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "name": {"type": "string", "pattern": "^[a-z]+$"},
            "few": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
            "unique": {"type": "array", "items": {"type": "integer"}},
            "when": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "ident": {"type": "string", "format": "uuid"},
            "mail": {"type": "string", "format": "email"},
            "url": {"type": "string"},
        }
    )


class Maps(BaseModel):
    labels: dict[str, int]
    pair: tuple[int, str]
    many: tuple[int, ...]


def test_maps_and_tuples_are_unsupported_with_field_paths() -> None:
    result = to_strict_schema(Maps.model_json_schema())
    assert [i.path for i in result.unsupported] == ["labels", "pair"]
    assert "dict[str, X]" in result.unsupported[0].reason
    assert "prefixItems" in result.unsupported[1].reason
    # the rest is still converted
    assert result.schema["properties"]["many"] == {"type": "array", "items": {"type": "integer"}}


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    x: int


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


class NoArgs(BaseModel):
    pass


def test_model_config_extra() -> None:
    assert paths(Loose.model_json_schema()) == ["(root)"]
    assert strict(Closed.model_json_schema()) == obj({"x": {"type": "integer"}})
    # pydantic leaves a model without fields open; a tool's request model is closed
    assert paths(NoArgs.model_json_schema()) == ["(root)"]
    assert strict(model_schema(NoArgs)) == obj({})


def test_older_pydantic_single_allof_is_merged() -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"allOf": [{"$ref": "#/$defs/A"}], "description": "Home", "title": "Home"},
            "other": {
                "allOf": [{"$ref": "#/$defs/A"}],
                "default": {"city": "x"},
                "title": "Other",
            },
            "plain": {"allOf": [{"$ref": "#/$defs/A"}]},
        },
        "required": ["home", "plain"],
        "$defs": {"A": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    a = obj({"city": {"type": ["string", "null"]}})
    assert strict(schema) == obj(
        {
            "home": {**a, "description": "Home"},
            "other": {
                "anyOf": [{"$ref": "#/$defs/A"}, NULL],
                "description": 'Defaults to {"city": "x"}.',
            },
            "plain": {"$ref": "#/$defs/A"},
        },
        **{"$defs": {"A": a}},
    )


# -- hand-written schemas ---------------------------------------------------------------------


def test_property_names_are_never_keywords() -> None:
    # BFCL-style: properties called like JSON Schema keywords
    names = ["type", "format", "items", "default", "required", "properties", "enum", "$ref"]
    schema = {
        "type": "object",
        "properties": {name: {"type": "string", "description": f"The {name}"} for name in names},
        "required": ["type", "items"],
    }
    expected = {
        name: {
            "type": "string" if name in ("type", "items") else ["string", "null"],
            "description": f"The {name}",
        }
        for name in names
    }
    assert strict(schema) == obj(expected)


def test_bfcl_style_function() -> None:
    schema = {
        "type": "object",
        "properties": {
            "format": {"type": "string", "enum": ["json", "csv"], "default": "json"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string"},
                        "default": {"type": "integer", "minimum": 0, "examples": [3]},
                    },
                    "required": ["type"],
                },
                "uniqueItems": True,
            },
        },
        "required": ["items"],
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:bfcl:fn",
        "title": "fn",
    }
    assert strict(schema) == obj(
        {
            "format": {
                "anyOf": [{"type": "string", "enum": ["json", "csv"]}, NULL],
                "description": "Defaults to 'json'.",
            },
            "items": {
                "type": "array",
                "items": obj(
                    {
                        "type": {"type": "string"},
                        "default": {"type": ["integer", "null"], "minimum": 0},
                    }
                ),
            },
        }
    )


def test_type_lists_untyped_objects_and_multi_types() -> None:
    schema = {
        "properties": {  # no "type": inferred object
            "a": {"type": ["string", "null"]},
            "b": {"type": ["string", "null"], "description": "B"},
            "c": {"type": ["string", "integer"], "pattern": "^x", "minimum": 1, "minLength": 1},
            "d": {"type": ["string", "integer"]},
            "e": {"properties": {"x": {"type": "number"}}, "required": ["x"]},
        },
        "required": ["a", "c"],
    }
    assert strict(schema) == obj(
        {
            "a": {"type": ["string", "null"]},
            "b": {"type": ["string", "null"], "description": "B"},
            "c": {"anyOf": [{"type": "string", "pattern": "^x"}, {"type": "integer", "minimum": 1}]},
            "d": {"anyOf": [{"type": "string"}, {"type": "integer"}, NULL]},
            "e": {"anyOf": [obj({"x": {"type": "number"}}), NULL]},
        }
    )


def test_oneof_becomes_anyof_and_nested_unions_flatten() -> None:
    schema = {
        "type": "object",
        "properties": {
            "v": {
                "oneOf": [
                    {"type": "string"},
                    {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                ],
                "description": "A value",
            }
        },
        "required": ["v"],
    }
    assert strict(schema) == obj(
        {
            "v": {
                "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}],
                "description": "A value",
            }
        }
    )


def test_union_siblings_are_pushed_into_branches() -> None:
    schema = {
        "type": "object",
        "properties": {"when": {"type": "string", "anyOf": [{"format": "date"}, {"format": "time"}]}},
        "required": ["when"],
    }
    assert strict(schema) == obj(
        {
            "when": {
                "anyOf": [
                    {"type": "string", "format": "date"},
                    {"type": "string", "format": "time"},
                ]
            }
        }
    )


def test_definitions_and_root_ref_recursion() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/definitions/A"},
            "again": {"$ref": "#"},
        },
        "required": ["a", "again"],
        "definitions": {"A": {"type": "integer", "maximum": 3, "title": "A"}},
    }
    assert strict(schema) == obj(
        {"a": {"$ref": "#/$defs/A"}, "again": {"$ref": "#"}},
        **{"$defs": {"A": {"type": "integer", "maximum": 3}}},
    )


def test_pure_constraints_are_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 1, "maxLength": 3, "format": "uri", "not": {}},
            "l": {"type": "array", "items": {"type": "number"}, "contains": {"const": 1}},
            "o": {
                "type": "object",
                "properties": {"k": {"type": "string"}},
                "additionalProperties": False,
                "propertyNames": {"pattern": "^k"},
                "minProperties": 1,
            },
        },
        "required": ["s", "l", "o"],
        "dependentRequired": {"s": ["l"]},
        "examples": [{"s": "x"}],
        "$comment": "hand-written",
    }
    assert strict(schema) == obj(
        {
            "s": {"type": "string"},
            "l": {"type": "array", "items": {"type": "number"}},
            "o": obj({"k": {"type": ["string", "null"]}}),
        }
    )


def test_nullable_required_and_enum_with_null_stay() -> None:
    schema = {
        "type": "object",
        "properties": {
            "e": {"enum": ["a", None]},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "c": {"const": 3},
        },
        "required": ["e", "c"],
    }
    assert strict(schema) == obj(
        {"e": {"enum": ["a", None]}, "n": {"anyOf": [{"type": "integer"}, NULL]}, "c": {"const": 3}}
    )


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "additionalProperties": False}, obj({})),
        ({"type": "object", "properties": {}, "additionalProperties": False}, obj({})),
        (
            {"type": "object", "description": "No args.", "additionalProperties": False},
            obj({}, description="No args."),
        ),
    ],
)
def test_closed_root_without_properties_is_the_strict_no_argument_form(
    schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert strict(schema) == expected


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "object"},
        {"type": "object", "properties": {}},
        {"type": "object", "description": "Any arguments."},
        {"description": "Arguments for the tool, as a JSON object."},
    ],
)
def test_open_root_without_properties_is_free_form_not_strict(schema: dict[str, Any]) -> None:
    """Exported strict, such a tool could only ever be sent {}: it must stay non-strict."""
    result = to_strict_schema(schema)
    assert [issue.path for issue in result.unsupported] == ["(root)"]
    assert "could only ever send {}" in result.unsupported[0].reason
    assert "additionalProperties: false" in result.unsupported[0].reason


def test_nested_object_without_properties_is_closed_only_when_it_says_so() -> None:
    closed = {"type": "object", "properties": {}, "additionalProperties": False}
    schema = {"type": "object", "properties": {"o": closed}}
    assert strict(schema) == obj({"o": {"anyOf": [obj({}), NULL]}})
    open_ = {"type": "object", "properties": {"o": {"type": "object", "properties": {}}}}
    assert paths(open_) == ["o"]


def test_recursive_def_inlined_with_a_description_keeps_the_ref() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N", "description": "Top"}},
        "required": ["n"],
        "$defs": {
            "N": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/N", "description": "Next one"}},
                "required": ["next"],
            }
        },
    }
    # the outer use is inlined; inside it, inlining again would never end: a bare $ref
    # (the description of that inner use is lost, the schema stays valid)
    n_body = obj({"next": {"$ref": "#/$defs/N"}})
    assert strict(schema) == obj({"n": {**n_body, "description": "Top"}}, **{"$defs": {"N": n_body}})


def test_odd_defaults_are_described_safely() -> None:
    schema = {
        "type": "object",
        "properties": {
            "big": {"type": "string", "default": "x" * 500},
            "odd": {"type": "string", "default": {1, 2}},
            "quote": {"type": "string", "default": "it's"},
            "nan": {"type": "number", "default": float("nan")},
        },
    }
    props = strict(schema)["properties"]
    assert props["big"]["description"] == "Has a default value, used when null is sent."
    assert props["odd"]["description"] == "Has a default value, used when null is sent."
    assert props["quote"]["description"] == "Defaults to 'it\\'s'."
    assert props["nan"]["description"] == "Has a default value, used when null is sent."


def test_result_types() -> None:
    result = to_strict_schema({"type": "object", "additionalProperties": False})
    assert isinstance(result, StrictConversion)
    assert result.ok
    issue = StrictIssue("a.b", "why")
    assert str(issue) == "a.b: why"
    with pytest.raises(AttributeError):
        issue.path = "x"  # type: ignore[misc]


def test_every_output_is_plain_json() -> None:
    out = strict(Nested.model_json_schema())
    assert json.loads(json.dumps(out)) == out
    # a fresh dict every call: mutating one result does not affect the next
    out["properties"].clear()
    assert strict(Nested.model_json_schema())["properties"]
