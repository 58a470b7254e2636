"""The risk model (tools.manual): risk is declared, never guessed down.

Precedence: the operator, then the tool's author, then defaults that fail closed (undeclared:
``moderate`` and mutating; a name that destroys, sends, pays, deploys or executes:
``dangerous``). A remote party's hints may raise risk and lower it only when trusted.
"""

from __future__ import annotations

from typing import Any

import pytest

from tools import LocalToolRegistry, ToolManual
from tools._fail_closed import external_manual
from tools._risk_words import name_words, risky_program, risky_word
from tools.approvals import ApprovalPolicy
from tools.manual import ActionRisk, ManualOrigin, ToolCategory
from tools.routing import ManualOverride, ToolRouter, ToolRoutingConfig

#: Names the issue showed coming out safe; every one of them must not be.
HOSTILE_NAMES = ["shell", "send_email", "transfer_funds", "kubectl", "psql", "git_push", "wipe", "rm", "deleteAll"]


def _function(name: str) -> Any:
    def run(target: str = "") -> str:
        """Does something to a target."""
        return target

    run.__name__ = name
    return run


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_risky_name_without_a_manual_is_dangerous(name: str) -> None:
    registry = LocalToolRegistry()
    registry.register(_function(name))
    manual = registry.get_manual(name)
    assert manual is not None
    assert (manual.risk, manual.mutating, manual.origin.risk) == ("dangerous", True, "name")
    assert manual.origin.notes[0].startswith("its name says ")
    assert ApprovalPolicy("high").check(registry.get_tool(name), manual=manual).needs_approval  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["notes", "lookup", "get_weather", "format_date", "dropbox_list", "HTTPServer"])
def test_a_harmless_name_is_never_safe_either(name: str) -> None:
    registry = LocalToolRegistry()
    registry.register(_function(name))
    manual = registry.get_manual(name)
    assert manual is not None
    assert (manual.risk, manual.mutating, manual.category) == ("moderate", True, ToolCategory.UNCLASSIFIED)
    assert (manual.origin.risk, manual.origin.mutating, manual.origin.category) == ("default",) * 3
    assert ApprovalPolicy("medium").check(registry.get_tool(name), manual=manual).needs_approval  # type: ignore[arg-type]


def test_name_words_and_inflections() -> None:
    assert name_words("sendEmail") == ["send", "email"]
    assert name_words("HTTPServer_v2") == ["http", "server", "v", "2"]
    assert risky_word("removed_items") == ("remove", "destroys data")
    assert risky_word("running_jobs") == ("run", "executes commands or code")
    assert risky_word("dropbox", "format", "status", "address") is None
    assert risky_program("/usr/bin/rm") == ("rm", "destroys data")
    assert risky_program("/usr/bin/env") == ("env", "runs other programs or code")
    assert risky_program("python3.11") == ("python", "runs other programs or code")
    assert risky_program("cat") is None


def test_the_author_declares_and_the_operator_wins() -> None:
    author = ToolManual(name="delete_cache", category=ToolCategory.MEMORY, risk="safe", mutating=True)
    assert (author.risk, author.origin.risk) == ("safe", "author")  # the author knows better than the name
    registry = LocalToolRegistry()
    registry.register(_function("delete_cache"), manual=author)
    assert registry.get_manual("delete_cache").origin.risk == "operator"  # type: ignore[union-attr]
    override = ManualOverride(risk="dangerous").apply(author)
    assert (override.risk, override.origin.risk, override.origin.mutating) == ("dangerous", "operator", "author")


def test_an_undeclared_manual_fails_closed_and_a_round_trip_keeps_its_origin() -> None:
    manual = ToolManual(name="lookup", display_name="Lookup")
    assert (manual.risk, manual.mutating, manual.category) == ("moderate", True, ToolCategory.UNCLASSIFIED)
    assert not manual.read_only_declared
    assert ToolManual.model_validate(manual.model_dump(mode="json")) == manual
    declared = ToolManual(name="lookup", mutating=False)
    assert declared.read_only_declared
    # a copy that flips the flag without declaring it is not declared read-only
    assert not manual.model_copy(update={"mutating": False}).read_only_declared


