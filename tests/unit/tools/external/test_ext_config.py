"""Config models: typed per-adapter configs, validation errors, secrets by name, hashes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tools.external import (
    AuthConfig,
    CLIConfig,
    HTTPConfig,
    MCPConfig,
    ToolConfig,
)

HTTP: dict[str, Any] = {
    "base_url": "https://api.example.com/v1",
    "endpoints": {"user": {"path": "/users/{id}", "description": "One user."}},
}


def _tool(**over: Any) -> ToolConfig:
    data: dict[str, Any] = {"id": "ex", "name": "example", "adapter_type": "http", "config": HTTP}
    data.update(over)
    return ToolConfig.model_validate(data)


def test_config_is_typed_by_adapter_type() -> None:
    assert isinstance(_tool().config, HTTPConfig)
    cli = _tool(adapter_type="cli", config={"command": ["ls"], "actions": {"list": {}}})
    assert isinstance(cli.config, CLIConfig)
    mcp = _tool(adapter_type="mcp", config={"command": ["python", "-m", "srv"]})
    assert isinstance(mcp.config, MCPConfig)
    custom = _tool(adapter_type="custom", config={"anything": 1})
    assert custom.config == {"anything": 1}


def test_unknown_keys_are_errors_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="endpoint"):
        _tool(config={**HTTP, "endpoint": {}})
    with pytest.raises(ValidationError, match="base_url"):
        _tool(config={**HTTP, "base_url": "ftp://x"})


def test_tool_name_follows_openai_rule() -> None:
    with pytest.raises(ValidationError, match="name"):
        _tool(name="has space")


def test_auth_holds_a_variable_name_never_a_value() -> None:
    auth = AuthConfig(env_var="EXAMPLE_TOKEN")
    assert auth.header_value("abc") == "Bearer abc"
    assert AuthConfig(env_var="K", kind="header", header="X-Key").header_value("abc") == "abc"
    with pytest.raises(ValidationError):
        AuthConfig(env_var="sk-live-abc123 not a name")
    assert "secret" not in AuthConfig.model_fields


def test_mcp_config_infers_transport_and_checks_target() -> None:
    assert MCPConfig(url="http://127.0.0.1:1/mcp").transport == "streamable-http"
    stdio = MCPConfig(command=["srv"])
    assert (stdio.transport, stdio.persistent, stdio.env, stdio.cwd) == ("stdio", True, None, None)
    with pytest.raises(ValidationError, match="needs 'command'"):
        MCPConfig()
    with pytest.raises(ValidationError, match="needs 'url'"):
        MCPConfig(command=["x"], transport="streamable-http")


def test_http_action_spec_is_derived_from_the_endpoint() -> None:
    config = _tool(
        config={
            **HTTP,
            "endpoints": {"search": {"path": "/s/{kind}", "query": ["q"], "description": "S."}},
        }
    )
    (spec,) = config.action_specs()
    assert spec.name == "search"
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "description": "Value for 'kind'."},
            "q": {"type": "string", "description": "Value for 'q'."},
        },
        "required": ["kind"],
        "additionalProperties": False,
    }


def test_cli_action_spec_from_template() -> None:
    config = _tool(
        adapter_type="cli",
        config={
            "command": ["git"],
            "actions": {"log": {"args": ["log", ["-n", "{count}"], "{stat:--stat}", "{rev}", "--", "{*paths}"]}},
        },
    )
    (spec,) = config.action_specs()
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "count": {"type": "string"},
            "stat": {"type": "boolean"},
            "rev": {"type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["rev"],
        "additionalProperties": False,
    }


def test_cli_template_with_format_spec_is_refused() -> None:
    with pytest.raises(ValidationError, match="plain"):
        CLIConfig(command=["x"], actions={"a": {"args": ["--n={n:>5}"]}})  # type: ignore[dict-item]


def test_cli_secret_env_must_be_names() -> None:
    with pytest.raises(ValidationError, match="environment variable names"):
        CLIConfig(command=["x"], actions={"a": {}}, secret_env=["A B"])  # type: ignore[dict-item]


def test_version_hash_tracks_settings_not_adoption() -> None:
    base = _tool()
    readopted = _tool(adoption={"adopted_by": "ops", "stage": "trial"})
    edited = _tool(config={**HTTP, "timeout": 5})
    assert base.compute_version_hash() == readopted.compute_version_hash()
    assert base.compute_version_hash() != edited.compute_version_hash()
    stamped = base.with_version_hash()
    assert stamped.version_hash == base.compute_version_hash()
    assert stamped.compute_version_hash() == base.compute_version_hash()


def test_configs_without_actions_have_one_default_action() -> None:
    tool = _tool(adapter_type="custom", config={}, parameters={"type": "object"})
    (spec,) = tool.action_specs()
    assert (spec.name, spec.parameters) == ("default", {"type": "object"})
