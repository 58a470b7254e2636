"""Risk per action of the module tools: the approval gate reads ``action``.

Before per-action risk, ``module_admin`` was one ``moderate`` tool: at freedom level
``high`` (only ``dangerous`` tools ask) promoting a draft installed its code with nobody
asked. Each action now declares its risk, and the gate asks for the one the call names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, attestation_of
from tests.unit.tools.builtin.modules.test_module_admin import BASE, admin, install
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalRequest, Approve
from tools.builtin.modules import MODULE_ALIASES, ModuleToolkit

ADMIN = {
    "list": ("safe", False),
    "enable": ("dangerous", True),
    "disable": ("moderate", True),
    "store_credentials": ("dangerous", True),
    "create_draft": ("safe", True),
    "edit_draft": ("dangerous", True),
    "diff_draft": ("safe", False),
    "validate_draft": ("safe", True),
    "promote_draft": ("dangerous", True),
    "list_versions": ("safe", False),
    "rollback_version": ("dangerous", True),
}
PIPELINE = {
    "build": ("safe", True),
    "write_code": ("dangerous", True),
    "repair": ("dangerous", True),
    "validate": ("safe", True),
    "install": ("dangerous", True),
    "uninstall": ("dangerous", True),
}


def test_every_action_declares_its_risk(registry: LocalToolRegistry) -> None:
    for name, table in (("module_admin", ADMIN), ("module_pipeline", PIPELINE)):
        manual = registry.get_manual(name)
        assert manual is not None
        assert {a.name: (a.risk, a.mutating) for a in manual.actions} == table
        assert all(a.declared for a in manual.actions)
        assert (manual.risk, manual.mutating, manual.origin.risk) == ("dangerous", True, "author")


def test_each_old_name_has_the_risk_of_its_action(registry: LocalToolRegistry) -> None:
    for alias in MODULE_ALIASES:
        manual = registry.get_manual(alias.name)
        assert manual is not None
        table = ADMIN if alias.target == "module_admin" else PIPELINE
        assert (manual.alias_of, manual.risk, manual.mutating) == (alias.target, *table[alias.action])
        assert manual.actions == ()


@pytest.fixture
def draft(registry: LocalToolRegistry, kit: ModuleToolkit) -> str:
    """A validated draft of an installed module (made without a policy)."""
    install(registry)
    draft_id: str = admin(registry, "create_draft", module_id="run_log").data["draft_id"]
    changed = RUNS_ADAPTER.replace("timeout=5", "timeout=7")
    admin(registry, "edit_draft", draft_id=draft_id, file_path="adapter.py", content=changed)
    assert admin(registry, "validate_draft", draft_id=draft_id).data["passed"]
    return draft_id


def _gated(kit: ModuleToolkit, level: str, approver: object = None) -> LocalToolRegistry:
    gated = LocalToolRegistry(policy=ApprovalPolicy(level), approver=approver)  # type: ignore[arg-type]
    kit.register(gated)
    return gated


def test_promoting_a_draft_asks_at_level_high(kit: ModuleToolkit, draft: str) -> None:
    gated = _gated(kit, "high")
    refused = admin(gated, "promote_draft", draft_id=draft)
    assert refused.error is not None and refused.error.type == "permission_denied"
    assert refused.error.details is not None
    assert (refused.error.details["reason"], refused.error.details["risk"]) == ("approval_required", "dangerous")
    assert "action 'promote_draft' of 'module_admin' is dangerous" in refused.error.message
    assert kit.versions.active("run_log") == "v1"  # nothing was installed
    old_name = gated.call_tool("promote_draft", draft_id=draft)  # the old name asks too
    assert old_name.error is not None and old_name.error.type == "permission_denied"
    assert kit.versions.active("run_log") == "v1"
    for action, arguments in (
        ("rollback_version", {"module_id": "run_log", "target_version_id": "v1"}),
        ("enable", {"module_id": "run_log"}),
        ("edit_draft", {"draft_id": draft, "file_path": "adapter.py", "content": "x = 1\n"}),
        ("store_credentials", {"module_id": "run_log", "api_key": "k"}),
    ):
        result = admin(gated, action, **arguments)
        assert result.error is not None and result.error.type == "permission_denied", action


def test_safe_actions_run_without_asking_at_level_medium(kit: ModuleToolkit, draft: str) -> None:
    gated = _gated(kit, "medium")
    assert admin(gated, "list").ok
    assert admin(gated, "list_versions", module_id="run_log").ok
    assert admin(gated, "diff_draft", draft_id=draft).ok
    assert gated.call_tool("list_modules").ok  # an old name of a safe action
    assert admin(gated, "disable", module_id="run_log").error is not None  # moderate: asks at medium


def test_a_missing_or_unknown_action_counts_as_the_riskiest(kit: ModuleToolkit) -> None:
    gated = _gated(kit, "high")
    for arguments in ({}, {"action": "list_everything"}, {"action": 7}):
        check = gated.check_approval("module_admin", arguments)
        assert check is not None and check.needs_approval and check.risk == "dangerous"
        assert "names no known action of 'module_admin'" in check.reason
    as_text = gated.check_approval("module_admin", '{"action": "list"}')  # as the model sent it
    assert as_text is not None and as_text.allowed and as_text.risk == "safe"
    broken = gated.check_approval("module_admin", '{"action": "list"')
    assert broken is not None and broken.needs_approval


def test_an_approved_promotion_runs_once_with_the_action_risk_shown(kit: ModuleToolkit, draft: str) -> None:
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Approve:
        seen.append(request)
        return Approve()

    gated = _gated(kit, "high", approver)
    assert admin(gated, "promote_draft", draft_id=draft).ok
    assert [(r.tool, r.risk, r.arguments["action"]) for r in seen] == [("module_admin", "dangerous", "promote_draft")]
    assert kit.versions.active("run_log") == "v2"


def test_installing_asks_at_level_high(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    built = registry.call_tool("module_pipeline", action="build", name="Runs", category="fitness", api_url=BASE)
    module_id = built.data["module_id"]
    registry.call_tool("module_pipeline", action="write_code", module_id=module_id, adapter_code=RUNS_ADAPTER)
    attestation = attestation_of(registry.call_tool("module_pipeline", action="validate", module_id=module_id))
    gated = _gated(kit, "high")
    result = gated.call_tool(
        "module_pipeline", action="install", module_id=module_id, validation_attestation=attestation
    )
    assert result.error is not None and result.error.type == "permission_denied"
    assert gated.call_tool("module_pipeline", action="validate", module_id=module_id).ok  # safe: the sandbox


def test_a_remembered_approval_covers_only_calls_up_to_its_risk(kit: ModuleToolkit, tmp_path: Path) -> None:
    from tools.approvals import ApprovalsStore

    asked: list[str] = []

    def always(request: ApprovalRequest) -> Approve:
        asked.append(request.arguments["action"])
        return Approve(remember=True)

    store = ApprovalsStore(tmp_path / "approvals.json")
    gated = LocalToolRegistry(policy=ApprovalPolicy("low", store), approver=always)
    kit.register(gated)
    assert admin(gated, "list").ok  # asked once (level low), remembered for safe calls
    assert admin(gated, "list_versions", module_id="nope").error is not None  # ran (no such module): not asked
    refused = LocalToolRegistry(policy=ApprovalPolicy("low", store))
    kit.register(refused)
    check = refused.check_approval("module_admin", {"action": "promote_draft", "draft_id": "d"})
    assert check is not None and check.needs_approval
    assert "'module_admin' was approved for safe calls only" in check.reason
    assert refused.check_approval("module_admin", {"action": "diff_draft", "draft_id": "d"}).allowed  # type: ignore[union-attr]
    assert asked == ["list"]
