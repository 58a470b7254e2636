"""OrchestratorService runs an enabled module in a sandboxed worker, never in its own process.

The module checks at import time where it runs: a load in the orchestrator's process (its
pid, its environment with ``OPENAI_API_KEY``, its data directory) fails, and ``list`` and
``enable`` would report ``loaded: false``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from orchestrator import OrchestratorService, Settings
from tests.integration.modules._worker_driver import install_signed
from tools.approvals import Approve

WHERE_AM_I = """
import os
from shared.adapters.base import BaseAdapter

assert os.getpid() != {host_pid}, "running in the orchestrator's process"
assert "OPENAI_API_KEY" not in os.environ, "the orchestrator's environment"
assert not os.path.isdir({data_dir!r}) or not os.listdir({data_dir!r}), "the orchestrator's data directory"


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        return self.http_session().get(config["base_url"], timeout=5).json()

    def transform(self, raw):
        return list(raw)

    @classmethod
    def normalize_for_tools(cls, data):
        return {{"count": len(data)}}
"""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_enabled_module_runs_in_a_worker_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-orchestrator-secret")
    data = tmp_path / "data"
    source = WHERE_AM_I.format(host_pid=os.getpid(), data_dir=str(data))
    install_signed(str(data), "https://api.example.com/v1", "key-123", source=source, module_id="whereami")
    settings = Settings.from_env({}, data_dir=str(data), context_url=f"http://127.0.0.1:{_closed_port()}")
    with OrchestratorService(settings) as service:
        listed = service.registry.call_tool("module_admin", action="list")
        assert listed.ok, listed.error
        (row,) = [m for m in listed.data["modules"] if m["module_id"] == "whereami"]
        assert (row["loaded"], row.get("load_error")) == (True, None), row
        arguments = {"action": "enable", "module_id": "whereami"}
        # enable is dangerous: it runs only as a person approved it, the code it serves shown
        held = service.registry.call_tool("module_admin", **arguments)
        assert held.error is not None and held.error.type == "permission_denied"
        check = service.registry.check_approval("module_admin", arguments)
        assert check is not None and check.needs_approval
        request = check.request(arguments)
        assert request.preview is not None and "whereami" in request.preview
        approved = request.approved(Approve())
        module = service.registry.call_tool_raw("module_admin", approved.arguments, approved=approved)
        assert module.data["loaded"] is True
