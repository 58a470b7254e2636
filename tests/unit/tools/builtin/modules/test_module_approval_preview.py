"""What a person approves for ``install`` and ``promote_draft``: the module's code (a unified
diff against the active version, all of it for a first install), not only an id and an
attestation; and a draft changed after they looked is not promoted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, attestation_of, make_toolkit
from tools import LocalToolRegistry, ToolResult
from tools.approvals import ApprovalPolicy, ApprovalRequest, ApprovalsStore, Approve, Deny
from tools.builtin.modules import ModuleToolkit

BASE = "http://127.0.0.1:8000/api/runs"


class Asked:
    """An approver that approves every call and keeps the requests it was shown."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approve | Deny:
        self.requests.append(request)
        return Approve()

    def last(self, tool: str, action: str) -> ApprovalRequest:
        return [r for r in self.requests if r.tool == tool and r.arguments.get("action") == action][-1]


@pytest.fixture
def asked() -> Asked:
    return Asked()


@pytest.fixture
def gated(tmp_path: Path, asked: Asked) -> tuple[LocalToolRegistry, ModuleToolkit]:
    kit = make_toolkit(tmp_path)
    registry = LocalToolRegistry(policy=ApprovalPolicy("low", ApprovalsStore(tmp_path / "a.json")), approver=asked)
    kit.register(registry, aliases=False)
    return registry, kit


def _call(registry: LocalToolRegistry, tool: str, action: str, **arguments: Any) -> ToolResult:
    result = registry.call_tool(tool, action=action, **arguments)
    assert result.ok, result.error
    return result


def _install(registry: LocalToolRegistry) -> str:
    built = _call(registry, "module_pipeline", "build", name="Run Log", category="fitness", api_url=BASE)
    module_id: str = built.data["module_id"]
    _call(registry, "module_pipeline", "write_code", module_id=module_id, adapter_code=RUNS_ADAPTER)
    attestation = attestation_of(registry.call_tool("module_pipeline", action="validate", module_id=module_id))
    _call(registry, "module_pipeline", "install", module_id=module_id, validation_attestation=attestation)
    return module_id


def test_a_first_install_shows_the_whole_code(gated: tuple[LocalToolRegistry, ModuleToolkit], asked: Asked) -> None:
    registry, _ = gated
    _install(registry)
    preview = asked.last("module_pipeline", "install").preview
    assert preview is not None
    assert preview.startswith("First install of module 'run_log' from the build area: the whole code (")
    assert "--- /dev/null\n+++ b/adapter.py\n" in preview
    for line in RUNS_ADAPTER.splitlines():
        assert f"+{line}\n" in preview
    assert preview.endswith("The attestation matches these files.\n")
    assert asked.last("module_pipeline", "build").preview is None  # only install shows code


def test_a_reinstall_shows_the_diff_against_the_active_version(
    gated: tuple[LocalToolRegistry, ModuleToolkit], asked: Asked
) -> None:
    registry, _ = gated
    module_id = _install(registry)
    changed = RUNS_ADAPTER.replace("timeout=5", "timeout=9")
    _call(registry, "module_pipeline", "write_code", module_id=module_id, adapter_code=changed)
    attestation = attestation_of(registry.call_tool("module_pipeline", action="validate", module_id=module_id))
    _call(registry, "module_pipeline", "install", module_id=module_id, validation_attestation=attestation)
    preview = asked.last("module_pipeline", "install").preview
    assert preview is not None
    assert preview.startswith(
        "Module 'run_log': the build area against the active version v1 (1 file(s) changed: adapter.py)."
    )
    assert '-            response = self.http_session().get(config["base_url"], headers=headers, timeout=5)' in preview
    assert '+            response = self.http_session().get(config["base_url"], headers=headers, timeout=9)' in preview


def test_an_install_whose_attestation_does_not_match_says_it_will_be_refused(
    gated: tuple[LocalToolRegistry, ModuleToolkit], asked: Asked
) -> None:
    registry, _ = gated
    module_id = _install(registry)
    first = asked.last("module_pipeline", "install").arguments["validation_attestation"]
    _call(registry, "module_pipeline", "write_code", module_id=module_id, adapter_code=RUNS_ADAPTER + "\n# more\n")
    registry.call_tool("module_pipeline", action="install", module_id=module_id, validation_attestation=first)
    preview = asked.last("module_pipeline", "install").preview
    assert preview is not None
    assert preview.endswith(
        "install will refuse: the module's files changed after validation (the attestation is for other code).\n"
    )


def test_promote_draft_shows_the_drafts_diff_against_the_active_version(
    gated: tuple[LocalToolRegistry, ModuleToolkit], asked: Asked
) -> None:
    registry, _ = gated
    module_id = _install(registry)
    draft_id = _call(registry, "module_admin", "create_draft", module_id=module_id).data["draft_id"]
    changed = RUNS_ADAPTER.replace('"no runs in the answer"', '"the answer holds no runs"')
    _call(registry, "module_admin", "edit_draft", draft_id=draft_id, file_path="adapter.py", content=changed)
    _call(registry, "module_admin", "validate_draft", draft_id=draft_id)
    _call(registry, "module_admin", "promote_draft", draft_id=draft_id)
    preview = asked.last("module_admin", "promote_draft").preview
    assert preview is not None
    assert preview.startswith(
        f"Module 'run_log': draft {draft_id} against the active version v1 (1 file(s) changed: adapter.py)."
    )
    assert '-            raise AdapterError("no runs in the answer")\n' in preview
    assert '+            raise AdapterError("the answer holds no runs")\n' in preview
    assert asked.last("module_admin", "edit_draft").preview is None


def test_a_draft_changed_after_the_approval_is_not_promoted(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path)
    policy = ApprovalPolicy("low", ApprovalsStore(tmp_path / "a.json"))
    approving = LocalToolRegistry(policy=policy, approver=lambda request: Approve())
    kit.register(approving, aliases=False)
    module_id = _install(approving)
    draft_id = _call(approving, "module_admin", "create_draft", module_id=module_id).data["draft_id"]
    shown = RUNS_ADAPTER.replace("timeout=5", "timeout=6")
    _call(approving, "module_admin", "edit_draft", draft_id=draft_id, file_path="adapter.py", content=shown)
    _call(approving, "module_admin", "validate_draft", draft_id=draft_id)

    held = LocalToolRegistry(policy=policy)  # no approver: the call is held and approved later
    kit.register(held, aliases=False)
    check = held.check_approval("module_admin", {"action": "promote_draft", "draft_id": draft_id})
    assert check is not None and check.needs_approval
    request = check.request({"action": "promote_draft", "draft_id": draft_id})
    approved = request.approved(Approve())  # the person approved timeout=6

    swapped = RUNS_ADAPTER.replace("timeout=5", "timeout=6") + "\nimport os  # not what was shown\n"
    _call(approving, "module_admin", "edit_draft", draft_id=draft_id, file_path="adapter.py", content=swapped)
    _call(approving, "module_admin", "validate_draft", draft_id=draft_id)
    result = held.call_tool_raw("module_admin", approved.arguments, approved=approved)
    assert result.error is not None and result.error.type == "permission_denied"
    assert "no longer what a person approved" in result.error.message
    versions = _call(approving, "module_admin", "list_versions", module_id=module_id).data
    assert versions["active_version"] == "v1" and len(versions["versions"]) == 1
