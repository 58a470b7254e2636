"""JSON-schema building and the wire formats: OpenAI (strict too), Anthropic, MCP, Gemini.

Request models and hand-written ``parameters`` are the source; every wire format comes
from this module as fresh dicts. The strict transform itself lives in ``tools.schema._strict``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from tools.errors import UnsupportedSchemaError

if TYPE_CHECKING:
    from tools.base import BaseTool

logger = logging.getLogger(__name__)

OnUnsupported = Literal["warn", "raise"]

# Keywords whose value is a map of *names* (never keywords) to schemas.
_NAME_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def model_schema(
    model: type[BaseModel],
    *,
    closed: bool = True,
    mode: Literal["validation", "serialization"] = "validation",
) -> dict[str, Any]:
    """The JSON schema of ``model`` without pydantic's ``title`` noise.

    Args:
        model: A pydantic model class.
        closed: Mark object nodes ``additionalProperties: false`` (unknown arguments are
            rejected at validation), unless the model allows extra keys.
        mode: pydantic's schema mode.
    """
    schema = model.model_json_schema(mode=mode)
    _drop_titles(schema)
    if closed and model.model_config.get("extra") != "allow":
        _close_objects(schema)
    return schema


def tool_input_schema(tool: BaseTool[Any, Any]) -> dict[str, Any]:
    """The argument schema of ``tool``: its ``parameters`` verbatim, else its request model's."""
    if tool.parameters is not None:
        return copy.deepcopy(tool.parameters)
    if tool.RequestModel is not None:
        return model_schema(tool.RequestModel)
    return copy.deepcopy(_EMPTY_OBJECT)


def strict_parameters(
    tool_name: str, schema: Mapping[str, Any], on_unsupported: OnUnsupported = "warn"
) -> tuple[dict[str, Any], bool]:
    """The OpenAI strict form of ``schema`` and whether strict mode can be used.

    When the schema holds a construct strict mode cannot express, the original schema is
    returned with ``False`` and a WARNING naming the tool and the fields is logged, or
    :class:`~tools.errors.UnsupportedSchemaError` is raised with ``on_unsupported="raise"``.
    """
    from tools.schema._strict import to_strict_schema

    conversion = to_strict_schema(schema)
    for warning in conversion.warnings:
        logger.warning("tool %r: %s", tool_name, warning)
    if not conversion.unsupported:
        return conversion.schema, True
    problems = "; ".join(f"{issue.path}: {issue.reason}" for issue in conversion.unsupported)
    if on_unsupported == "raise":
        raise UnsupportedSchemaError(
            f"tool {tool_name!r} cannot be exported with strict=True: {problems}. Change those "
            "fields (e.g. a list of key/value objects instead of a free-form map) or export "
            "it non-strict."
        )
    logger.warning("tool %r exported with strict=false: %s", tool_name, problems)
    return dict(schema), False


def openai_tool(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    *,
    strict: bool = False,
    on_unsupported: OnUnsupported = "warn",
) -> dict[str, Any]:
    """One Chat Completions tool: ``{"type": "function", "function": {...}}``."""
    function: dict[str, Any] = {"name": name, "description": description}
    if strict:
        converted, ok = strict_parameters(name, parameters, on_unsupported)
        function["parameters"] = converted
        function["strict"] = ok
    else:
        function["parameters"] = copy.deepcopy(dict(parameters))
    return {"type": "function", "function": function}


def anthropic_tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """One Anthropic Messages API tool: ``{"name", "description", "input_schema"}``."""
    return {
        "name": name,
        "description": description,
        "input_schema": copy.deepcopy(dict(parameters)),
    }


def mcp_tool(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    output_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One MCP ``tools/list`` entry: ``{"name", "description", "inputSchema", "outputSchema"?}``."""
    entry: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": copy.deepcopy(dict(parameters)),
    }
    if output_schema is not None and output_schema.get("type") == "object":
        entry["outputSchema"] = copy.deepcopy(dict(output_schema))
    return entry


def gemini_tool(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    *,
    on_unsupported: OnUnsupported = "warn",
) -> dict[str, Any]:
    """One Gemini function declaration: ``{"name", "description", "parameters"?}``.

    ``parameters`` is the OpenAPI 3.0 subset Gemini reads (see ``tools.schema._gemini``),
    left out for a tool that takes no arguments. What Gemini cannot express is exported as
    near as possible with a WARNING naming the tool and the field, or raises
    :class:`~tools.errors.UnsupportedSchemaError` with ``on_unsupported="raise"``.
    """
    from tools.schema._gemini import GEMINI_NAME, to_gemini_schema

    conversion = to_gemini_schema(parameters)
    issues = list(conversion.issues)
    if not GEMINI_NAME.match(name):
        issues.insert(0, ("(name)", "Gemini function names start with a letter or '_' and hold only [A-Za-z0-9_]"))
    if issues:
        problems = "; ".join(f"{path}: {reason}" for path, reason in issues)
        if on_unsupported == "raise":
            raise UnsupportedSchemaError(
                f"tool {name!r} cannot be exported for Gemini exactly: {problems}. Change those fields "
                "(e.g. a list of key/value objects instead of a free-form map) or export with warnings."
            )
        logger.warning("tool %r exported for Gemini with losses: %s", name, problems)
    declaration: dict[str, Any] = {"name": name, "description": description}
    if conversion.schema is not None:
        declaration["parameters"] = conversion.schema
    return declaration


def without_properties(schema: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """A copy of an object schema with the top-level properties ``names`` removed."""
    out = copy.deepcopy(dict(schema))
    props = out.get("properties")
    if isinstance(props, dict):
        for key in names:
            props.pop(key, None)
    if isinstance(out.get("required"), list):
        out["required"] = [key for key in out["required"] if key not in names]
    return out


def _drop_titles(node: Any) -> None:
    """Remove ``title`` keywords in place, leaving properties *named* ``title`` alone."""
    if isinstance(node, list):
        for item in node:
            _drop_titles(item)
        return
    if not isinstance(node, dict):
        return
    node.pop("title", None)
    for key, value in node.items():
        if key in _NAME_MAPS and isinstance(value, dict):
            for sub in value.values():
                _drop_titles(sub)
        elif key not in ("enum", "const", "default", "examples"):
            _drop_titles(value)


def _close_objects(schema: dict[str, Any]) -> None:
    """Add ``additionalProperties: false`` to the root and model definitions."""
    nodes = [schema, *schema.get("$defs", {}).values()]
    for node in nodes:
        if isinstance(node, dict) and "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
