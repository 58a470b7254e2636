"""OrchestratorService serves adopted MCP servers: sampling on its own model (gated by the
freedom level), elicitation through its approver, its workspace as roots."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from orchestrator import OrchestratorService, Settings
from tests.unit.orchestrator.mcp_kit import RecordingModel
from tools.approvals import ApprovalRequest, Approve, Deny
from tools.store import RegistryService, RegistryStore, ToolConfig

pytestmark = pytest.mark.mcp

SERVERS = Path(__file__).resolve().parents[1] / "external" / "mcp" / "servers"
REPO = Path(__file__).resolve().parents[3]


def _settings(tmp_path: Path, freedom: str) -> Settings:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return Settings.from_env(
        {}, data_dir=str(tmp_path / "data"), context_url=f"http://127.0.0.1:{port}", freedom=freedom
    )


def _adopted(tmp_path: Path) -> RegistryService:
    store = RegistryStore(tmp_path / "u.json", tmp_path / "p.json")
    service = RegistryService(store, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    server = {
        "command": [sys.executable, str(SERVERS / "features_server.py")],
        "env": {"PYTHONPATH": str(REPO)},
        "timeout": 60,
    }
    for tool in ("sample_llm", "ask_name", "show_roots"):
        service.adopt(
            ToolConfig.model_validate(
                {
                    "id": f"features_{tool}",
                    "adapter_type": "mcp",
                    "mcp": server,
                    "remote_tool": tool,
                    "manual": {"risk": "safe", "mutating": False},
                }
            )
        )
    return service


def test_sampling_runs_on_the_services_model_when_the_level_allows(tmp_path: Path) -> None:
    model = RecordingModel("Lisbon", "service-model")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with OrchestratorService(
        _settings(tmp_path, "high"), model=model, adopted_tools=_adopted(tmp_path), mcp_roots=[workspace]
    ) as service:
        sampled = service.registry.call_tool("features_sample_llm", prompt="Capital of Portugal?")
        assert (sampled.status, sampled.data) == ("success", "service-model said: Lisbon"), sampled.error
        assert model.seen == [
            [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Capital of Portugal?"}]
        ]
        roots = json.loads(service.registry.call_tool("features_show_roots").data)
        assert roots == [{"uri": workspace.as_uri(), "name": "workspace"}]
        # No approver was given: an elicitation cannot be answered now, so it is cancelled.
        asked = json.loads(service.registry.call_tool("features_ask_name").data)
        assert asked == {"action": "cancel", "content": None}


def test_below_high_sampling_and_elicitation_go_to_the_approver(tmp_path: Path) -> None:
    model = RecordingModel("Lisbon", "service-model")
    asked: list[ApprovalRequest] = []
    answers: list[Approve | Deny] = [Deny("not on my bill"), Approve(arguments={"name": "Ada"})]

    def approver(request: ApprovalRequest) -> Approve | Deny:
        asked.append(request)
        return answers.pop(0)

    with OrchestratorService(
        _settings(tmp_path, "medium"), model=model, adopted_tools=_adopted(tmp_path), approver=approver
    ) as service:
        refused = service.registry.call_tool("features_sample_llm", prompt="Spend tokens")
        assert refused.error is not None and "User rejected sampling request: not on my bill" in refused.error.message
        assert model.seen == []
        answered = json.loads(service.registry.call_tool("features_ask_name").data)
        assert answered == {"action": "accept", "content": {"name": "Ada"}}
        assert [request.tool for request in asked] == ["mcp_sampling", "mcp_elicitation"]
        assert service.registry.call_tool("features_show_roots").error is not None  # no roots: not declared
