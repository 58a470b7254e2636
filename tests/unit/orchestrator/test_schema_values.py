"""Arguments generated from JSON schemas (what ``TestModel`` calls tools with): valid for every
schema of a varied corpus and for every builtin tool, deterministic per seed, varied across seeds."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from orchestrator import OrchestratorService, Settings
from orchestrator._regex_sample import Unsupported, sample
from orchestrator._schema_values import schema_arguments, schema_value
from tools import BaseTool, LocalToolRegistry
from tools.builtin.workspace import SkillLibrary, TodoStore, Workspace, workspace_tools
from tools.routing import ToolSearchTool

CORPUS: dict[str, dict[str, Any]] = {
    "empty": {"type": "object", "properties": {}},
    "scalars": {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "n": {"type": "number"},
            "b": {"type": "boolean"},
        },
        "required": ["s", "i", "n", "b"],
        "additionalProperties": False,
    },
    "enums_and_consts": {
        "type": "object",
        "properties": {
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "level": {"enum": [1, 2, 3]},
            "mode": {"const": "fast"},
            "maybe": {"enum": [None, "x"]},
        },
        "required": ["units", "level", "mode", "maybe"],
    },
    "bounds": {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 18, "maximum": 20},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "even": {"type": "integer", "multipleOf": 2, "minimum": 3},
            "price": {"type": "number", "multipleOf": 0.5, "minimum": 10.2, "maximum": 11},
            "big": {"type": "integer", "minimum": 1000000},
            "negative": {"type": "integer", "maximum": -5},
            "old_style": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        },
        "required": ["age", "ratio", "even", "price", "big", "negative"],
    },
    "strings": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"},
            "slug": {"type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$", "maxLength": 20},
            "short": {"type": "string", "minLength": 12, "maxLength": 12},
            "tiny": {"type": "string", "maxLength": 2},
            "phone": {"type": "string", "pattern": "^\\+?[1-9]\\d{6,14}$"},
            "hex": {"type": "string", "pattern": "^#(?:[0-9a-fA-F]{3}){1,2}$"},
            "lookahead": {"type": "string", "pattern": "^(?=.*x)"},  # not generated: a fallback must still match
        },
        "required": ["code", "slug", "short", "tiny", "phone", "hex"],
    },
    "formats": {
        "type": "object",
        "properties": {
            name: {"type": "string", "format": name}
            for name in ("date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "uuid", "duration")
        },
        "required": ["date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "uuid", "duration"],
    },
    "nested": {
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "geo": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
                },
                "required": ["street", "geo"],
                "additionalProperties": False,
            }
        },
        "required": ["address"],
    },
    "arrays": {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3, "uniqueItems": True},
            "points": {
                "type": "array",
                "items": {"type": "integer", "enum": [1, 2, 3]},
                "minItems": 3,
                "uniqueItems": True,
            },
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 1}},
        },
        "required": ["tags", "points", "pair", "matrix"],
    },
    "any_of_nullable": {
        "type": "object",
        "properties": {
            "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
            "name": {"type": ["string", "null"], "minLength": 3},
            "choice": {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "integer"}]},
        },
        "required": ["limit", "name", "choice"],
    },
    "one_of": {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                        "required": ["kind", "r"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                        "required": ["kind", "side"],
                        "additionalProperties": False,
                    },
                ]
            },
            "number": {"oneOf": [{"type": "integer", "multipleOf": 3}, {"type": "integer", "multipleOf": 5}]},
        },
        "required": ["shape", "number"],
    },
    "all_of": {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer", "minimum": 5}}, "required": ["b"]},
        ]
    },
    "refs_and_recursion": {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value", "children"],
            },
            "Unit": {"type": "string", "enum": ["c", "f"]},
        },
        "properties": {"tree": {"$ref": "#/$defs/Node"}, "unit": {"$ref": "#/$defs/Unit", "description": "Unit."}},
        "required": ["tree", "unit"],
    },
    "min_properties_and_dependencies": {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string"},
            "card": {"type": "string"},
            "cvc": {"type": "string"},
        },
        "minProperties": 2,
        "dependentRequired": {"card": ["cvc"]},
        "required": ["card"],
    },
    "untyped": {
        "type": "object",
        "properties": {"anything": {}, "described": {"description": "free"}},
        "required": ["anything", "described"],
    },
    "map": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1},
    "draft7_tuple": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"xy": {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "minItems": 2}},
        "required": ["xy"],
    },
    "not": {
        "type": "object",
        "properties": {"word": {"type": "string", "not": {"const": "word-example"}}},
        "required": ["word"],
    },
}


def validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_schema_of_the_corpus_gets_valid_arguments_for_many_seeds(name: str) -> None:
    schema = CORPUS[name]
    check = validator(schema)
    for seed in range(25):
        arguments = schema_arguments(schema, seed)
        errors = [e.message for e in check.iter_errors(arguments)]
        assert errors == [], f"seed {seed}: {json.dumps(arguments)}"


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_arguments_are_deterministic_per_seed(name: str) -> None:
    assert schema_arguments(CORPUS[name], 3) == schema_arguments(CORPUS[name], 3)


def test_seeds_vary_the_arguments() -> None:
    seen = {json.dumps(schema_arguments(CORPUS["enums_and_consts"], seed), sort_keys=True) for seed in range(10)}
    assert len(seen) > 1


def test_values_are_plausible() -> None:
    arguments = schema_arguments(CORPUS["strings"], 0)
    assert re.fullmatch(r"[A-Z]{3}-\d{4}", arguments["code"])
    assert len(arguments["short"]) == 12
    assert schema_value({"type": "string", "description": "x"}, 0) == "value-example"
    named = schema_arguments(
        {
            "type": "object",
            "properties": {"url": {"type": "string"}, "file_path": {"type": "string"}},
            "required": ["url", "file_path"],
        }
    )
    assert named == {"url": "https://example.org/", "file_path": "example.txt"}


def test_an_unsatisfiable_schema_still_gives_a_candidate() -> None:
    impossible = {
        "type": "object",
        "properties": {"x": {"type": "integer", "minimum": 5, "maximum": 1}},
        "required": ["x"],
    }
    assert "x" in schema_arguments(impossible)


def test_regex_samples_match_or_are_refused() -> None:
    rng = random.Random(0)
    for pattern in (r"^[a-z]{2,5}\d?$", r"(ab|cd)+e", r"[^0-9]{3}", r"\w+@\w+\.com", r"^\s*x\s*$", r"a{3}"):
        for _ in range(20):
            assert re.search(pattern, sample(pattern, rng)), pattern
    for unsupported in (r"(?=x)", r"(a)\1", r"(?<!a)b", "(unclosed", r"x{5,2}"):
        with pytest.raises(Unsupported):
            sample(unsupported, rng)


# ------------------------------------------------------------------ every builtin tool


def builtin_tools(tmp_path: Path) -> Iterator[tuple[str, BaseTool[Any, Any]]]:
    with OrchestratorService(Settings(data_dir=tmp_path / "data")) as service:
        for name in service.registry.names():
            tool = service.registry.get_tool(name)
            assert tool is not None
            yield name, tool
    workspace = Workspace(tmp_path, todos=TodoStore(), skills=SkillLibrary())
    for tool in workspace_tools(workspace):
        yield tool.name, tool
    yield "tool_search", ToolSearchTool(LocalToolRegistry().for_agent("main"))


def test_every_builtin_tool_accepts_the_generated_arguments(tmp_path: Path) -> None:
    checked = []
    for name, tool in builtin_tools(tmp_path):
        schema = tool.input_schema()
        check = validator(schema)
        for seed in range(6):  # several seeds: every action of the multi-action tools
            arguments = schema_arguments(schema, seed)
            assert [e.message for e in check.iter_errors(arguments)] == [], (name, arguments)
            tool.validate_input(**arguments)  # the tool's own validation, without running it
        checked.append(name)
    assert {"math_solver", "web", "module_admin", "read", "grep", "user_context"} <= set(checked)
    assert len(checked) >= 30
