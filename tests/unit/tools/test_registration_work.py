"""``register()`` does no schema work a call does not need, and still fails at registration.

The routing manual (whose token estimate sizes the JSON schema) is derived on first use; a
function's argument model is built on first use when it surely builds, at once otherwise;
docstrings are parsed in their own style only, with the same result as the automatic mode.
"""

from __future__ import annotations

import enum
import itertools
import warnings
from typing import Annotated, Any, ClassVar, Literal

import pytest
from docstring_parser import parse
from pydantic import BaseModel, Field

from tools import BaseTool, FunctionTool, LocalToolRegistry, ToolDefinitionError
from tools._docstrings import parse_docstring


class CountingRequest(BaseModel):
    """Counts how often its JSON schema is generated."""

    generated: ClassVar[int] = 0
    query: str = Field(description="What to look for.")
    limit: int = 10

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        CountingRequest.generated += 1
        return super().model_json_schema(*args, **kwargs)


class CountingTool(BaseTool[CountingRequest, str]):
    name = "find_notes"
    description = "Find notes."

    def execute_internal(self, request: CountingRequest) -> str:
        return request.query


def test_register_and_call_generate_no_schema_and_the_manual_comes_on_first_use() -> None:
    CountingRequest.generated = 0
    registry = LocalToolRegistry()
    registry.register(CountingTool())
    assert registry.call_tool("find_notes", query="x").data == "x"
    assert CountingRequest.generated == 0  # neither registration nor a call needs the schema
    manual = registry.get_manual("find_notes")
    assert manual is not None and manual.name == "find_notes" and manual.token_cost == "low"
    assert CountingRequest.generated == 1  # the token estimate, once
    assert registry.get_manual("find_notes") is manual
    registry.to_openai_tools()
    assert CountingRequest.generated == 1  # the tool's schema is cached and shared


def test_an_alias_gets_its_own_manual_under_its_name_and_a_given_manual_wins() -> None:
    registry = LocalToolRegistry()
    tool = CountingTool()
    registry.register(tool)
    registry.register(tool, name="old_find_notes")
    given = tool.get_manual().model_copy(update={"risk": "dangerous"})
    registry.register(CountingTool(), name="risky_find", manual=given)
    assert [m.name for m in registry.manuals()] == ["find_notes", "old_find_notes", "risky_find"]
    assert registry.get_manual("risky_find").risk == "dangerous"  # type: ignore[union-attr]