def test_cli_tools_are_at_least_moderate_and_a_program_can_make_them_dangerous() -> None:
    cat = external_manual("notes", source="cli", programs=["cat"])
    assert (cat.risk, cat.origin.risk) == ("moderate", "program")
    rm = external_manual("notes", source="cli", programs=["/bin/rm"])
    assert (rm.risk, rm.origin.risk, rm.origin.notes) == (
        "dangerous",
        "name",
        ("it runs the program '/bin/rm' (destroys data)",),
    )
    trusted = external_manual("notes", source="cli", read_only=True, trusted=True)
    assert (trusted.risk, trusted.mutating) == ("moderate", False)  # a program is never safe by a hint


@pytest.mark.parametrize(
    ("hints", "expected"),
    [
        ({"read_only": True}, ("dangerous", True, "name")),
        ({"read_only": True, "trusted": True}, ("safe", False, "trusted-hint")),
        ({"read_only": False, "destructive": False, "trusted": True}, ("moderate", True, "trusted-hint")),
        ({"read_only": False, "destructive": False}, ("dangerous", True, "name")),
        ({"read_only": True, "destructive": True, "trusted": True}, ("dangerous", True, "name")),
        ({"risk_hint": "safe"}, ("dangerous", True, "name")),
    ],
)
def test_hints_raise_and_lower_only_when_trusted(hints: dict[str, Any], expected: tuple[object, ...]) -> None:
    manual = external_manual("delete_everything", source="mcp", **hints)
    assert (manual.risk, manual.mutating, manual.origin.risk) == expected


def test_a_destructive_hint_raises_an_innocent_name() -> None:
    manual = external_manual("tidy", source="mcp", destructive=True)
    assert (manual.risk, manual.origin.risk) == ("dangerous", "hint")
    claimed = external_manual("tidy", source="http", risk_hint="dangerous")
    assert (claimed.risk, claimed.origin.risk) == ("dangerous", "hint")
    ignored = external_manual("tidy", source="http", risk_hint="safe")
    assert ignored.risk == "moderate"
    assert ignored.origin.notes == ("the server claims it is safe; ignored: the server is not trusted",)


def test_actions_make_the_tool_as_risky_as_its_riskiest_action() -> None:
    manual = ToolManual(
        name="box",
        actions=(
            ActionRisk(name="look", risk="safe", mutating=False),
            ActionRisk(name="burn", risk="dangerous", mutating=True),
        ),
    )
    assert (manual.risk, manual.mutating, manual.origin.risk) == ("dangerous", True, "author")
    assert [manual.risk_for(a) for a in ("look", "burn", "other", None, 3)] == ["safe", "dangerous", *["dangerous"] * 3]
    everything = manual.with_declarations(risk="moderate")  # the operator's tool-level risk covers every action
    assert (everything.actions, everything.risk, everything.risk_for("burn")) == ((), "moderate", "moderate")
    with pytest.raises(ValueError, match="actions repeat a name"):
        ToolManual(name="box", actions=(ActionRisk(name="a", risk="safe", mutating=False),) * 2)


def test_actions_that_declare_nothing_take_the_tools_declared_risk() -> None:
    undeclared = (ActionRisk(name="show", risk="moderate", mutating=True, declared=False),)
    declared = ToolManual(name="box", risk="dangerous", mutating=True).with_actions(undeclared)
    assert (declared.risk_for("show"), declared.origin.risk) == ("dangerous", "author")
    calm = ToolManual(name="box", risk="safe", mutating=False).with_actions(undeclared)
    assert (calm.risk_for("show"), calm.mutating) == ("safe", False)  # the author's word covers it
    unknown = ToolManual(name="box").with_actions(undeclared)  # nothing declared: fail closed
    assert (unknown.risk_for("show"), unknown.origin.risk) == ("moderate", "default")


