"""Error text meant for the model, raised through another framework's exception class.

Tools written for LangChain, the MCP SDK, FastMCP, Pydantic AI or inspect_ai tell the model
what went wrong by raising that framework's "tool error" (``ToolException``, ``ToolError``,
``ModelRetry``). tooldeck shows the text of its own :class:`~tools.errors.ToolError`; the
others would otherwise be redacted as unexpected exceptions, and the model would learn
nothing ("internal error" instead of "Product not found").

The rule: an exception's text reaches the model when its class, or a class on its MRO, is

* one of the frameworks' classes below, recognised by class name **and** the top-level
  package of its module (``langchain_core.tools.base.ToolException`` and a user's subclass of
  it, but not a class that merely happens to be called ``ToolException`` elsewhere), without
  importing any of those packages; or
* listed by the application for that tool: ``register(tool, expose_errors=(MyError,))``, as
  a class (matched with ``isinstance``) or a dotted name (``"tau2.environment.ToolError"``,
  matched along the MRO without an import).

A class named ``ToolError`` in an arbitrary module is not trusted on its name. The name says
nothing about who the message was written for: plenty of libraries and applications define
a ``ToolError`` for installer failures, subprocess output or HTTP errors whose text carries
paths, URLs and tokens. Exposing on a name would make "redacted by default" depend on what
third parties call their exceptions; naming the class at registration keeps that decision
with the person who read the tool's code. Everything else stays redacted. The text that is
shown is bounded and passed through the secret-shape redactor all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: (top-level package, class name) of the frameworks' model-facing tool errors.
TRUSTED_FOREIGN_ERRORS: tuple[tuple[str, str], ...] = (
    ("langchain_core", "ToolException"),  # LangChain: BaseTool(handle_tool_error=...)
    ("mcp", "ToolError"),  # the MCP Python SDK's MCPServer / FastMCP 1.x
    ("fastmcp", "ToolError"),  # FastMCP 2.x
    ("pydantic_ai", "ModelRetry"),  # Pydantic AI: "tell the model to try again"
    ("inspect_ai", "ToolError"),  # inspect_ai tools
)

#: Longest foreign error text shown to the model; the rest is cut with a note.
MAX_FOREIGN_TEXT = 2_000

ExposeEntry = type[BaseException] | str


def _package(module: str) -> str:
    return module.partition(".")[0]


def recognised_by(exc: BaseException, expose: Sequence[ExposeEntry] = ()) -> str | None:
    """The qualified name of the class that makes ``exc`` model-facing, or None.

    Args:
        exc: The exception a tool raised (not a tooldeck ``ToolError``).
        expose: The tool's own list: exception classes, or dotted names of classes.
    """
    for entry in expose:
        if not isinstance(entry, str) and isinstance(exc, entry):
            return f"{entry.__module__}.{entry.__qualname__}"
    for cls in type(exc).__mro__:
        module = getattr(cls, "__module__", "") or ""
        name = cls.__name__
        if (_package(module), name) in TRUSTED_FOREIGN_ERRORS:
            return f"{module}.{name}"
        if expose and (f"{module}.{cls.__qualname__}" in expose or f"{module}.{name}" in expose):
            return f"{module}.{cls.__qualname__}"
    return None


def model_facing_text(exc: BaseException, expose: Sequence[ExposeEntry] = ()) -> str | None:
    """The text of ``exc`` for the model when its class is trusted (see the module rule).

    Returns None for every other exception (it stays redacted), and for a trusted one with
    no text. The text is redacted for secret shapes and cut to :data:`MAX_FOREIGN_TEXT`.
    """
    if recognised_by(exc, expose) is None:
        return None
    text = _text_of(exc).strip()
    if not text:
        return None
    from tools.telemetry._redaction import redact_text  # only on a failing call

    text = redact_text(text[: MAX_FOREIGN_TEXT * 2])
    if len(text) > MAX_FOREIGN_TEXT:
        text = f"{text[:MAX_FOREIGN_TEXT]}... [cut: {len(text) - MAX_FOREIGN_TEXT} more characters]"
    return text


def _text_of(exc: BaseException) -> str:
    """``str(exc)``, or the ``message`` attribute some frameworks keep beside it."""
    message: Any = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails: nothing to show
        return ""


def check_expose_errors(entries: Sequence[Any], *, owner: str) -> tuple[ExposeEntry, ...]:
    """``entries`` as a tuple of exception classes and dotted names, or raise for a misuse.

    Raises:
        ToolDefinitionError: an entry is neither an exception class nor a dotted name.
    """
    from tools.errors import ToolDefinitionError

    if isinstance(entries, str | type):
        entries = (entries,)
    checked: list[ExposeEntry] = []
    for entry in entries:
        is_class = isinstance(entry, type) and issubclass(entry, BaseException)
        if is_class or (isinstance(entry, str) and "." in entry.strip(".") and " " not in entry):
            checked.append(entry)
        else:
            raise ToolDefinitionError(
                f"{owner}: expose_errors takes exception classes or dotted class names "
                f"(e.g. 'tau2.environment.tool.ToolError'), not {entry!r}"
            )
    return tuple(checked)
