"""OrchestratorService with approvals: the policy comes from settings.freedom, else the level
stored in the approvals file, else ``medium`` (one default everywhere); ask() may pause and
resume() continues; an unusable approvals file is a configuration error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator import OrchestratorService, ServiceConfigError, Settings
from tools import LocalToolRegistry
from tools.approvals import ApprovalsStore, Approve

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
REMEMBER = "Remember that my dentist is Dr. Lee."
WEB = "What is 12*(3+4)? Search the web for tooldeck approvals."


@pytest.fixture
def store(tmp_path: Path) -> ApprovalsStore:
    return ApprovalsStore(tmp_path / "config" / "approvals.json")


def _settings(tmp_path: Path, **values: object) -> Settings:
    return Settings.from_env({}, data_dir=str(tmp_path / "data"), context_url="http://127.0.0.1:9", **values)


def test_no_level_anywhere_means_medium(tmp_path: Path, store: ApprovalsStore) -> None:
    with OrchestratorService(_settings(tmp_path), approvals=store) as service:
        assert service.registry.policy is service.policy
        assert (service.policy.level.value, service.policy.level_source) == ("medium", "default")
        run = service.ask(WEB)
    assert run.status == "awaiting_approval"
    assert [r.tool for r in run.pending_approvals] == ["web"]  # moderate: held
    assert [r["name"] for r in run.tool_results] == ["math_solver"]  # safe: ran


def test_without_an_approvals_file_the_default_is_medium_too(tmp_path: Path) -> None:
    with OrchestratorService(_settings(tmp_path)) as service:
        assert service.policy.level.value == "medium"
        assert service.ask(WEB).status == "awaiting_approval"


def test_the_quickstart_answers_at_the_default_level(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    with OrchestratorService(_settings(tmp_path), approvals=ApprovalsStore.from_env(env)) as service:
        run = service.ask(QUESTION)
    assert run.status == "completed"
    assert run.answer == "12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee."
    assert ApprovalsStore.from_env(env).approvals() == {}  # nothing approved: the builtins are declared safe


def test_the_settings_level_pauses_and_resume_finishes(tmp_path: Path, store: ApprovalsStore) -> None:
    with OrchestratorService(_settings(tmp_path, freedom="low"), approvals=store) as service:
        paused = service.ask(REMEMBER)
        assert paused.status == "awaiting_approval"
        assert [r.tool for r in paused.pending_approvals] == ["store_knowledge"]
        call_id = paused.pending_approvals[0].call_id
        assert call_id is not None and paused.state is not None
        done = service.resume(json.loads(json.dumps(paused.state)), {call_id: Approve(remember=True)})
    assert done.answer == "Noted: your dentist is Dr. Lee."
    assert list(store.approvals()) == ["store_knowledge"]


def test_the_stored_level_applies_when_the_settings_have_none(tmp_path: Path, store: ApprovalsStore) -> None:
    store.set_freedom("high")
    with OrchestratorService(_settings(tmp_path), approvals=store) as service:
        assert service.policy.level.value == "high"
        assert service.ask(WEB).status == "completed"  # web is moderate
    with OrchestratorService(_settings(tmp_path, freedom="low"), approvals=store) as service:
        assert service.ask(QUESTION).status == "awaiting_approval"


def test_an_agent_view_follows_the_policy(tmp_path: Path, store: ApprovalsStore) -> None:
    with OrchestratorService(_settings(tmp_path, freedom="low", agent="main"), approvals=store) as service:
        assert service.tools is not service.registry
        assert service.tools.policy is service.policy
        assert service.ask(REMEMBER).status == "awaiting_approval"


def test_an_unusable_approvals_file_is_a_configuration_error(tmp_path: Path, store: ApprovalsStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{not json")
    with pytest.raises(ServiceConfigError, match=r"approvals file .*is not valid JSON"):
        OrchestratorService(_settings(tmp_path), approvals=store)


@pytest.mark.parametrize("freedom", [None, "low"])
def test_a_registry_without_a_policy_is_refused(tmp_path: Path, store: ApprovalsStore, freedom: str | None) -> None:
    with pytest.raises(ServiceConfigError, match=r"applies the freedom level .* built without a policy"):
        OrchestratorService(_settings(tmp_path, freedom=freedom), approvals=store, registry=LocalToolRegistry())


def test_from_env_reads_the_users_approvals_file(tmp_path: Path) -> None:
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "HOME": str(tmp_path / "home"),
    }
    ApprovalsStore.from_env(env).set_freedom("low")
    with OrchestratorService.from_env(env) as service:
        assert service.policy.level.value == "low"
        paused = service.ask(REMEMBER)
        assert paused.state is not None
    with OrchestratorService.from_env({**env, "TOOLDECK_FREEDOM": "high"}) as service:
        assert service.policy.level.value == "high"
        call_id = paused.pending_approvals[0].call_id
        assert call_id is not None
        done = service.resume(paused.state, {call_id: Approve()})  # another service: the user's state key
    assert done.answer == "Noted: your dentist is Dr. Lee."
    assert (tmp_path / "xdg" / "tooldeck" / "state.key").stat().st_mode & 0o777 == 0o600
