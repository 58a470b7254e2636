"""Plain functions as tools: schema from the signature, descriptions from the docstring."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tools import FunctionTool, LocalToolRegistry, ToolDefinitionError


def google(query: str, limit: int = 10) -> list[str]:
    """Search the documentation.

    Longer explanation that is not part of the description.

    Args:
        query: Words to look for.
        limit (int): How many hits to return.

    Returns:
        The matching titles.

    Raises:
        ValueError: Never, really.
    """
    return [query] * min(limit, 2)


def numpy_style(x, scale=2.0):  # type: ignore[no-untyped-def]
    """Scale a number.

    Parameters
    ----------
    x : float
        The number to scale.
    scale : float, optional
        The factor.
    """
    return x * scale


def sphinx_style(text, times):  # type: ignore[no-untyped-def]
    """Repeat text.

    :param text: The text to repeat.
    :type text: str
    :param times: How often.
    :type times: int
    :raises ValueError: if times is negative.
    """
    return text * times


def untyped_google(name, tags, count=3):  # type: ignore[no-untyped-def]
    """Greet someone.

    Args:
        name (str): Who to greet.
        tags (list of str): Labels.
        count: Repetitions.
    """
    return f"hi {name} {tags} {count}"


def test_google_docstring_summary_only_and_param_descriptions() -> None:
    tool = FunctionTool(google)
    assert tool.name == "google"
    assert tool.description == "Search the documentation."
    assert tool.input_schema() == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "limit": {"type": "integer", "default": 10, "description": "How many hits to return."},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert tool(query="a")["data"] == ["a", "a"]


def test_numpy_untyped_uses_docstring_types() -> None:
    tool = FunctionTool(numpy_style)
    schema = tool.input_schema()
    assert tool.description == "Scale a number."
    assert schema["properties"]["x"] == {"type": "number", "description": "The number to scale."}
    assert schema["properties"]["scale"] == {
        "type": "number",
        "default": 2.0,
        "description": "The factor.",
    }
    assert tool(x=2)["data"] == 4.0
    assert tool(x="two")["error_type"] == "validation_error"


def test_sphinx_docstring() -> None:
    tool = FunctionTool(sphinx_style)
    props = tool.input_schema()["properties"]
    assert tool.description == "Repeat text."
    assert props["text"] == {"type": "string", "description": "The text to repeat."}
    assert props["times"] == {"type": "integer", "description": "How often."}
    assert tool(text="ab", times=2)["data"] == "abab"


def test_untyped_google_with_types_in_docstring_and_defaults() -> None:
    props = FunctionTool(untyped_google).input_schema()["properties"]
    assert props["name"]["type"] == "string"
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "description": "Labels."}
    assert props["count"] == {"type": "integer", "default": 3, "description": "Repetitions."}


def test_description_never_contains_signature_or_sections() -> None:
    description = FunctionTool(google).description
    for leak in ("Args", "Raises", "Returns", "query:", "(query", "->"):
        assert leak not in description


def test_async_function_and_kwargs_and_positional_only() -> None:
    async def fetch(url: str, /, retries: int = 1, **extra: Any) -> dict[str, Any]:
        """Fetch a URL."""
        await asyncio.sleep(0)
        return {"url": url, "retries": retries, "extra": extra}

    tool = FunctionTool(fetch)
    assert tool.is_async and not FunctionTool(google).is_async
    assert tool(url="u", lang="en")["data"] == {"url": "u", "retries": 1, "extra": {"lang": "en"}}
    assert asyncio.run(tool.aexecute(url="v")).data["url"] == "v"


def test_star_args_rejected_with_fix() -> None:
    def bad(*items: int) -> int:
        return sum(items)

    with pytest.raises(ToolDefinitionError, match="use a list parameter"):
        FunctionTool(bad)


def test_lambda_needs_a_name() -> None:
    with pytest.raises(ToolDefinitionError, match="invalid"):
        FunctionTool(lambda x: x)
    assert FunctionTool(lambda x: x, name="identity")(x=1)["data"] == 1


def test_parameter_called_name_through_registry() -> None:
    def rename(name: str, new_name: str) -> str:
        """Rename a file."""
        return f"{name}->{new_name}"

    registry = LocalToolRegistry()
    registry.register(rename)
    assert registry("rename", name="a", new_name="b")["data"] == "a->b"
    assert registry.call_tool("rename", name="a", new_name="b").data == "a->b"
    bound = registry.get("rename")
    assert bound is not None and bound(name="a", new_name="c")["data"] == "a->c"
