"""OrchestratorService registers adopted tools beside the builtins (with their manuals)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from orchestrator import OrchestratorService, ServiceConfigError, Settings
from tools.store import RegistryService, RegistryStore, ToolConfig


def _settings(tmp_path: Path) -> Settings:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return Settings.from_env({}, data_dir=str(tmp_path / "data"), context_url=f"http://127.0.0.1:{port}")


def _cli(tool_id: str) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "id": tool_id,
            "adapter_type": "cli",
            "description": "Print a text.",
            "capabilities": ["echo"],
            "cli": {"command": ["echo"], "actions": {"say": {"args": ["{text}"]}}},
            "manual": {"risk": "safe", "mutating": False},  # the operator's word: runs at medium
        }
    )


def test_adopted_tools_are_registered_and_callable(tmp_path: Path) -> None:
    store = RegistryStore(tmp_path / "u.json", tmp_path / "p.json")
    adopted = RegistryService(store, env={"PATH": "/usr/bin:/bin"})
    adopted.adopt(_cli("say"))
    adopted.adopt(_cli("math_solver"))  # clashes with a builtin: left out, with the reason
    with OrchestratorService(_settings(tmp_path), adopted_tools=adopted) as service:
        names = service.registry.names()
        assert names[-1] == "say" and names.count("math_solver") == 1
        manual = service.registry.get_manual("say")
        assert manual is not None and (manual.source, manual.capabilities) == ("cli", ("echo",))
        assert "--id OTHER_NAME" in service.skipped["math_solver"]
        result = service.registry.call_tool("say", text="hi")
        assert (result.status, result.data) == ("success", "hi")
        exported = {t["function"]["name"] for t in service.registry.to_openai_tools(strict=True)}
        assert "say" in exported


def test_corrupt_registry_is_a_configuration_error(tmp_path: Path) -> None:
    user = tmp_path / "u.json"  # the user's own file is read; a corrupt one is an error
    user.write_text(json.dumps({"version": 1, "tools": {"x": {"adapter_type": "warp"}}}))
    adopted = RegistryService(RegistryStore(user, tmp_path / "p.json"))
    with pytest.raises(ServiceConfigError, match=r"u\.json:1: tools\.x"):
        OrchestratorService(_settings(tmp_path), adopted_tools=adopted)


def test_a_corrupt_project_file_nobody_trusted_is_ignored(tmp_path: Path) -> None:
    project = tmp_path / "p.json"
    project.write_text(json.dumps({"version": 1, "tools": {"x": {"adapter_type": "warp"}}}))
    adopted = RegistryService(RegistryStore(tmp_path / "u.json", project))
    with OrchestratorService(_settings(tmp_path), adopted_tools=adopted) as service:
        assert "x" not in service.registry