class Color(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: float


def plain(query: str, limit: int = 10, origin: Point | None = None, color: Color = Color.RED) -> str:
    """Find things.

    Args:
        query: What to find.
        limit: How many.
        origin: Where from.
        color: Which color.
    """
    return f"{query}:{limit}:{origin}:{color.value}"


def test_a_lazily_built_argument_model_behaves_like_an_eager_one() -> None:
    lazy = FunctionTool(plain)
    registry = LocalToolRegistry()
    registry.register(lazy)
    exported = registry.to_openai_tools(strict=True)
    assert exported[0]["function"]["parameters"]["properties"]["query"]["description"] == "What to find."
    assert registry.call_tool("plain", query="a", origin={"x": 1}).data == "a:10:x=1.0:red"
    bad = registry.call_tool("plain", limit="many")
    assert bad.error is not None and bad.error.type == "validation_error"
    assert "query" in bad.error.message and "limit" in bad.error.message
    model = lazy.RequestModel
    assert model is not None and lazy.RequestModel is model  # built once
    assert set(model.model_fields) == {"query", "limit", "origin", "color"}


class Opaque:
    """Not a type pydantic can validate."""


def test_an_argument_type_pydantic_cannot_build_fails_at_registration() -> None:
    def takes_opaque(thing: Opaque) -> str:
        return "never"

    registry = LocalToolRegistry()
    with pytest.raises(ToolDefinitionError, match=r"takes_opaque.*cannot build its argument model"):
        registry.register(takes_opaque)
    assert "takes_opaque" not in registry


def test_constraints_that_do_not_apply_fail_at_registration() -> None:
    def constrained(count: Annotated[int, Field(gt="a")]) -> int:
        return count

    with pytest.raises(ToolDefinitionError, match="constrained"):
        LocalToolRegistry().register(constrained)


def test_a_name_that_shadows_a_model_attribute_is_reported_at_registration() -> None:
    def shadowing(schema: str) -> str:
        return schema

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = LocalToolRegistry()
        registry.register(shadowing)
    assert any("shadows an attribute" in str(w.message) for w in caught)
    assert registry.call_tool("shadowing", schema="s").data == "s"


def test_literal_and_container_types_build_lazily_and_validate() -> None:
    def pick(mode: Literal["a", "b"], tags: list[str] | None = None, weights: dict[str, float] | None = None) -> str:
        return f"{mode}:{tags}:{weights}"

    registry = LocalToolRegistry()
    registry.register(pick)
    assert registry.call_tool("pick", mode="b", tags=["x"]).data == "b:['x']:None"
    assert registry.call_tool("pick", mode="c").error is not None


DOCSTRINGS = [
    "",
    "One line.",
    "Summary.\n\nA longer paragraph\nover two lines.",
    "Summary.\n\nArgs:\n    a: First.\n    b (int): Second.\n\nReturns:\n    Something.",
    "Summary.\n\nArgs:\n    a: First.\n\nRaises:\n    ValueError: When.\n\nExamples:\n    >>> f(1)",
    "Summary.\n\nParameters\n----------\na : int\n    First.\nb : str, optional\n    Second.\n",
    "Summary.\n\n:param a: First.\n:type a: int\n:returns: Nothing.\n:raises ValueError: If.",
    "Summary.\n\n@param a: First.\n@type a: int\n@return: Nothing.",
    "Mixed.\n\nArgs:\n    a: First.\n\n:param b: Second.",
    "Mixed.\n\nParameters\n----------\na : int\n    First.\n\nArgs:\n    b: Second.",
    "Args:\n    only: A section and no summary.",
    "Summary with a colon: inside the text.\n\nNote: not a section title.",
    "Summary.\n\nArgs:\n",
    "Summary.\n\n.. deprecated:: 1.0\n    Use g.",
    "Summary.\n\n    :param indented: Indented.",
    "Summary.\n\nReturns:\n    int: A number.\n\nYields:\n    str: Words.",
    "Summary.\n\n---\n\nA ruled line.",
    "Summary.\n\nAttributes:\n    x: An attribute.",
    "Summary.\n\nOther Parameters\n----------------\nc : float\n    Third.",
]


def _shape(doc: Any) -> tuple[Any, ...]:
    params = [(p.arg_name, p.type_name, p.description, p.is_optional, p.default) for p in doc.params]
    return (doc.short_description, doc.long_description, params, len(doc.meta))


@pytest.mark.parametrize("text", DOCSTRINGS)
def test_docstrings_parse_as_the_automatic_mode_does(text: str) -> None:
    assert _shape(parse_docstring(text)) == _shape(parse(text))


def test_docstring_pairs_of_sections_parse_as_the_automatic_mode_does() -> None:
    parts = [d.split("\n\n", 1)[1] for d in DOCSTRINGS if "\n\n" in d]
    for first, second in itertools.permutations(parts, 2):
        text = f"Summary.\n\n{first}\n\n{second}"
        assert _shape(parse_docstring(text)) == _shape(parse(text)), text


def test_a_tool_whose_model_is_not_built_yet_copies_and_pickles() -> None:
    """A copy sent to another process (Ray pickles tools) leaves the build lock behind and
    builds its own model on first use."""
    import copy
    import pickle

    tool = FunctionTool(_add)
    assert "_td_pending_model" in tool.__dict__  # nothing built at registration
    for twin in (copy.deepcopy(tool), pickle.loads(pickle.dumps(tool))):
        assert twin(a=2, b=3)["data"] == 5
    assert tool(a=1, b=1)["data"] == 2


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
