"""`Settings`: the orchestrator's configuration, read once at the entry point.

A pydantic-settings model: values are coerced to their types (``"7"`` -> 7, ``"x"`` ->
``Path("x")``), secrets are `pydantic.SecretStr`, and a bad value is a `SettingsError` that
names where it came from (the environment variable, the flag or the argument) and what a
good value looks like. ``Settings(...)`` takes values from its arguments only;
``Settings.from_env(os.environ, **flags)`` reads the environment (at the entry point, once).

Every setting has a ``TOOLDECK_<NAME>`` variable (flags of ``python -m orchestrator`` win):

===============================  =============================================================
``TOOLDECK_BASE_URL``            OpenAI-compatible API root; unset: the embedded offline model
``TOOLDECK_MODEL``               model name sent to that endpoint (default ``gpt-4o-mini``); without
                                 a base URL, ``test`` selects ``orchestrator.testing.TestModel``
``TOOLDECK_API_KEY_ENV``         name of the variable holding the API key (default ``OPENAI_API_KEY``)
``TOOLDECK_TOOL_CHOICE``         ``auto``, ``required``, ``none`` or a tool name (default: the server's)
``TOOLDECK_DATA_DIR``            where the knowledge database lives (default
                                 ``$XDG_DATA_HOME/tooldeck`` or ``~/.local/share/tooldeck``)
``TOOLDECK_CONTEXT_URL``         the context service (default ``http://127.0.0.1:8765``)
``TOOLDECK_CONTEXT_API_KEY``     its API key (sent as ``X-API-Key``)
``TOOLDECK_MAX_ITERATIONS``      model turns per question, 1-100 (default 10)
``TOOLDECK_MAX_PARALLEL``        concurrent tool calls, 1-64 (default 16)
``TOOLDECK_CALL_TIMEOUT``        seconds one tool call may take in the graph (default 60; ``none``)
``TOOLDECK_MODEL_TIMEOUT``       seconds one model request may take (default 120)
``TOOLDECK_STRICT``              strict tool schemas, true/false (default: only for api.openai.com)
``TOOLDECK_STREAM``              stream the model's answers (server-sent events), true/false (default false)
``TOOLDECK_FREEDOM``             approval level ``low``, ``medium`` or ``high`` for this run (default: the
                                 level ``tooldeck configure freedom`` stored; none stored: ``medium``)
``TOOLDECK_DATABASE_URL``        ``postgresql://...``: approvals, resume claims and knowledge in PostgreSQL,
                                 shared by replicas (default: files in the config and data directories)
``TOOLDECK_EXECUTOR``            ``threads`` (default) or ``ray``: the compute tools run on a Ray cluster
``TOOLDECK_RAY_ADDRESS``         the Ray cluster (``ray://head:10001``, ``auto``; default: a local Ray
                                 with this machine's cores)
``BRAVE_API_KEY`` / ``SEARXNG_URL``  web search backend (see ``tools.builtin.web``)
===============================  =============================================================

Adding a setting is one field here (type, bounds, default, and a ``description`` that
says what a good value is, used in error messages); its variable and its error messages
follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from typing_extensions import Self

from tools import is_tool_name

__all__ = ["ENV_PREFIX", "Settings", "SettingsError"]

ENV_PREFIX = "TOOLDECK_"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CONTEXT_URL = "http://127.0.0.1:8765"
_TOOL_CHOICES = ("auto", "required", "none")
_NONE_WORDS = frozenset({"none", "null"})
_NOT_PREFIXED = frozenset({"api_key", "brave_api_key", "searxng_url"})  # see Settings.from_env


class SettingsError(ValueError):
    """A setting has a bad value; the message names its source and what a good value is.

    Attributes:
        problems: pydantic's error records (``loc``, ``msg``, ``type``, ``input``).
    """

    def __init__(
        self,
        problems: list[Any],
        origin: Mapping[str, str] | None = None,
        fields: Mapping[str, FieldInfo] | None = None,
    ) -> None:
        super().__init__(_explain(problems, origin or {}, Settings.model_fields if fields is None else fields))
        self.problems = problems


def _default_data_dir(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg:
        return Path(xdg) / "tooldeck"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".local" / "share" / "tooldeck"


class Settings(BaseSettings):
    """Frozen, validated configuration of an `OrchestratorService`.

    Secrets (``api_key``, ``context_api_key``, ``brave_api_key``) are `SecretStr`: masked
    in `repr`, left out of `public_dict` and of error messages.

    Raises:
        SettingsError: On construction, for a value of the wrong type or out of range, or
            an unknown setting.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        frozen=True,
        extra="forbid",
        str_strip_whitespace=True,
        validate_default=True,
    )

    base_url: str | None = Field(None, description="an http(s) URL such as http://127.0.0.1:8080/v1")
    model: str = Field(DEFAULT_MODEL, min_length=1, description=f"a model name, e.g. {DEFAULT_MODEL}")
    api_key_env: str = Field(
        DEFAULT_API_KEY_ENV,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description=f"the name of an environment variable, e.g. {DEFAULT_API_KEY_ENV}",
    )
    api_key: SecretStr | None = Field(None, description="the API key")
    tool_choice: str | None = Field(None, description="auto, required, none, or the name of a tool (e.g. math_solver)")
    data_dir: Path = Field(default_factory=lambda: _default_data_dir({}), description="a writable directory path")
    context_url: str = Field(DEFAULT_CONTEXT_URL, min_length=1, description=f"a URL such as {DEFAULT_CONTEXT_URL}")
    context_api_key: SecretStr | None = Field(None, description="the context service's API key")
    brave_api_key: SecretStr | None = Field(None, description="a Brave Search API key")
    searxng_url: str | None = Field(None, description="a SearXNG URL such as http://127.0.0.1:8888")
    max_iterations: int = Field(
        10, ge=1, le=100, description="model turns per question: a whole number from 1 to 100 (default 10)"
    )
    max_parallel: int = Field(
        16, ge=1, le=64, description="concurrent tool calls: a whole number from 1 to 64 (default 16)"
    )
    call_timeout: float | None = Field(
        60.0, gt=0, description="seconds one tool call may take: a number > 0 (default 60), or none for no limit"
    )
    model_timeout: float = Field(120.0, gt=0, description="seconds one model request may take: a number > 0")
    strict: bool | None = Field(None, description="true or false (unset: strict only for api.openai.com)")
    stream: bool = Field(False, description="true or false: stream the model's answers (server-sent events)")
    agent: str | None = Field(
        None,
        pattern=r"^[a-z][a-z0-9-]{0,40}$",
        description="an agent type whose tools the model gets, e.g. reviewer (main, plan, explore, debugger, "
        "researcher, docs-generator, readme-generator, coder, test-writer, reviewer)",
    )
    routing_config: Path | None = Field(None, description="a JSON or TOML routing-overrides file")
    module_credentials_key: SecretStr | None = Field(
        None, description="a Fernet key for module credentials (unset: a 0600 key file in the data directory)"
    )
    module_signing_key: SecretStr | None = Field(
        None, description="a key for signing module validations (unset: a 0600 key file in the data directory)"
    )
    max_subagent_iterations: int = Field(
        3, ge=1, le=10, description="model turns per sub-agent: a whole number from 1 to 10 (default 3)"
    )
    result_budget_tokens: int = Field(
        5_000,
        ge=0,
        le=1_000_000,
        description="tokens (characters / 4) one tool result may take before it is stored as an artifact the "
        "model reads in parts: a whole number, 0 for no budget (results are cut instead)",
    )
    freedom: Literal["low", "medium", "high"] | None = Field(
        None,
        description="low (nothing runs without approval), medium (only safe tools run freely) or high (only "
        "dangerous tools need approval)",
    )

    database_url: SecretStr | None = Field(
        None,
        description="a PostgreSQL URL such as postgresql://tooldeck@db.internal:5432/tooldeck (unset: local files)",
    )
    executor: Literal["threads", "ray"] = Field(
        "threads", description="threads (tool calls in this process) or ray (compute tools on a Ray cluster)"
    )
    ray_address: str | None = Field(
        None,
        min_length=1,
        description="a Ray cluster address such as ray://head:10001 or auto (unset: a local Ray on this machine)",
    )

    if not TYPE_CHECKING:  # type checkers keep the typed signature pydantic's plugin gives

        def __init__(self, **values: Any) -> None:
            """Validate ``values`` (field name -> value; nothing is read from the environment)."""
            try:
                super().__init__(**values)
            except ValidationError as exc:
                raise SettingsError(list(exc.errors(include_url=False)), fields=type(self).model_fields) from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments only: the environment is read by `from_env`, at the entry point."""
        return (init_settings,)

    @field_validator("tool_choice")
    @classmethod
    def _tool_choice(cls, value: str | None) -> str | None:
        if value is None or value in _TOOL_CHOICES or is_tool_name(value):
            return value
        raise ValueError("not auto, required, none or a tool name (letters, digits, _ and -)")

    @field_validator("freedom", mode="before")
    @classmethod
    def _freedom_any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("database_url")
    @classmethod
    def _postgresql_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            from tools.postgres import check_database_url

            check_database_url(value.get_secret_value(), setting="the database URL")
        return value

    @field_validator("executor", mode="before")
    @classmethod
    def _executor_any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("data_dir")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> Self:
        """Read settings from ``env`` (e.g. ``os.environ``); non-None ``overrides`` win.

        Args:
            env: The environment mapping; read here and nowhere else. Each setting comes
                from ``TOOLDECK_<NAME>`` (empty means unset; ``none`` unsets an optional
                one), the API key from the variable ``api_key_env`` names, the web search
                settings from ``BRAVE_API_KEY`` and ``SEARXNG_URL``.
            **overrides: Values from command-line flags (``max_iterations`` for
                ``--max-iterations``); None means "not given". ``api_key_env`` applies
                before the key is read, so the key comes from the variable the flag names.

        Returns:
            The settings.

        Raises:
            SettingsError: A value is malformed or out of range; the message names the
                variable or flag and what a good value is.
            TypeError: An override names no setting (a programming error).
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(given) - set(cls.model_fields)
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        values: dict[str, Any] = _EnvironmentSource(cls, env)()
        origin = {name: f"environment variable {_env_name(name)}" for name in values}
        key_env = str(given.get("api_key_env") or values.get("api_key_env") or DEFAULT_API_KEY_ENV)
        others = {"api_key": key_env, "brave_api_key": "BRAVE_API_KEY", "searxng_url": "SEARXNG_URL"}
        for name, variable in others.items():
            text = env.get(variable, "").strip()
            if text:
                values[name] = text
                origin[name] = f"environment variable {variable}"
        values.setdefault("data_dir", _default_data_dir(env))
        values.update(given)
        origin.update({name: "--" + name.replace("_", "-") for name in given})
        try:
            return cls(**values)
        except SettingsError as exc:  # said again with the variable or flag each value came from
            raise SettingsError(exc.problems, origin, cls.model_fields) from None

    def public_dict(self) -> dict[str, Any]:
        """The settings without secrets (for ``--json`` output and logs)."""
        secret = {name for name, info in type(self).model_fields.items() if _is_secret(info)}
        out = self.model_dump(mode="json", exclude=secret)
        out["api_key_set"] = self.api_key is not None
        return out


