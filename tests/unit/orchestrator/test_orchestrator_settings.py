"""Settings.from_env: read once, flags win, secrets never shown, bad values explained."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import Settings


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
    assert settings.api_key == "sk-from-my-key"  # read from the variable the flag names
    assert settings.max_iterations == 7
    assert settings.call_timeout == 2.5
    assert settings.data_dir == Path("/xdg/tooldeck")
    assert settings.searxng_url == "http://127.0.0.1:9/"
    assert Settings.from_env(env, data_dir="/d").data_dir == Path("/d")


def test_secrets_stay_out_of_repr_and_public_dict() -> None:
    env = {"OPENAI_API_KEY": "sk-SECRET", "TOOLDECK_CONTEXT_API_KEY": "ctx-SECRET"}
    settings = Settings.from_env({**env, "BRAVE_API_KEY": "brave-SECRET"})
    public = settings.public_dict()
    assert "SECRET" not in repr(settings)
    assert "SECRET" not in str(public)
    assert public["api_key_set"] is True
    assert settings.api_key == "sk-SECRET"


@pytest.mark.parametrize(
    ("env", "overrides", "message"),
    [
        ({"TOOLDECK_MAX_ITERATIONS": "ten"}, {}, "TOOLDECK_MAX_ITERATIONS='ten' is not a int"),
        ({"TOOLDECK_CALL_TIMEOUT": "soon"}, {}, "TOOLDECK_CALL_TIMEOUT='soon' is not a float"),
        ({}, {"max_iterations": 0}, "--max-iterations"),
        ({}, {"max_iterations": 1000}, "between 1 and 100"),
        ({"TOOLDECK_CALL_TIMEOUT": "-1"}, {}, "TOOLDECK_CALL_TIMEOUT"),
        ({}, {"model": "  "}, "--model"),
    ],
)
def test_bad_values_name_the_setting_and_the_fix(
    env: dict[str, str], overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        Settings.from_env(env, **overrides)


def test_unknown_override_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="unknown settings: colour"):
        Settings.from_env({}, colour="blue")


def test_settings_are_frozen() -> None:
    settings = Settings.from_env({})
    with pytest.raises(AttributeError):
        settings.model = "x"  # type: ignore[misc]
