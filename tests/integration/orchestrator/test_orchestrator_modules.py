"""OrchestratorService and the module tools: registered, reachable by the offline model,
repair wired to the service's model."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from orchestrator import OrchestratorService, Settings
from orchestrator.offline import OfflineModel


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def service(tmp_path: Path) -> OrchestratorService:
    settings = Settings.from_env({}, data_dir=str(tmp_path / "data"), context_url=f"http://127.0.0.1:{_closed_port()}")
    return OrchestratorService(settings)


def test_the_offline_model_builds_a_module_on_request(service: OrchestratorService, tmp_path: Path) -> None:
    with service:
        run = service.ask("Build a module for my running log at http://127.0.0.1:9/api/runs")
        assert run.answer.startswith(
            "I built the module 'running_log' (fitness, reading http://127.0.0.1:9/api/runs) from the template."
        )
        assert (tmp_path / "data" / "modules" / "work" / "running_log" / "adapter.py").is_file()
        keys = tmp_path / "data" / "module-keys"
        assert sorted(p.name for p in keys.iterdir()) == ["module-credentials.key", "module-signing.key"]
        assert all(p.stat().st_mode & 0o777 == 0o600 for p in keys.iterdir())


def test_repair_asks_the_services_model(service: OrchestratorService) -> None:
    with service:
        assert isinstance(service.model, OfflineModel)
        registry = service.registry
        registry.call_tool("build_module", name="Runs", category="fitness", api_url="http://127.0.0.1:9/api")
        registry.call_tool("write_module_code", module_id="runs", adapter_code="import os\n")
        report = registry.call_tool("validate_module", module_id="runs")
        assert report.data["passed"] is False
        repaired = registry.call_tool("module_pipeline", action="repair", module_id="runs")
        assert repaired.error is not None
        assert "The LLM gateway's answer held no valid Python code" in repaired.error.message
