"""A module from build to user_context, against a real local JSON API and the real service.

The model's calls go through the registry exactly as a model sends them: build a module
for the API, write its adapter (first with a forbidden import, which validation refuses,
then correctly), validate, install with the attestation, store the API key, enable it,
and read its data through the context service and ``user_context``. Then a draft that
breaks it is refused by validate_draft, a draft that passes its tests but breaks against
the real API is promoted, and rollback_version restores the working version.

The module's tests run in the real sandbox when it has workspace support (the pipeline
branch), else that variant is skipped; the other variant runs the same harness in
``SubprocessSandbox``, the workspace contract as a plain subprocess. The enabled module
runs in sandboxed workers in both variants: one in the context service (its HTTP sent by
the host, 127.0.0.1 allowed by the operator) and one on the tool side (``normalize_for_tools``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from shared.adapters import AdapterRegistry
from shared.modules import ModuleAdapters, ModuleWorkers, NoEgress
from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, SubprocessSandbox, runs_test
from tools import LocalToolRegistry
from tools.builtin.code_executor import LocalSandbox
from tools.builtin.context_bridge import ContextBridge
from tools.builtin.modules import SANDBOX_NEEDS_WORKSPACE, ModuleToolkit, sandboxed_workers, workspace_supported
from tools.builtin.user_context import UserContextTool

API_KEY = "runs-key-5f4e3d2c1b"
SERVICE_KEY = "service-key"
RUNS = {"runs": [{"date": "2026-11-24", "km": 5.2}, {"date": "2026-11-25", "km": 7.5}]}


class _RunsHandler(BaseHTTPRequestHandler):
    server: _RunsServer

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("X-API-Key")))
        body: Any
        if self.path != "/api/runs":
            status, body = 404, {"error": "not found"}
        elif self.headers.get("X-API-Key") != API_KEY:
            status, body = 401, {"error": "bad key"}
        else:
            status, body = 200, RUNS
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _RunsServer(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str | None]]


@pytest.fixture
def runs_api() -> Iterator[_RunsServer]:
    server = _RunsServer(("127.0.0.1", 0), _RunsHandler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture(params=["local-sandbox", "subprocess-double"])
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "subprocess-double":
        yield SubprocessSandbox()
        return
    real = LocalSandbox(hidden_dirs=[tmp_path])
    if not workspace_supported(real):
        real.close()
        pytest.skip(SANDBOX_NEEDS_WORKSPACE)
    yield real
    real.close()


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[ModuleWorkers, ModuleWorkers]]:
    """Sandboxed workers for the tool side (no HTTP) and for the context service."""
    tool_side = sandboxed_workers(hidden_dirs=[tmp_path], egress=NoEgress())
    service_side = sandboxed_workers(hidden_dirs=[tmp_path], allow_hosts=["127.0.0.1"])
    yield tool_side, service_side
    tool_side.close()
    service_side.close()


def test_a_module_from_build_to_user_context_and_back_by_rollback(
    tmp_path: Path,
    sandbox: Any,
    workers: tuple[ModuleWorkers, ModuleWorkers],
    runs_api: _RunsServer,
    start_service: Callable[..., Any],
) -> None:
    from shared.modules import ModuleKeys

    keys = ModuleKeys.load(tmp_path / "module-keys")
    kit = ModuleToolkit.create(tmp_path / "modules", keys=keys, sandbox=sandbox, workers=workers[0])
    tools = LocalToolRegistry()
    kit.register(tools)
    api_url = f"http://127.0.0.1:{runs_api.server_address[1]}/api/runs"

    def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
        result = tools.call_tool_raw(tool, json.dumps(arguments))
        assert result.ok, (tool, arguments.get("action"), result.error)
        assert API_KEY not in json.dumps(result.to_dict())
        data: dict[str, Any] = result.data
        return data

    # build, then a first attempt with a forbidden import
    built = call(
        "module_pipeline",
        action="build",
        name="Run log",
        category="fitness",
        description="My runs from the local running API",
        api_url=api_url,
        requires_api_key=True,
        auth_type="api_key",
    )
    module_id = built["module_id"]
    assert module_id == "run_log"
    call("module_pipeline", action="write_code", module_id=module_id, adapter_code="import os\n" + RUNS_ADAPTER)
    failed = call("module_pipeline", action="validate", module_id=module_id)
    assert failed["passed"] is False
    assert [(f["file"], f["line"], f["rule"]) for f in failed["findings"]] == [("adapter.py", 1, "forbidden-import")]

    # the right code and its tests: validate passes, install with the attestation
    call("module_pipeline", action="write_code", module_id=module_id, adapter_code=RUNS_ADAPTER)
    kit.store.write_file(module_id, "test_adapter.py", runs_test(api_url))
    passed = call("module_pipeline", action="validate", module_id=module_id)
    assert passed["passed"] is True, passed["findings"]
    assert passed["tests_run"] == 2
    installed = call(
        "module_pipeline", action="install", module_id=module_id, validation_attestation=passed["attestation"]
    )
    assert (installed["version_id"], installed["enabled"]) == ("v1", False)
    assert call("module_admin", action="store_credentials", module_id=module_id, api_key=API_KEY)["missing"] == []

    # the context service (its own loader over the same store and keys), and user_context
    served = ModuleAdapters.from_store(tmp_path / "modules", key_dir=tmp_path / "module-keys", workers=workers[1])
    service = start_service({"users": {"default": {"timezone": "UTC"}}}, api_key=SERVICE_KEY, modules=served)
    bridge = ContextBridge(
        service.url,
        api_key=SERVICE_KEY,
        timeout=10,
        adapters=kit.adapters.registry_over(AdapterRegistry.with_builtin_adapters()),
    )
    tools.register(UserContextTool(context_bridge=bridge))

    def fitness() -> dict[str, Any]:
        entry: dict[str, Any] = call("user_context", category="fitness")["categories"]["fitness"]
        return entry

    assert fitness()["status"] == "not_configured"
    enabled = call("module_admin", action="enable", module_id=module_id)
    assert (enabled["enabled"], enabled["loaded"]) == (True, True)
    assert fitness() == {"status": "ok", "runs": 2, "total_km": 12.7, "latest": "2026-11-25"}
    assert ("/api/runs", API_KEY) in runs_api.seen

    # a draft that breaks the tests is refused
    draft = call("module_admin", action="create_draft", module_id=module_id)["draft_id"]
    broken = RUNS_ADAPTER.replace('"total_km": total', '"total_km": -total')
    call("module_admin", action="edit_draft", draft_id=draft, file_path="adapter.py", content=broken)
    report = call("module_admin", action="validate_draft", draft_id=draft)
    assert report["passed"] is False
    assert [(f["file"], f["rule"]) for f in report["findings"]] == [("test_adapter.py", "test-failure")]
    refused = tools.call_tool("module_admin", action="promote_draft", draft_id=draft)
    assert refused.error is not None and refused.error.type == "permission_denied"

    # a draft that passes its tests but breaks against the real API is promoted ...
    draft = call("module_admin", action="create_draft", module_id=module_id)["draft_id"]
    renamed = RUNS_ADAPTER.replace('raw.get("runs")', 'raw.get("activities")')
    tests = runs_test(api_url).replace('SAMPLE = {"runs"', 'SAMPLE = {"activities"')
    call("module_admin", action="edit_draft", draft_id=draft, file_path="adapter.py", content=renamed)
    call("module_admin", action="edit_draft", draft_id=draft, file_path="test_adapter.py", content=tests)
    diff = call("module_admin", action="diff_draft", draft_id=draft)
    assert diff["changed_files"] == ["adapter.py", "test_adapter.py"]
    assert call("module_admin", action="validate_draft", draft_id=draft)["passed"] is True
    assert call("module_admin", action="promote_draft", draft_id=draft)["version_id"] == "v2"
    assert fitness() == {"status": "error", "reason": "no runs in the answer"}

    # ... and rollback restores exactly the working version
    rolled = call("module_admin", action="rollback_version", module_id=module_id, target_version_id="v1")
    assert (rolled["active_version"], rolled["previous_version"]) == ("v1", "v2")
    assert kit.versions.files(module_id, "v1")["adapter.py"].decode() == RUNS_ADAPTER
    assert fitness() == {"status": "ok", "runs": 2, "total_km": 12.7, "latest": "2026-11-25"}

    # disabling takes it away without a restart
    call("module_admin", action="disable", module_id=module_id)
    assert fitness()["status"] == "not_configured"
    served.close()
    kit.adapters.close()
