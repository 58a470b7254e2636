"""`Settings`: the orchestrator's configuration, read once at the entry point.

Environment variables (flags of ``python -m orchestrator`` override them):

==========================  ==================================================================
``TOOLDECK_BASE_URL``       OpenAI-compatible API root; unset: the embedded offline model
``TOOLDECK_MODEL``          model name sent to that endpoint (default ``gpt-4o-mini``)
``TOOLDECK_API_KEY_ENV``    name of the variable holding the API key (default ``OPENAI_API_KEY``)
``TOOLDECK_DATA_DIR``       where the knowledge database lives (default
                            ``$XDG_DATA_HOME/tooldeck`` or ``~/.local/share/tooldeck``)
``TOOLDECK_CONTEXT_URL``    the context service for the user-context tools (default
                            ``http://127.0.0.1:8765``, where ``python -m shared.context_service``
                            listens)
``TOOLDECK_CONTEXT_API_KEY``  its API key (sent as ``X-API-Key``)
``TOOLDECK_MAX_ITERATIONS`` model turns per question (default 10)
``TOOLDECK_CALL_TIMEOUT``   seconds one tool call may take in the graph (default 60)
``BRAVE_API_KEY`` / ``SEARXNG_URL``  web search backend (see ``tools.builtin.web``)
==========================  ==================================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Settings"]

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CONTEXT_URL = "http://127.0.0.1:8765"


def _default_data_dir(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg:
        return Path(xdg) / "tooldeck"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".local" / "share" / "tooldeck"


def _number(env: Mapping[str, str], name: str, kind: type[int] | type[float]) -> Any:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        example = "10" if kind is int else "60"
        raise ValueError(
            f"environment variable {name}={raw!r} is not a {kind.__name__}; set it to e.g. {example} or unset it"
        ) from None


def _text(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class Settings:
    """Frozen, validated configuration of an `OrchestratorService`.

    Secrets (``api_key``, ``context_api_key``, ``brave_api_key``) are excluded from `repr`
    and from `public_dict`.

    Attributes:
        base_url: OpenAI-compatible API root; None selects the embedded offline model.
        model: Model name for that endpoint.
        api_key_env: Name of the environment variable the API key was read from.
        api_key: The API key (None when the variable is unset or empty).
        data_dir: Directory of the knowledge database.
        context_url: Context service URL for the user-context tools.
        context_api_key: Its API key, if any.
        brave_api_key: Brave Search key, if any (selects Brave for web search).
        searxng_url: SearXNG instance, if any (web search when there is no Brave key).
        max_iterations: Model turns per question, 1-100.
        max_parallel: Concurrent tool calls, 1-64.
        call_timeout: Seconds one tool call may take in the graph (None: no limit).
        model_timeout: Seconds one model request may take.
        strict: Strict tool schemas; None: decided by the model client.
    """

    base_url: str | None = None
    model: str = DEFAULT_MODEL
    api_key_env: str = DEFAULT_API_KEY_ENV
    api_key: str | None = field(default=None, repr=False)
    data_dir: Path = field(default_factory=lambda: _default_data_dir({}))
    context_url: str = DEFAULT_CONTEXT_URL
    context_api_key: str | None = field(default=None, repr=False)
    brave_api_key: str | None = field(default=None, repr=False)
    searxng_url: str | None = None
    max_iterations: int = 10
    max_parallel: int = 16
    call_timeout: float | None = 60.0
    model_timeout: float = 120.0
    strict: bool | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.max_iterations <= 100:
            raise ValueError(
                f"max_iterations must be between 1 and 100, got {self.max_iterations}; "
                "set --max-iterations or TOOLDECK_MAX_ITERATIONS"
            )
        if not 1 <= self.max_parallel <= 64:
            raise ValueError(f"max_parallel must be between 1 and 64, got {self.max_parallel}")
        if self.call_timeout is not None and self.call_timeout <= 0:
            raise ValueError(
                f"call_timeout must be > 0 seconds, got {self.call_timeout}; set TOOLDECK_CALL_TIMEOUT to e.g. 60"
            )
        if self.model_timeout <= 0:
            raise ValueError(f"model_timeout must be > 0 seconds, got {self.model_timeout}")
        if not self.model.strip():
            raise ValueError("model must not be empty; pass --model, e.g. --model gpt-4o-mini")
        if not self.api_key_env.strip():
            raise ValueError("api_key_env must name an environment variable, e.g. OPENAI_API_KEY")

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> Settings:
        """Read settings from ``env`` (e.g. ``os.environ``); non-None ``overrides`` win.

        Args:
            env: The environment mapping; read here and nowhere else.
            **overrides: Field values from command-line flags; None means "not given".
                ``api_key_env`` is applied before the key is read, so the key comes from
                the variable the flag names.

        Returns:
            The settings.

        Raises:
            ValueError: A value is malformed or out of range; the message names the
                variable or flag and how to fix it.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(given) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        api_key_env = given.get("api_key_env") or _text(env, "TOOLDECK_API_KEY_ENV")
        api_key_env = api_key_env or DEFAULT_API_KEY_ENV
        data_dir = _text(env, "TOOLDECK_DATA_DIR")
        values: dict[str, Any] = {
            "base_url": _text(env, "TOOLDECK_BASE_URL"),
            "model": _text(env, "TOOLDECK_MODEL") or DEFAULT_MODEL,
            "api_key_env": api_key_env,
            "api_key": _text(env, api_key_env),
            "data_dir": Path(data_dir).expanduser() if data_dir else _default_data_dir(env),
            "context_url": _text(env, "TOOLDECK_CONTEXT_URL") or DEFAULT_CONTEXT_URL,
            "context_api_key": _text(env, "TOOLDECK_CONTEXT_API_KEY"),
            "brave_api_key": _text(env, "BRAVE_API_KEY"),
            "searxng_url": _text(env, "SEARXNG_URL"),
        }
        iterations = _number(env, "TOOLDECK_MAX_ITERATIONS", int)
        if iterations is not None:
            values["max_iterations"] = iterations
        call_timeout = _number(env, "TOOLDECK_CALL_TIMEOUT", float)
        if call_timeout is not None:
            values["call_timeout"] = call_timeout
        values.update(given)
        if isinstance(values["data_dir"], str):
            values["data_dir"] = Path(values["data_dir"]).expanduser()
        return cls(**values)

    def public_dict(self) -> dict[str, Any]:
        """The settings without secrets (for ``--json`` output and logs)."""
        secret = {"api_key", "context_api_key", "brave_api_key"}
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in secret}
        out["data_dir"] = str(self.data_dir)
        out["api_key_set"] = self.api_key is not None
        return out
