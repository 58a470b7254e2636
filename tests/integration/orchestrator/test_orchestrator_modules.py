"""OrchestratorService and the module tools: registered, reachable by the offline model,
repair wired to the service's model."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from orchestrator import OrchestratorService, Settings
from orchestrator.graph import AgentRun
from orchestrator.offline import OfflineModel
from tools import LocalToolRegistry, ToolResult
from tools.approvals import Approve, ApprovedCall


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def service(tmp_path: Path) -> OrchestratorService:
    settings = Settings.from_env({}, data_dir=str(tmp_path / "data"), context_url=f"http://127.0.0.1:{_closed_port()}")
    return OrchestratorService(settings)


def _approving(service: OrchestratorService, run: AgentRun) -> AgentRun:
    """The run with every call it holds approved by a person (the module tools are dangerous)."""
    while run.status == "awaiting_approval" and run.state is not None:
        run = service.resume(run.state, {r.call_id: Approve() for r in run.pending_approvals if r.call_id})
    return run


def _approved(registry: LocalToolRegistry, tool: str, /, **arguments: object) -> ToolResult:
    """A call of ``tool`` a person approved, run exactly once through the registry's gate."""
    version_hash = registry.tool_version_hash(tool)
    assert version_hash is not None
    return registry.call_tool_raw(tool, arguments, approved=ApprovedCall.of(tool, arguments, version_hash))


def test_the_offline_model_builds_a_module_on_request(service: OrchestratorService, tmp_path: Path) -> None:
    with service:
        run = _approving(service, service.ask("Build a module for my running log at http://127.0.0.1:9/api/runs"))
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
        code = registry.call_tool("write_module_code", module_id="runs", adapter_code="import os\n")
        assert code.error is not None and code.error.type == "permission_denied"  # dangerous: asks
        _approved(registry, "build_module", name="Runs", category="fitness", api_url="http://127.0.0.1:9/api")
        _approved(registry, "write_module_code", module_id="runs", adapter_code="import os\n")
        report = _approved(registry, "validate_module", module_id="runs")
        assert report.data["passed"] is False
        repaired = _approved(registry, "module_pipeline", action="repair", module_id="runs")
        assert repaired.error is not None
        assert "The LLM gateway's answer held no valid Python code" in repaired.error.message
