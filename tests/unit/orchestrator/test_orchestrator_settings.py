"""Settings: pydantic-settings with the TOOLDECK_ prefix, read once, bad values explained."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from orchestrator import Settings, SettingsError


def test_defaults_from_an_empty_environment() -> None:
    settings = Settings.from_env({"HOME": "/home/u"})
    assert settings.base_url is None
    assert settings.model == "gpt-4o-mini"
    assert settings.api_key_env == "OPENAI_API_KEY"
    assert settings.api_key is None
    assert settings.data_dir == Path("/home/u/.local/share/tooldeck")
    assert settings.context_url == "http://127.0.0.1:8765"
    assert settings.max_iterations == 10
    assert settings.call_timeout == 60.0
    assert settings.tool_choice is None


def test_environment_and_flag_overrides() -> None:
    env = {
        "TOOLDECK_BASE_URL": "http://127.0.0.1:8080/v1",
        "TOOLDECK_MODEL": "smollm2",
        "TOOLDECK_MAX_ITERATIONS": "4",
        "TOOLDECK_CALL_TIMEOUT": "2.5",
        "XDG_DATA_HOME": "/xdg",
        "MY_KEY": "sk-from-my-key",
        "OPENAI_API_KEY": "sk-default",
        "SEARXNG_URL": "http://127.0.0.1:9/",
    }
    settings = Settings.from_env(env, api_key_env="MY_KEY", max_iterations=7, model=None)
    assert settings.base_url == "http://127.0.0.1:8080/v1"
    assert settings.model == "smollm2"  # None means "flag not given"
    assert settings.api_key == SecretStr("sk-from-my-key")  # read from the variable the flag names
    assert settings.max_iterations == 7
    assert settings.call_timeout == 2.5
    assert settings.data_dir == Path("/xdg/tooldeck")
    assert settings.searxng_url == "http://127.0.0.1:9/"
    assert Settings.from_env(env, data_dir="/d").data_dir == Path("/d")


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("TOOLDECK_MAX_PARALLEL", "4", "max_parallel", 4),
        ("TOOLDECK_MODEL_TIMEOUT", "30", "model_timeout", 30.0),
        ("TOOLDECK_STRICT", "yes", "strict", True),
        ("TOOLDECK_STRICT", "false", "strict", False),
        ("TOOLDECK_CALL_TIMEOUT", "none", "call_timeout", None),
        ("TOOLDECK_TOOL_CHOICE", "required", "tool_choice", "required"),
        ("TOOLDECK_DATA_DIR", "~/notes", "data_dir", Path("~/notes").expanduser()),
        ("TOOLDECK_MODEL", "  padded  ", "model", "padded"),
        ("TOOLDECK_BASE_URL", "", "base_url", None),  # empty means unset
        ("TOOLDECK_FREEDOM", " High ", "freedom", "high"),
        ("TOOLDECK_FREEDOM", "", "freedom", None),
    ],
)
def test_every_setting_has_a_prefixed_variable_with_coerced_types(
    variable: str, value: str, field: str, expected: object
) -> None:
    assert getattr(Settings.from_env({variable: value}), field) == expected


def test_direct_construction_coerces_types() -> None:
    settings = Settings(data_dir="x", max_iterations="7", call_timeout="2")  # type: ignore[arg-type]
    assert settings.data_dir == Path("x")  # a Path, not a str that fails later
    assert settings.data_dir / "knowledge.sqlite3" == Path("x/knowledge.sqlite3")
    assert settings.max_iterations == 7
    assert settings.call_timeout == 2.0


def test_direct_construction_never_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLDECK_MODEL", "from-the-process")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process")
    settings = Settings()
    assert settings.model == "gpt-4o-mini"
    assert settings.api_key is None


def test_secrets_are_secret_str_and_stay_out_of_repr_and_public_dict() -> None:
    env = {"OPENAI_API_KEY": "sk-SECRET", "TOOLDECK_CONTEXT_API_KEY": "ctx-SECRET"}
    settings = Settings.from_env({**env, "BRAVE_API_KEY": "brave-SECRET"})
    public = settings.public_dict()
    assert "SECRET" not in repr(settings)
    assert "SECRET" not in str(public)
    assert public["api_key_set"] is True
    assert isinstance(settings.api_key, SecretStr)
    assert settings.api_key.get_secret_value() == "sk-SECRET"
    assert settings.context_api_key == SecretStr("ctx-SECRET")
    assert settings.brave_api_key == SecretStr("brave-SECRET")


@pytest.mark.parametrize(
    ("env", "overrides", "parts"),
    [
        (
            {"TOOLDECK_MAX_ITERATIONS": "ten"},
            {},
            ["environment variable TOOLDECK_MAX_ITERATIONS='ten'", "whole number from 1 to 100", "or unset it"],
        ),
        ({"TOOLDECK_CALL_TIMEOUT": "soon"}, {}, ["TOOLDECK_CALL_TIMEOUT='soon'", "seconds"]),
        ({"TOOLDECK_CALL_TIMEOUT": "-1"}, {}, ["TOOLDECK_CALL_TIMEOUT='-1'", "greater than 0"]),
        ({"TOOLDECK_STRICT": "maybe"}, {}, ["TOOLDECK_STRICT='maybe'", "true or false"]),
        ({}, {"max_iterations": 0}, ["--max-iterations=0", "from 1 to 100"]),
        ({}, {"max_iterations": 1000}, ["--max-iterations=1000", "less than or equal to 100"]),
        ({}, {"model": "  "}, ["--model", "gpt-4o-mini"]),
        ({}, {"tool_choice": "bad name!"}, ["--tool-choice='bad name!'", "auto, required, none"]),
        ({"TOOLDECK_API_KEY_ENV": "not a name"}, {}, ["TOOLDECK_API_KEY_ENV", "OPENAI_API_KEY"]),
        ({"TOOLDECK_FREEDOM": "max"}, {}, ["TOOLDECK_FREEDOM='max'", "low (nothing runs without approval)"]),
        ({}, {"freedom": "everything"}, ["--freedom='everything'", "only dangerous tools need approval"]),
    ],
)
def test_bad_values_name_the_variable_or_flag_and_the_fix(
    env: dict[str, str], overrides: dict[str, object], parts: list[str]
) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env, **overrides)
    for part in parts:
        assert part in str(caught.value)


def test_bad_direct_values_name_the_field_and_the_fix() -> None:
    with pytest.raises(SettingsError, match=r"Settings\(max_parallel='many'\).*from 1 to 64"):
        Settings(max_parallel="many")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown setting 'colour'"):  # SettingsError is a ValueError
        Settings(colour="blue")  # type: ignore[call-arg]


def test_secret_values_never_appear_in_errors() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"OPENAI_API_KEY": "sk-SECRET", "TOOLDECK_MAX_PARALLEL": "0"})
    assert "SECRET" not in str(caught.value)


def test_unknown_override_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="unknown settings: colour"):
        Settings.from_env({}, colour="blue")


def test_settings_are_frozen() -> None:
    settings = Settings.from_env({})
    with pytest.raises(ValidationError):
        settings.model = "x"  # type: ignore[misc]


def test_a_later_setting_is_one_field() -> None:
    # Room for the settings to come (max_subagent_iterations 1-10, per-agent models): a
    # field with its bounds and description gets its variable and its error messages.
    from pydantic import Field

    class Later(Settings):
        max_subagent_iterations: int = Field(3, ge=1, le=10, description="a whole number from 1 to 10 (default 3)")
        agent_models: dict[str, str] = Field(default_factory=dict, description="agent type -> model, as JSON")

    later = Later.from_env({"TOOLDECK_AGENT_MODELS": '{"coder": "gpt-4o"}'})
    assert later.agent_models == {"coder": "gpt-4o"}
    assert later.max_subagent_iterations == 3
    with pytest.raises(SettingsError, match=r"TOOLDECK_MAX_SUBAGENT_ITERATIONS='11'.*from 1 to 10"):
        Later.from_env({"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "11"})
