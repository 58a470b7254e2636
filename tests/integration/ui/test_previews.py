"""What a call would change (an approval preview, e.g. a module install's code diff) is shown to
the person asked, on the Tools page and on the Approvals page, as text."""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from pydantic import BaseModel

from orchestrator import OrchestratorService, Settings
from orchestrator.testing import FunctionModel
from orchestrator.ui import ConsoleSecurity, ConsoleSources, create_app
from orchestrator.ui.runner import ServiceRunner
from tools import BaseTool, LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore, StateSigner
from tools.runs import FileRunStore

TOKEN = "a-token-of-thirty-two-characters"
ORIGIN = "http://127.0.0.1:8777"
DIFF = "--- active/adapter.py\n+++ new/adapter.py\n+import os  # <script>alert(1)</script>\n"


class InstallRequest(BaseModel):
    module: str


class InstallModule(BaseTool[InstallRequest, str]):
    name = "install_module"
    description = "Install a module."

    def approval_preview(self, request: InstallRequest) -> str:
        return DIFF.replace("adapter", request.module)

    def execute_internal(self, request: InstallRequest) -> str:
        return f"installed {request.module}"


def _page_text(html: str) -> str:
    match = re.search(r'<pre class="diff"[^>]*>(.*?)</pre>', html, re.S)
    assert match is not None, html[-3000:]
    return match.group(1)


def test_the_tools_page_shows_the_preview_before_a_call_is_approved(tmp_path: Path) -> None:
    registry = LocalToolRegistry(policy=ApprovalPolicy(None, ApprovalsStore(tmp_path / "approvals.json")))
    registry.register(InstallModule())
    app = create_app(ConsoleSources(registry=registry), ConsoleSecurity(token=TOKEN, port=8777))
    with TestClient(app, base_url=ORIGIN) as client:
        page = client.get(f"/tools/install_module?token={TOKEN}").text
        csrf = re.search(r'name="csrf-token" content="([0-9a-f]{64})"', page)
        assert csrf is not None
        shown = client.post(
            "/tools/install_module/call",
            data={"arg.module": "weather", "csrf_token": csrf.group(1)},
            headers={"Origin": ORIGIN},
        ).text
    text = _page_text(shown)
    assert "+++ new/weather.py" in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def install_weather(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> Any:
    """Asks for the install once; then answers."""
    if messages[-1].get("role") == "tool":
        return "done"
    return {
        "tool_calls": [{"id": "call_1", "function": {"name": "install_module", "arguments": {"module": "weather"}}}]
    }


def test_the_approvals_page_shows_a_held_calls_preview(tmp_path: Path) -> None:
    approvals = ApprovalsStore(tmp_path / "config" / "approvals.json")
    signer = StateSigner.from_file(tmp_path / "config" / "state.key")
    runs = FileRunStore(tmp_path / "data" / "runs")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"

    def service(agent: str | None) -> OrchestratorService:
        mine = LocalToolRegistry()
        mine.register(InstallModule())
        return OrchestratorService(
            Settings(data_dir=tmp_path / "data", context_url=closed, agent=agent),
            model=FunctionModel(install_weather),
            tools=[mine],
            builtins=False,
            approvals=approvals,
            state_signer=signer,
            runs=runs,
        )

    runner = ServiceRunner(service, data_dir=tmp_path / "data", signer=signer)
    try:
        runner.ask("install the weather module")
        assert runner.wait(120)
        (held_run,) = [a.run_id for a in runner.activities() if a.outcome == "paused"]
        sources = ConsoleSources(registry=LocalToolRegistry(), runs=runs, runner=runner)
        app = create_app(sources, ConsoleSecurity(token=TOKEN, port=8777))
        with TestClient(app, base_url=ORIGIN) as client:
            page = client.get(f"/approvals?token={TOKEN}").text
        assert f'id="run-{held_run}"' in page
        text = _page_text(page)
        assert "+++ new/weather.py" in text
        assert "&lt;script&gt;" in text
    finally:
        runner.close()