def test_origins_read_as_sentences() -> None:
    origin = ManualOrigin(risk="trusted-hint", category="heuristic", mutating="default")
    assert origin.describe("risk") == "declared by a trusted server's hint"
    assert origin.describe("category") == "placed by the routing name heuristic"
    assert origin.declared("risk") and not origin.declared("mutating")


def test_a_routing_config_declaration_reaches_the_views_approvals() -> None:
    registry = LocalToolRegistry(policy=ApprovalPolicy("medium"))
    safe = ToolManual(name="peek", category=ToolCategory.FILE_READ, risk="safe", mutating=False)
    registry.register(_function("peek"), manual=safe)
    assert registry.call_tool("peek", target="x").ok  # safe: runs at medium
    raised = ToolRoutingConfig(manuals={"peek": ManualOverride(risk="dangerous")})
    view = registry.for_agent("reviewer", ToolRouter(config=raised))
    refused = view.call_tool("peek", target="x")
    assert refused.error is not None and refused.error.type == "permission_denied"
    check = view.check_approval("peek", {"target": "x"})
    assert check is not None and check.needs_approval and check.risk == "dangerous"
    assert view.tool_version_hash("peek") != registry.tool_version_hash("peek")  # an approval is bound to the risk
    lowered = ToolRoutingConfig(manuals={"peek": ManualOverride(risk="safe")})
    plain = registry.for_agent("reviewer", ToolRouter(config=lowered))
    assert plain.call_tool("peek", target="x").ok


def test_an_external_tool_without_a_manual_counts_its_program() -> None:
    from tools.external import CLIAdapter, ToolConfig
    from tools.external.external_tool import ExternalTool

    actions = {"default": {"args": ["{path}"]}}
    rm = ToolConfig(id="notes", name="notes", adapter_type="cli", config={"command": ["rm"], "actions": actions})
    cat = ToolConfig(id="show", name="show", adapter_type="cli", config={"command": ["cat"], "actions": actions})
    adapter = CLIAdapter(env={})
    dangerous = ExternalTool(rm, adapter=adapter).get_manual()
    assert (dangerous.source, dangerous.risk, dangerous.origin.risk) == ("cli", "dangerous", "name")
    plain = ExternalTool(cat, adapter=adapter).get_manual()
    assert (plain.source, plain.risk, plain.origin.risk, plain.mutating) == ("cli", "moderate", "program", True)


def test_the_core_store_and_approvals_never_import_the_routing_package() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import tools, tools.base, tools.approvals, tools.store.builder, tools.store.service, tools.store.sources\n"
        "from tools import LocalToolRegistry\n"
        "from tools.approvals import ApprovalPolicy\n"
        "from tools.store import ToolConfig, manual_for\n"
        "registry = LocalToolRegistry(policy=ApprovalPolicy('high'))\n"
        "registry.register(lambda a=1: a, name='f')\n"
        "registry.call_tool('f')\n"
        "manual_for(ToolConfig(id='x', adapter_type='cli', cli={'command': ['cat'], 'actions': {'d': {'args': []}}}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('tools.routing')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == "[]\n", done.stderr


def test_an_approval_covers_calls_up_to_the_risk_it_was_given_for(tmp_path: Any) -> None:
    from tools.approvals import ApprovalsStore

    store = ApprovalsStore(tmp_path / "approvals.json")
    registry = LocalToolRegistry(policy=ApprovalPolicy("medium", store))
    registry.register(_function("peek"), manual=ToolManual(name="peek", risk="moderate", mutating=False))
    version = registry.tool_version_hash("peek")
    assert version is not None
    store.approve("peek", version, risk="moderate")
    assert registry.call_tool("peek", target="x").ok
    raised = ToolRoutingConfig(manuals={"peek": ManualOverride(risk="dangerous")})
    view = registry.for_agent("someone", ToolRouter(config=raised))
    store.approve("peek", view.tool_version_hash("peek") or "", risk="moderate")  # the same version, a lower risk
    check = view.check_approval("peek", {"target": "x"})
    assert check is not None and check.needs_approval
    assert check.reason == "'peek' was approved for moderate calls only; a person must approve this dangerous call"
