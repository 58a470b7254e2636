"""Error text a tool's author wrote for the model reaches it, whatever library raised it."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import requests
from langchain_core.tools import ToolException
from mcp.server.mcpserver.exceptions import ToolError as MCPSDKToolError

from tools import LocalToolRegistry, ToolDefinitionError
from tools._foreign_errors import model_facing_text, recognised_by


def _foreign(module: str, name: str, base: type[BaseException] = Exception) -> type[BaseException]:
    """A class as the named framework defines it (recognition never imports the framework)."""
    return type(name, (base,), {"__module__": module})


# τ²-bench style: a retail tool raises its own ``ToolError`` defined in its own module.
class ToolError(Exception):
    """Like τ²-bench's environment ``ToolError``: a class named ToolError, not tooldeck's."""


def _raising(exc: BaseException) -> Any:
    def get_product_details(product_id: str) -> dict[str, Any]:
        """Look a product up by id.

        Args:
            product_id: The product's id.
        """
        raise exc

    return get_product_details


def _call(exc: BaseException, **register: Any) -> dict[str, Any]:
    registry = LocalToolRegistry()
    registry.register(_raising(exc), **register)
    return registry("get_product_details", product_id="9999")


@pytest.mark.parametrize(
    "exc",
    [
        ToolException("Product not found"),
        MCPSDKToolError("Product not found"),
        _foreign("fastmcp.exceptions", "ToolError")("Product not found"),
        _foreign("pydantic_ai.exceptions", "ModelRetry")("Product not found"),
        _foreign("inspect_ai.tool._tool", "ToolError")("Product not found"),
    ],
    ids=["langchain", "mcp-sdk", "fastmcp", "pydantic-ai", "inspect-ai"],
)
def test_frameworks_tool_errors_reach_the_model(exc: BaseException) -> None:
    out = _call(exc)
    assert out["status"] == "error" and out["error_type"] == "execution_error"
    assert out["error"] == "Product not found"


def test_a_subclass_of_a_framework_error_is_recognised_along_the_mro() -> None:
    class ProductMissing(ToolException):
        pass

    assert _call(ProductMissing("No product 9999; list_products shows the ids"))["error"] == (
        "No product 9999; list_products shows the ids"
    )


def test_a_class_merely_named_like_a_framework_error_stays_redacted() -> None:
    # Same name, but not the framework's package: "langchain_core_extras" is not "langchain_core".
    lookalike = _foreign("langchain_core_extras.errors", "ToolException")("token=abc123 at /srv/app")
    out = _call(lookalike)
    assert "internal error" in out["error"] and "abc123" not in out["error"]
    # τ²-bench's own ToolError, not named at registration: its text is not trusted on a name.
    out = _call(ToolError("Product not found"))
    assert "internal error" in out["error"] and "Product not found" not in out["error"]


def test_tau2_style_tool_error_reaches_the_model_when_named_at_registration() -> None:
    assert _call(ToolError("Product not found"), expose_errors=(ToolError,))["error"] == "Product not found"
    dotted = f"{__name__}.ToolError"
    assert _call(ToolError("Product not found"), expose_errors=[dotted])["error"] == "Product not found"
    # Other exceptions of the same tool stay redacted.
    out = _call(KeyError("9999"), expose_errors=(ToolError,))
    assert "internal error" in out["error"] and "9999" not in out["error"]


def test_an_http_error_carrying_a_token_in_its_url_stays_redacted() -> None:
    secret = "ghp_" + "A" * 36
    exc = requests.exceptions.HTTPError(
        f"401 Client Error: Unauthorized for url: https://api.example.com/v1?token={secret}"
    )
    out = _call(exc)
    assert out["error_type"] == "execution_error" and "internal error" in out["error"]
    assert secret not in str(out) and "api.example.com" not in str(out)
    assert recognised_by(exc) is None


def test_text_that_is_shown_is_still_redacted_and_bounded() -> None:
    secret = "sk-" + "b" * 40
    text = model_facing_text(ToolException(f"Upstream refused api_key={secret}; check the id. " + "more words " * 500))
    assert text is not None and secret not in text and "api_key=***" in text
    assert text.endswith("more characters]") and len(text) < 2_100
    assert model_facing_text(ToolException("")) is None  # nothing to show: the generic message


def test_tooldeck_errors_are_unchanged_and_failures_do_not_trip_the_breaker() -> None:
    registry = LocalToolRegistry(failure_threshold=2)
    registry.register(_raising(ToolException("Product not found")))
    for _ in range(3):
        assert registry("get_product_details", product_id="1")["error"] == "Product not found"
    assert registry.call_tool("get_product_details", product_id="1").error.type == "execution_error"  # type: ignore[union-attr]


def test_expose_errors_rejects_what_is_not_an_exception_class() -> None:
    registry = LocalToolRegistry()
    with pytest.raises(ToolDefinitionError, match="expose_errors takes exception classes"):
        registry.register(_raising(ValueError()), expose_errors=[int])  # type: ignore[list-item]
    with pytest.raises(ToolDefinitionError, match="expose_errors"):
        registry.register(_raising(ValueError()), expose_errors=["NoModule"])


def test_recognition_imports_no_framework() -> None:
    for module in ("pydantic_ai", "fastmcp", "inspect_ai"):
        sys.modules.pop(module, None)
    assert (
        recognised_by(_foreign("pydantic_ai.exceptions", "ModelRetry")("again")) == "pydantic_ai.exceptions.ModelRetry"
    )
    assert not {"pydantic_ai", "fastmcp", "inspect_ai"} & set(sys.modules)