def _env_name(field: str) -> str:
    return ENV_PREFIX + field.upper()


def _is_secret(info: FieldInfo) -> bool:
    return info.annotation is SecretStr or SecretStr in get_args(info.annotation)


class _EnvironmentSource(PydanticBaseSettingsSource):
    """``TOOLDECK_<NAME>`` values from an environment mapping (not from ``os.environ``)."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._env = env

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """The variable's text (None when unset or empty), its name, and whether it is JSON."""
        name = _env_name(field_name)
        text = self._env.get(name, "").strip()
        return (text or None), name, self.field_is_complex(field)

    def __call__(self) -> dict[str, Any]:
        """Field name -> value for every setting whose variable is set."""
        values: dict[str, Any] = {}
        for field_name, field in self.settings_cls.model_fields.items():
            if field_name in _NOT_PREFIXED:
                continue
            text, name, is_complex = self.get_field_value(field, field_name)
            if text is None:
                continue
            if text.lower() in _NONE_WORDS and type(None) in get_args(field.annotation):
                values[field_name] = None
            elif is_complex:
                values[field_name] = self.decode_complex_value(name, field, text)
            else:
                values[field_name] = text
        return values


def _explain(problems: list[Any], origin: Mapping[str, str], fields: Mapping[str, FieldInfo]) -> str:
    """One part per problem: where the value came from, what was wrong, what is expected.

    ``origin`` maps a setting to "environment variable X" or "--flag"; other settings
    came from ``Settings(...)`` arguments. Secret values are never shown.
    """
    parts: list[str] = []
    for error in problems:
        name = str(error["loc"][0]) if error["loc"] else "?"
        info = fields.get(name)
        if error["type"] == "extra_forbidden" or info is None:
            parts.append(f"unknown setting {name!r}; the settings are: {', '.join(fields)}")
            continue
        value = "..." if _is_secret(info) else repr(error["input"])
        source = origin.get(name)
        where = f"Settings({name}={value})" if source is None else f"{source}={value}"
        part = f"{where}: {error['msg']}; expected {info.description or 'a valid value'}"
        if source is not None and source.startswith("environment variable"):
            part += ", or unset it"
        parts.append(part)
    return "; ".join(parts)
