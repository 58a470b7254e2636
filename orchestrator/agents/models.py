"""Per-agent models: ``TOOLDECK_MODEL_<AGENT>`` or a settings file, else the orchestrator's.

The environment is read by the entry point only (:func:`agent_models_from_env` is handed
``os.environ`` there); library code receives the resulting mapping.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from orchestrator.llm import ChatModel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

_PREFIX = "TOOLDECK_MODEL_"


def env_name(agent_type: str) -> str:
    """The variable naming ``agent_type``'s model: ``test-writer`` -> ``TOOLDECK_MODEL_TEST_WRITER``."""
    return _PREFIX + agent_type.upper().replace("-", "_").replace(".", "_")


def agent_models_from_env(env: Mapping[str, str]) -> dict[str, str]:
    """Agent type -> model name from every non-empty ``TOOLDECK_MODEL_<AGENT>`` variable."""
    out: dict[str, str] = {}
    for key, value in env.items():
        if key.startswith(_PREFIX) and len(key) > len(_PREFIX) and value.strip():
            out[key[len(_PREFIX) :].lower().replace("_", "-")] = value.strip()
    return out


def load_agent_models(path: str | Path) -> dict[str, str]:
    """Agent type -> model name from the ``[models]`` table of a TOML or JSON settings file.

    Raises:
        ValueError: the file can't be read or ``models`` is not a table of strings; the
            message names the file and the key.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
        data = json.loads(text) if source.suffix == ".json" else tomllib.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"agent model settings {str(source)!r}: {exc}") from None
    models = data.get("models", {})
    if not isinstance(models, dict) or not all(isinstance(v, str) and v.strip() for v in models.values()):
        raise ValueError(
            f"agent model settings {str(source)!r}: 'models' must map agent types to model names, "
            'e.g. [models] coder = "gpt-4o-mini"'
        )
    return {str(k): v.strip() for k, v in models.items()}


class ModelResolver:
    """The model of each agent type: its own when one is named, else the default.

    Args:
        default: The orchestrator's model.
        names: Agent type -> model name (``agent_models_from_env`` and/or
            ``load_agent_models``; the environment should win).
        build: Makes a model from a name (e.g. an ``OpenAIChatModel`` at the same
            endpoint); None: names are ignored and the default is used.
    """

    def __init__(
        self,
        default: ChatModel,
        *,
        names: Mapping[str, str] | None = None,
        build: Callable[[str], ChatModel] | None = None,
    ) -> None:
        self.default = default
        self.names = dict(names or {})
        self._build = build
        self._built: dict[str, ChatModel] = {}

    def for_agent(self, agent_type: str) -> ChatModel:
        """The model ``agent_type`` runs with (built once per name)."""
        name = self.names.get(agent_type)
        if name is None or self._build is None:
            return self.default
        if name not in self._built:
            self._built[name] = self._build(name)
        return self._built[name]

    def describe(self, agent_type: str) -> str:
        """The model name for traces ("default" when it is the orchestrator's)."""
        return self.names.get(agent_type, "default") if self._build is not None else "default"
