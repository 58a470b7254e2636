"""ToolConfig and Registry: validation, file form, version hash."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tools.store import ManualOverrides, Registry, ToolAuth, ToolConfig

from .conftest import http_config


def test_exactly_the_named_adapter_settings() -> None:
    with pytest.raises(ValidationError, match="needs a 'cli' object"):
        ToolConfig.model_validate({"id": "x", "adapter_type": "cli"})
    with pytest.raises(ValidationError, match="takes only the 'http' settings; remove \\['cli'\\]"):
        ToolConfig.model_validate(
            {
                **http_config().model_dump(exclude_none=True),
                "cli": {"command": ["echo"], "actions": {"say": {"args": ["{text}"]}}},
            }
        )


def test_mcp_tool_needs_remote_tool() -> None:
    with pytest.raises(ValidationError, match="remote_tool"):
        ToolConfig.model_validate({"id": "t", "adapter_type": "mcp", "mcp": {"command": ["srv"]}})


@pytest.mark.parametrize("bad", ["", "has space", "x" * 65, "semi;colon", "../up"])
def test_bad_ids_are_refused(bad: str) -> None:
    with pytest.raises(ValidationError, match="id"):
        http_config(bad)


def test_auth_holds_a_variable_name_only() -> None:
    with pytest.raises(ValidationError):
        ToolAuth(env_var="not a name")
    with pytest.raises(ValidationError, match="Extra inputs"):
        ToolAuth.model_validate({"env_var": "KEY", "value": "secret"})


def test_version_hash_covers_behaviour_not_identity() -> None:
    base = http_config()
    assert base.compute_version_hash() == http_config("other", capabilities=("weather",)).compute_version_hash()
    assert len(base.compute_version_hash()) == 64
    changed_url = ToolConfig.model_validate(
        {**base.model_dump(mode="json"), "http": {**base.model_dump(mode="json")["http"], "base_url": "http://x"}}
    )
    assert changed_url.compute_version_hash() != base.compute_version_hash()
    risky = base.model_copy(update={"manual": ManualOverrides(risk="dangerous")})
    assert risky.compute_version_hash() != base.compute_version_hash()
    authed = base.model_copy(update={"auth": ToolAuth(env_var="WEATHER_KEY")})
    assert authed.compute_version_hash() != base.compute_version_hash()


def test_registry_file_form_round_trips_and_keys_fill_ids() -> None:
    registry = Registry(tools={"weather": http_config().with_version_hash()})
    text = registry.to_json_text()
    doc = json.loads(text)
    assert doc["version"] == 1 and list(doc["tools"]) == ["weather"]
    assert "capabilities" not in doc["tools"]["weather"]  # defaults left out
    assert Registry.model_validate_json(text) == registry
    del doc["tools"]["weather"]["id"]
    assert Registry.from_data(doc).tools["weather"].id == "weather"


def test_registry_key_must_match_id() -> None:
    with pytest.raises(ValidationError, match="the key and the id must be equal"):
        Registry.model_validate({"tools": {"a": http_config("b").model_dump(mode="json")}})


def test_newer_schema_version_is_refused() -> None:
    with pytest.raises(ValidationError):
        Registry.model_validate({"version": 2, "tools": {}})
