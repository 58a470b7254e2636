"""module_pipeline through the registry, as the model calls it: build, write_code, validate,
install (and its attestation rules), uninstall, repair."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.unit.tools.builtin.modules.support import (
    RUNS_ADAPTER,
    PassingRunner,
    attestation_of,
    make_toolkit,
    registry_for,
    runs_test,
)
from tools import LocalToolRegistry
from tools.builtin.modules import ModuleToolkit

BASE = "http://127.0.0.1:8000/api/runs"


def build(registry: LocalToolRegistry, **changes: Any) -> Any:
    arguments = {"action": "build", "name": "Run Log", "category": "fitness", "api_url": BASE} | changes
    return registry.call_tool("module_pipeline", **arguments)


def write_runs(registry: LocalToolRegistry, module_id: str = "run_log") -> None:
    assert registry.call_tool("module_pipeline", action="write_code", module_id=module_id, adapter_code=RUNS_ADAPTER).ok


def test_build_scaffolds_a_module_from_the_template(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    result = build(registry, description="My runs", requires_api_key=True, auth_type="bearer")
    assert result.ok, result.error
    data = result.data
    assert data["module_id"] == "run_log"
    assert data["files"] == ["adapter.py", "manifest.json", "test_adapter.py"]
    assert data["manifest"] == {
        "id": "run_log",
        "name": "Run Log",
        "description": "My runs",
        "category": "fitness",
        "auth_type": "bearer",
        "required_credentials": ["token"],
        "api_url": BASE,
        "version": "0.1.0",
        "adapter_class": "Adapter",
    }
    assert 'headers["Authorization"] = "Bearer " + credentials["token"]' in data["adapter_code"]
    assert sorted(kit.store.files("run_log")) == data["files"]


def test_requires_api_key_false_means_no_authentication(registry: LocalToolRegistry) -> None:
    result = build(registry, requires_api_key=False)
    assert result.data["manifest"]["auth_type"] == "none"
    assert result.data["manifest"]["required_credentials"] == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"category": "astrology"}, "category"),
        ({"name": "!!!"}, "cannot make a module id"),
        ({"api_url": "ftp://example.com"}, "api_url must be an http:// or https:// URL"),
        ({"api_url": "https://user:pw@example.com/"}, "must not carry a user name or password"),
        ({"auth_type": "none"}, "requires_api_key=true needs auth_type"),
        ({"name": "x" * 81}, "name"),
        ({"module_id": "runs"}, "not an argument of action 'build'"),
    ],
)
def test_bad_build_arguments_are_validation_errors(
    registry: LocalToolRegistry, changes: dict[str, Any], expected: str
) -> None:
    result = build(registry, **changes)
    assert result.error is not None and result.error.type == "validation_error"
    assert expected in result.error.message


def test_a_name_taken_by_a_builtin_platform_or_module_gets_another_id(registry: LocalToolRegistry) -> None:
    assert build(registry, name="CSV", category="finance").data["module_id"] == "csv_module"
    assert build(registry).ok
    again = build(registry)
    assert again.error is not None and "exists already" in again.error.message


def test_unknown_action_lists_every_action(registry: LocalToolRegistry) -> None:
    result = registry.call_tool("module_pipeline", action="deploy")
    assert result.error is not None and result.error.type == "unknown_action"
    for action in ("build", "write_code", "repair", "validate", "install", "uninstall"):
        assert f"- {action}:" in result.error.message


def test_write_code_reports_syntax_errors_early(registry: LocalToolRegistry) -> None:
    build(registry)
    result = registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code="def f(:\n")
    assert result.data == {
        "module_id": "run_log",
        "written": "adapter.py",
        "characters": 8,
        "syntax_error": "line 1: invalid syntax",
        "next": "Fix the syntax error, then validate.",
    }
    missing = registry.call_tool("module_pipeline", action="write_code", module_id="nope", adapter_code="x = 1")
    assert missing.error is not None and "There is no module 'nope'. Known modules: run_log." in missing.error.message
    hostile = registry.call_tool("module_pipeline", action="write_code", module_id="../etc", adapter_code="x")
    assert hostile.error is not None and "is not a module id" in hostile.error.message


def test_validate_fails_with_findings_then_passes_with_an_attestation(
    registry: LocalToolRegistry, runner: PassingRunner
) -> None:
    build(registry, requires_api_key=False)
    registry.call_tool(
        "module_pipeline", action="write_code", module_id="run_log", adapter_code="import os\n" + RUNS_ADAPTER
    )
    failed = registry.call_tool("module_pipeline", action="validate", module_id="run_log")
    assert failed.ok
    assert failed.data["passed"] is False
    assert failed.data["attestation"] is None
    assert [(f["stage"], f["file"], f["line"], f["rule"]) for f in failed.data["findings"]] == [
        ("static", "adapter.py", 1, "forbidden-import")
    ]
    assert failed.data["tests_note"] == "tests not run: fix the findings above first"
    assert runner.calls == []  # the sandbox is not bothered with code that fails the scan

    write_runs(registry)
    passed = registry.call_tool("module_pipeline", action="validate", module_id="run_log")
    attestation = attestation_of(passed)
    assert set(attestation) == {"module_id", "target", "files_hash", "issued_at", "signature"}
    assert (attestation["module_id"], attestation["target"]) == ("run_log", "module")
    assert passed.data["tests_run"] == 3
    assert len(runner.calls) == 1


def _installable(registry: LocalToolRegistry) -> dict[str, Any]:
    build(registry, requires_api_key=False)
    write_runs(registry)
    registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code=RUNS_ADAPTER)
    return attestation_of(registry.call_tool("module_pipeline", action="validate", module_id="run_log"))


def test_install_with_the_attestation(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    attestation = _installable(registry)
    result = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=attestation
    )
    assert result.data == {
        "module_id": "run_log",
        "version_id": "v1",
        "new_version": True,
        "enabled": False,
        "next": "Enable it with module_admin(action='enable', module_id='run_log').",
    }
    assert kit.versions.files("run_log", "v1") == kit.store.files("run_log")
    again = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=attestation
    )
    assert (again.data["version_id"], again.data["new_version"]) == ("v1", False)


def test_install_refuses_a_forged_attestation(registry: LocalToolRegistry) -> None:
    attestation = _installable(registry)
    forged = attestation | {"signature": "0" * 64}
    result = registry.call_tool("module_pipeline", action="install", module_id="run_log", validation_attestation=forged)
    assert result.error is not None and result.error.type == "permission_denied"
    assert "signature is not valid" in result.error.message
    made_up = {k: attestation[k] for k in ("module_id", "target", "files_hash", "issued_at")}
    missing = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=made_up
    )
    assert missing.error is not None and missing.error.type == "validation_error"
    assert "validation_attestation.signature" in missing.error.message


def test_any_change_after_validation_invalidates_the_attestation(registry: LocalToolRegistry) -> None:
    attestation = _installable(registry)
    registry.call_tool(
        "module_pipeline", action="write_code", module_id="run_log", adapter_code=RUNS_ADAPTER + "\n# changed\n"
    )
    result = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=attestation
    )
    assert result.error is not None and result.error.type == "permission_denied"
    assert "changed after validation (the attestation is for other code)" in result.error.message


def test_an_attestation_for_other_code_is_refused(registry: LocalToolRegistry) -> None:
    attestation = _installable(registry)
    build(registry, name="Other", requires_api_key=False)
    write_runs(registry, "other")
    result = registry.call_tool(
        "module_pipeline", action="install", module_id="other", validation_attestation=attestation
    )
    assert result.error is not None and "is for 'run_log' (module), not for 'other' (module)" in result.error.message


def test_an_attestation_signed_with_another_installation_key_is_refused(
    registry: LocalToolRegistry, tmp_path: Any
) -> None:
    other = registry_for(make_toolkit(tmp_path / "elsewhere"))
    attestation = _installable(other)
    _installable(registry)
    result = registry.call_tool(
        "module_pipeline", action="install", module_id="run_log", validation_attestation=attestation
    )
    assert result.error is not None and "signature is not valid" in result.error.message


def test_uninstall_removes_versions_and_credentials_but_keeps_the_build_area(
    registry: LocalToolRegistry, kit: ModuleToolkit
) -> None:
    attestation = _installable(registry)
    registry.call_tool("module_pipeline", action="install", module_id="run_log", validation_attestation=attestation)
    registry.call_tool("module_admin", action="store_credentials", module_id="run_log", api_key="k-123456")
    registry.call_tool("module_admin", action="create_draft", module_id="run_log")
    result = registry.call_tool("module_pipeline", action="uninstall", module_id="run_log")
    assert result.data == {
        "module_id": "run_log",
        "uninstalled": True,
        "versions_removed": 1,
        "drafts_removed": 1,
        "credentials_removed": True,
        "build_area_kept": True,
    }
    assert kit.store.entry("run_log") is None
    again = registry.call_tool("module_pipeline", action="uninstall", module_id="run_log")
    assert again.error is not None and "is not installed" in again.error.message


class ScriptedGateway:
    """An LLM gateway that answers with a fixed text (or raises)."""

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.messages: list[Sequence[Mapping[str, Any]]] = []

    def chat(self, messages: Sequence[Mapping[str, Any]], *, tools: Any = None, tool_choice: Any = None) -> Any:
        self.messages.append(messages)
        if isinstance(self.answer, Exception):
            raise self.answer
        return _Reply(self.answer)


class _Reply:
    def __init__(self, content: str) -> None:
        self.content = content


def test_repair_asks_the_gateway_with_the_findings_and_writes_its_code(tmp_path: Any) -> None:
    gateway = ScriptedGateway(f"Here you go:\n```python\n{RUNS_ADAPTER}```\n")
    kit = make_toolkit(tmp_path, gateway=gateway)
    registry = registry_for(kit)
    build(registry, requires_api_key=False)
    no_report = registry.call_tool("module_pipeline", action="repair", module_id="run_log")
    assert no_report.error is not None and "validate(module_id='run_log') first" in no_report.error.message
    registry.call_tool(
        "module_pipeline", action="write_code", module_id="run_log", adapter_code="import subprocess\n" + RUNS_ADAPTER
    )
    registry.call_tool("module_pipeline", action="validate", module_id="run_log")
    result = registry.call_tool("module_pipeline", action="repair", module_id="run_log")
    assert result.ok, result.error
    assert (result.data["changed"], result.data["static_findings"]) == (True, [])
    prompt = gateway.messages[0][1]["content"]
    assert "- adapter.py:1 [static/forbidden-import] import of 'subprocess' is not allowed" in prompt
    assert kit.store.files("run_log")["adapter.py"].decode() == RUNS_ADAPTER
    assert registry.call_tool("module_pipeline", action="validate", module_id="run_log").data["passed"]
    nothing = registry.call_tool("module_pipeline", action="repair", module_id="run_log")
    assert nothing.error is not None and "nothing to repair" in nothing.error.message


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("I cannot help with that.", "held no valid Python code"),
        ("```python\nx = 1\n```", "held no adapter class"),
        (ConnectionError("down"), "could not propose a repair (ConnectionError)"),
    ],
)
def test_repair_refuses_useless_answers(tmp_path: Any, answer: str | Exception, expected: str) -> None:
    registry = registry_for(make_toolkit(tmp_path, gateway=ScriptedGateway(answer)))
    build(registry, requires_api_key=False)
    registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code="import os\n")
    registry.call_tool("module_pipeline", action="validate", module_id="run_log")
    result = registry.call_tool("module_pipeline", action="repair", module_id="run_log")
    assert result.error is not None and expected in result.error.message


def test_repair_without_a_gateway_says_so(registry: LocalToolRegistry) -> None:
    build(registry)
    result = registry.call_tool("module_pipeline", action="repair", module_id="run_log")
    assert result.error is not None and "needs an LLM gateway" in result.error.message


def test_the_exported_schema_is_flat_and_strict_exportable(registry: LocalToolRegistry) -> None:
    (tool,) = [t for t in registry.to_openai_tools(strict=True) if t["function"]["name"] == "module_pipeline"]
    function = tool["function"]
    assert function["strict"] is True
    properties = function["parameters"]["properties"]
    assert properties["action"]["enum"] == ["build", "write_code", "repair", "validate", "install", "uninstall"]
    assert set(properties) == {
        "action",
        "name",
        "category",
        "description",
        "requires_api_key",
        "api_url",
        "auth_type",
        "module_id",
        "adapter_code",
        "validation_attestation",
    }
    json.dumps(tool)


def test_oversized_code_is_refused_before_anything_is_written(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    build(registry)
    result = registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code="x" * 100_001)
    assert result.error is not None and result.error.type == "validation_error"
    assert "x" * 100 not in kit.store.files("run_log")["adapter.py"].decode()


def test_runs_test_helper_is_valid_python() -> None:
    compile(runs_test(BASE), "test_adapter.py", "exec")


def test_a_module_that_tries_to_read_the_credential_store_never_validates(
    registry: LocalToolRegistry, kit: ModuleToolkit, runner: PassingRunner
) -> None:
    build(registry, requires_api_key=True)
    registry.call_tool("module_admin", action="store_credentials", module_id="run_log", api_key="sk-stored-secret")
    token = kit.store.layout.credential_path("run_log")
    thief = RUNS_ADAPTER.replace(
        "    def transform(self, raw: Any) -> list[dict[str, Any]]:\n",
        f"    def transform(self, raw: Any) -> list[dict[str, Any]]:\n        stolen = open({str(token)!r}).read()\n",
    )
    registry.call_tool("module_pipeline", action="write_code", module_id="run_log", adapter_code=thief)
    report = registry.call_tool("module_pipeline", action="validate", module_id="run_log")
    assert report.data["passed"] is False
    line = thief.splitlines().index(f"        stolen = open({str(token)!r}).read()") + 1
    assert [(f["file"], f["line"], f["rule"]) for f in report.data["findings"]] == [
        ("adapter.py", line, "forbidden-call")
    ]
    assert runner.calls == []
    assert "sk-stored-secret" not in json.dumps(report.to_dict())
