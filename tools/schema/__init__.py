"""One home for schemas: JSON-schema building, the wire formats, the strict transform.

- :mod:`tools.schema.export`: request-model schemas and the OpenAI (strict too),
  Anthropic, MCP and Gemini tool definitions, as fresh dicts every call.
- ``_strict``: the OpenAI strict-mode transform (:func:`to_strict_schema`).
- ``_nulls``: dropping nulls a schema does not admit ("null means use the default").
- ``_gemini``: the OpenAPI 3.0 subset of Gemini function declarations.
- ``_dialects``: schemas in the dialects of public function-calling corpora.
"""

from tools.schema._dialects import normalize_parameters
from tools.schema._nulls import NullStripper
from tools.schema._strict import StrictConversion, StrictIssue, to_strict_schema
from tools.schema.export import (
    OnUnsupported,
    anthropic_tool,
    gemini_tool,
    mcp_tool,
    model_schema,
    openai_tool,
    strict_parameters,
    tool_input_schema,
    without_properties,
)

__all__ = [
    "NullStripper",
    "OnUnsupported",
    "StrictConversion",
    "StrictIssue",
    "anthropic_tool",
    "gemini_tool",
    "mcp_tool",
    "model_schema",
    "normalize_parameters",
    "openai_tool",
    "strict_parameters",
    "to_strict_schema",
    "tool_input_schema",
    "without_properties",
]
