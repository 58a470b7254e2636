"""Secret values of adopted tools, and masking them in results, artifacts and messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tools.external._redact import Redactor
from tools.result import ToolResult
from tools.store.config import ToolConfig


def secret_names(configs: Iterable[ToolConfig]) -> set[str]:
    """The environment variables holding secrets of ``configs`` (auth and CLI ``secret_env``)."""
    names: set[str] = set()
    for config in configs:
        if config.auth is not None:
            names.add(config.auth.env_var)
        if config.cli is not None:
            names.update(config.cli.secret_env)
    return names


def redactor_for(configs: Iterable[ToolConfig], env: Mapping[str, str]) -> Redactor:
    """A :class:`Redactor` masking the current values of every secret of ``configs``."""
    return Redactor(env.get(name) for name in secret_names(configs))


def redact_result(result: ToolResult, redactor: Redactor) -> ToolResult:
    """``result`` with every secret value masked in data, error and metadata."""
    return redactor.result(result)


def redact_data(value: Any, redactor: Redactor) -> Any:
    """A copy of JSON-like ``value`` with secrets masked."""
    return redactor.data(value)
