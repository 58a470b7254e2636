"""Plain functions as tools: schema from the signature, descriptions from the docstring."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tools import FunctionTool, LocalToolRegistry, ToolDefinitionError


def google(query: str, limit: int = 10) -> list[str]:
    """Search the documentation.

    Prefer short queries; never guess a product id.

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


def test_google_docstring_prose_without_sections_and_param_descriptions() -> None:
    tool = FunctionTool(google)
    assert tool.name == "google"
    # The usage guidance after the summary is prompt text; the sections are not.
    assert tool.description == "Search the documentation.\n\nPrefer short queries; never guess a product id."
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


def lookup_order(order_id: int, _client: Any = None, _retries: int = 3) -> dict[str, Any]:
    """Look up an order by its id.

    Never guess an id: ask the user when you do not know it.

    Args:
        order_id: The order's numeric id.
        _client: Injected by the application (not for the model).

    Returns:
        The order.

    Raises:
        KeyError: No such order.
    """
    return {"id": order_id, "client": _client, "retries": _retries}


def test_description_keeps_usage_guidance_and_drops_every_section() -> None:
    tool = FunctionTool(lookup_order)
    assert tool.description == (
        "Look up an order by its id.\n\nNever guess an id: ask the user when you do not know it."
    )
    for section in ("Args", "Returns", "Raises", "order_id:", "KeyError"):
        assert section not in tool.description


def test_private_parameters_with_defaults_are_hidden_and_keep_their_defaults() -> None:
    tool = FunctionTool(lookup_order)
    assert set(tool.input_schema()["properties"]) == {"order_id"}
    assert tool.execute(order_id=7).data == {"id": 7, "client": None, "retries": 3}
    # The model cannot reach them: they are unknown arguments.
    result = tool.execute(order_id=7, _retries=0)
    assert result.error is not None and result.error.type == "validation_error"
    assert "_retries" in result.error.message


def test_private_parameter_without_default_is_a_clear_definition_error() -> None:
    def needs_secret(query: str, _token: str) -> str:
        return query

    with pytest.raises(ToolDefinitionError, match="'_token' starts with '_' and has no default"):
        FunctionTool(needs_secret)


def test_hand_written_parameters_need_no_model_of_a_kwargs_signature() -> None:
    seen: dict[str, Any] = {}

    def forward(*args: Any, **kwargs: Any) -> str:  # a signature pydantic could not model
        seen.update(kwargs)
        return "ok"

    params = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
        "required": ["city"],
        "additionalProperties": False,
    }
    registry = LocalToolRegistry()
    registry.register(forward, parameters=params)
    assert registry("forward", city="Lisbon")["data"] == "ok"
    assert seen == {"city": "Lisbon", "days": 1}
    assert registry("forward", city=3)["error_type"] == "validation_error"
    assert registry.to_openai_tools()[0]["function"]["parameters"] == params


def test_registry_tool_is_a_decorator_bare_and_with_options() -> None:
    registry = LocalToolRegistry()

    @registry.tool
    def convert(amount: float, to: str) -> float:
        """Convert an amount of euros.

        Args:
            amount: Euros.
            to: Target currency code.
        """
        return amount * 2

    @registry.tool(name="km_to_miles", description="Kilometres to miles.", timeout=5.0)
    def km(value: float) -> float:
        return value * 0.621371

    # The decorated functions are returned unchanged and still callable as Python.
    assert convert(1.5, "USD") == 3.0
    assert km(10) == pytest.approx(6.21371)
    assert registry.names() == ["convert", "km_to_miles"]
    assert registry("convert", amount=2, to="USD")["data"] == 4.0
    assert registry.get_tool("km_to_miles").description == "Kilometres to miles."  # type: ignore[union-attr]
    assert registry.get_tool("nope") is None
