"""ExecutionService given an ApprovalPolicy, against a real HTTP API: each freedom level
against safe / moderate / dangerous adopted tools, re-approval after an adopted tool's
config is edited, the approver callback, and readiness notes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.store.conftest import WeatherAPI
from tools.approvals import ApprovalPolicy, ApprovalRequest, ApprovalsStore, Approve, Deny, FreedomLevel
from tools.store import ExecutionService, RegistryService, RegistryStore, ToolNotAdoptedError

from .conftest import RISKS, SECRET, weather_tool

RUNS_FREELY = {"low": set(), "medium": {"safe"}, "high": {"safe", "moderate"}}


@pytest.fixture
def service(tmp_path: Path, weather_api: WeatherAPI) -> Iterator[RegistryService]:
    env = {"WEATHER_KEY": SECRET, "HOME": str(tmp_path)}
    svc = RegistryService(
        RegistryStore(tmp_path / "user.json", tmp_path / "project" / ".tooldeck" / "registry.json"),
        env=env,
        approvals=ApprovalsStore(tmp_path / "approvals.json"),
    )
    for risk in RISKS:
        svc.adopt(weather_tool(weather_api.url, risk))
    yield svc
    svc.close()


@pytest.mark.parametrize("level", list(FreedomLevel), ids=[level.value for level in FreedomLevel])
def test_each_level_against_each_risk(
    service: RegistryService, weather_api: WeatherAPI, tmp_path: Path, level: FreedomLevel
) -> None:
    execution = ExecutionService(service, policy=ApprovalPolicy(level, ApprovalsStore(tmp_path / "approvals.json")))
    for risk in RISKS:
        result = execution.execute(f"{risk}_weather", params={"city": risk})
        if risk in RUNS_FREELY[level.value]:
            assert result.ok, result.error
        else:
            assert result.error is not None
            assert result.error.type == "permission_denied"
            assert result.error.details is not None
            assert result.error.details["approve_command"] == f"tooldeck approve {risk}_weather"
            assert "Only a person can approve it (with `tooldeck approve" in result.error.message
    assert sorted(r["query"]["city"] for r in weather_api.requests) == sorted(RUNS_FREELY[level.value])


def test_an_edited_adopted_tool_must_be_approved_again(
    service: RegistryService, weather_api: WeatherAPI, tmp_path: Path
) -> None:
    approvals = ApprovalsStore(tmp_path / "approvals.json")
    execution = ExecutionService(service, policy=ApprovalPolicy("low", approvals))
    config = service.get("moderate_weather")
    approvals.approve("moderate_weather", config.compute_version_hash(), risk="moderate")
    assert service.is_approved("moderate_weather")
    assert execution.execute("moderate_weather", params={"city": "Lisbon"}).ok
    registry_file = service.store.project_path
    doc = json.loads(registry_file.read_text())
    doc["tools"]["moderate_weather"]["http"]["endpoints"]["current"]["query"] = ["city", "units"]
    registry_file.write_text(json.dumps(doc))  # someone edits the adopted tool's settings
    assert service.store.project_trust().status == "changed"  # not used until the edit is reviewed
    with pytest.raises(ToolNotAdoptedError, match="changed since you trusted it"):
        service.get("moderate_weather")
    service.store.trust_project()  # the user reviews the edit and trusts the file again
    assert service.needs_reapproval("moderate_weather")
    assert not service.is_approved("moderate_weather")
    result = execution.execute("moderate_weather", params={"city": "Porto"})
    assert result.error is not None
    assert "was approved for an earlier version; its configuration or schema changed since" in result.error.message
    assert [r["query"]["city"] for r in weather_api.requests] == ["Lisbon"]
    ready = execution.check_ready("moderate_weather")
    assert any("needs a person's approval before it runs" in note for note in ready.notes)


def test_the_approver_is_asked_and_runs_exactly_the_approved_arguments(
    service: RegistryService, weather_api: WeatherAPI, tmp_path: Path
) -> None:
    asked: list[ApprovalRequest] = []
    answers: list[Approve | Deny] = [Approve(arguments={"city": "Faro"}), Deny("not now"), Approve(remember=True)]

    def approver(request: ApprovalRequest) -> Approve | Deny:
        asked.append(request)
        return answers.pop(0)

    approvals = ApprovalsStore(tmp_path / "approvals.json")
    execution = ExecutionService(service, policy=ApprovalPolicy("medium", approvals), approver=approver)
    assert execution.execute("dangerous_weather", params={"city": "Lisbon"}).data["city"] == "Faro"
    denied = execution.execute("dangerous_weather", params={"city": "Lisbon"})
    assert denied.error is not None
    assert "was not approved: not now" in denied.error.message
    assert execution.execute("dangerous_weather", params={"city": "Evora"}).ok
    assert execution.execute("dangerous_weather", params={"city": "Braga"}).ok  # remembered
    assert len(asked) == 3
    assert asked[0].arguments == {"city": "Lisbon"}
    assert asked[0].risk == "dangerous"
    assert [r["query"]["city"] for r in weather_api.requests] == ["Faro", "Evora", "Braga"]
    assert service.is_approved("dangerous_weather")


def test_an_approved_call_runs_despite_the_policy(
    service: RegistryService, weather_api: WeatherAPI, tmp_path: Path
) -> None:
    policy = ApprovalPolicy("low", ApprovalsStore(tmp_path / "approvals.json"))
    execution = ExecutionService(service, policy=policy)
    refused = execution.execute("safe_weather", params={"city": "Lisbon"})
    assert refused.error is not None
    details = refused.error.details or {}
    config = service.get("safe_weather")
    request = policy.check(service.builder.build(config), version_hash=config.compute_version_hash()).request(
        {"city": "Lisbon"}
    )
    assert request.arguments_hash == details["arguments_hash"]
    approved = policy.apply(request, Approve())
    assert execution.execute("safe_weather", params=approved.arguments, approved=approved).ok
    other = execution.execute("safe_weather", params={"city": "Porto"}, approved=approved)
    assert other.error is not None
    assert other.error.type == "permission_denied"
    assert [r["query"]["city"] for r in weather_api.requests] == ["Lisbon"]
