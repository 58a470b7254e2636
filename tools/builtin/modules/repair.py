"""``ModuleRepairer``: ask the LLM gateway for a fixed ``adapter.py`` from a validation report.

The gateway is anything with the orchestrator's ``ChatModel.chat`` shape (this package
never imports the orchestrator): it gets the rules a module must follow, the manifest, the
findings with file and line, and the current code, and is asked for the whole corrected
``adapter.py`` in one fenced block. The answer is only *written* to the build area; it is
not trusted: it must be validated like any other code before it can be installed.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from shared.modules import ModuleManifest
from tools.builtin.modules.report import Finding
from tools.builtin.modules.scan import ALLOWED_IMPORTS
from tools.errors import ToolError, UpstreamError

__all__ = ["ChatGateway", "ChatReply", "ModuleRepairer"]

MAX_CODE_CHARS = 100_000
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.DOTALL | re.IGNORECASE)


class ChatReply(Protocol):
    """What the gateway returns: a turn with text ``content`` (``ChatResponse`` fits)."""

    @property
    def content(self) -> str | None:
        """The reply text, or None."""
        ...


class ChatGateway(Protocol):
    """The LLM gateway: the orchestrator's ``ChatModel`` fits this protocol."""

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> ChatReply:
        """Produce the next assistant turn."""
        ...


def _rules() -> str:
    return (
        "You repair data-source adapter modules for tooldeck. A module's adapter.py defines one class "
        "(the manifest's adapter_class) deriving from shared.adapters.base.BaseAdapter with "
        "fetch_raw(self, config) -> raw JSON, transform(self, raw) -> list of dicts, and a classmethod "
        "normalize_for_tools(cls, data) -> dict. config['base_url'] is the manifest's api_url and "
        "config['credentials'] holds the credentials by name. Rules: make HTTP requests only with "
        "self.http_session().get/post(..., timeout=10) and only to URLs under config['base_url']; raise "
        "shared.adapters.base.AdapterError for expected failures; import only from: "
        f"{', '.join(sorted(ALLOWED_IMPORTS))}; never use eval, exec, compile, open, __import__, getattr "
        "with computed names, dunder attributes, os, sys, subprocess or sockets. Answer with the complete "
        "corrected adapter.py in one ```python fenced block and nothing else."
    )


class ModuleRepairer:
    """Proposes a corrected ``adapter.py`` through the LLM gateway.

    Args:
        gateway: The model to ask (a ``ChatModel``).
    """

    def __init__(self, *, gateway: ChatGateway) -> None:
        self._gateway = gateway

    def propose(self, manifest: ModuleManifest, adapter_code: str, findings: Sequence[Finding]) -> str:
        """The corrected ``adapter.py``.

        Raises:
            UpstreamError: The gateway failed.
            ToolError: Its answer held no valid Python module.
        """
        problems = "\n".join(f"- {f.where()} [{f.stage}/{f.rule}] {f.message}" for f in findings[:40])
        user = (
            f"manifest.json:\n{json.dumps(manifest.model_dump(mode='json'), indent=1)}\n\n"
            f"Validation findings:\n{problems or '- (none recorded)'}\n\n"
            f"Current adapter.py:\n```python\n{adapter_code[:MAX_CODE_CHARS]}\n```"
        )
        messages = [{"role": "system", "content": _rules()}, {"role": "user", "content": user}]
        try:
            reply = self._gateway.chat(messages, tool_choice="none")
        except Exception as exc:
            raise UpstreamError(
                f"The LLM gateway could not propose a repair ({type(exc).__name__}); try again, or fix the code "
                "yourself with module_pipeline(action='write_code', ...)."
            ) from None
        return _code_of(reply.content or "")


def _code_of(text: str) -> str:
    match = _FENCE.search(text)
    code = (match.group("code") if match else text).strip() + "\n"
    if len(code) > MAX_CODE_CHARS:
        raise ToolError("The proposed repair is too long; fix the code yourself with action='write_code'.")
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        raise ToolError(
            "The LLM gateway's answer held no valid Python code; fix the code yourself with "
            "module_pipeline(action='write_code', module_id=..., adapter_code=...)."
        ) from None
    if not any(isinstance(node, ast.ClassDef) for node in tree.body):
        raise ToolError(
            "The LLM gateway's answer held no adapter class; fix the code yourself with "
            "module_pipeline(action='write_code', module_id=..., adapter_code=...)."
        )
    return code
