"""The Settings page's data: the same files and models as the command line, saved whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator import Settings
from orchestrator.stored_settings import SettingsFile
from orchestrator.ui.settings import SettingsSources
from tools import LocalToolRegistry
from tools.approvals import ApprovalsStore, FreedomLevel
from tools.manual import ToolManual
from tools.routing import ToolRoutingConfig


def lookup(query: str) -> str:
    """Look something up."""
    return query


@pytest.fixture
def manuals() -> list[ToolManual]:
    registry = LocalToolRegistry()
    registry.register(lookup)
    return registry.manuals()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}


@pytest.fixture
def sources(env: dict[str, str]) -> SettingsSources:
    return SettingsSources(
        file=SettingsFile.from_env(env), approvals=ApprovalsStore.from_env(env), env=env, config_dir=None
    )


def _sent(**fields: str) -> dict[str, str]:
    return {"freedom": "", "iterations": "", "routing": "", **fields}


def test_saving_writes_the_files_the_command_line_reads(
    sources: SettingsSources, env: dict[str, str], manuals: list[ToolManual]
) -> None:
    routing = json.dumps({"global_deny": ["lookup"], "profiles": {"coder": {"add_categories": ["web"]}}})
    shown = sources.save(_sent(freedom="high", iterations="6", routing=routing), manuals)
    assert shown.errors == {}
    assert ApprovalsStore.from_env(env).freedom() is FreedomLevel.HIGH
    settings = Settings.from_env(env)
    assert settings.max_subagent_iterations == 6
    assert settings.routing_config == Path(env["XDG_CONFIG_HOME"]) / "tooldeck" / "routing.json"
    assert settings.routing_config is not None
    assert ToolRoutingConfig.from_file(settings.routing_config).global_deny == ("lookup",)
    again = sources.form()
    assert (again.freedom, again.iterations) == ("high", "6")
    assert json.loads(again.routing)["global_deny"] == ["lookup"]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("freedom", "reckless", "is not a freedom level; use one of: low"),
        ("iterations", "11", "less than or equal to 10; expected model turns per sub-agent"),
        ("iterations", "three", "valid integer"),
        ("routing", '{"profiles": {"coder": {"add_categories": ["telepathy"]}}}', "is not a category"),
        ("routing", '{"profiles": {"coder": {"add_tools": ["lookpu"]}}}', "not registered"),
        ("routing", "{not json", "invalid JSON"),
    ],
)
def test_a_wrong_field_is_named_beside_itself_and_nothing_is_saved(
    sources: SettingsSources, env: dict[str, str], manuals: list[ToolManual], field: str, value: str, expected: str
) -> None:
    good = {"freedom": "low", "iterations": "4"}
    shown = sources.save(_sent(**{**good, field: value}), manuals)
    assert list(shown.errors) == [field]
    assert expected in shown.errors[field]
    assert getattr(shown, field) == value  # what was sent stays in the form
    assert ApprovalsStore.from_env(env).freedom() is None
    assert not SettingsFile.from_env(env).path.exists()


def test_a_toml_routing_file_in_force_is_edited_as_toml(
    tmp_path: Path, env: dict[str, str], manuals: list[ToolManual]
) -> None:
    path = tmp_path / "routing.toml"
    path.write_text('global_deny = ["lookup"]\n')
    env = {**env, "TOOLDECK_ROUTING_CONFIG": str(path)}
    sources = SettingsSources(file=SettingsFile.from_env(env), approvals=ApprovalsStore.from_env(env), env=env)
    form = sources.form()
    assert form.routing == 'global_deny = ["lookup"]\n'
    assert "environment variable TOOLDECK_ROUTING_CONFIG" in form.notes["routing"]
    shown = sources.save(_sent(routing='global_deny = []\n[profiles.coder]\nremove_categories = ["web"]\n'), manuals)
    assert shown.errors == {}
    assert ToolRoutingConfig.from_file(path).override_for("coder").remove_categories[0].value == "web"
    assert SettingsFile.from_env(env).load().routing_config is None  # the variable names it: nothing stored


def test_environment_overrides_are_said_beside_their_fields(env: dict[str, str]) -> None:
    env = {**env, "TOOLDECK_FREEDOM": "low", "TOOLDECK_MAX_SUBAGENT_ITERATIONS": "2"}
    sources = SettingsSources(file=SettingsFile.from_env(env), approvals=ApprovalsStore.from_env(env), env=env)
    notes = sources.form().notes
    assert "TOOLDECK_FREEDOM=low overrides" in notes["freedom"]
    assert "TOOLDECK_MAX_SUBAGENT_ITERATIONS overrides" in notes["iterations"]


def test_an_unusable_approvals_file_is_shown_not_replaced(
    sources: SettingsSources, env: dict[str, str], manuals: list[ToolManual]
) -> None:
    path = ApprovalsStore.from_env(env).path
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    assert "is not valid JSON" in sources.form().errors["freedom"]
    shown = sources.save(_sent(freedom="high"), manuals)
    assert "not saved" in shown.errors["form"]
    assert path.read_text() == "{broken"


def _project_file(root: Path, command: list[str]) -> Path:
    path = root / "project" / ".tooldeck" / "registry.json"
    path.parent.mkdir(parents=True)
    entry = {"id": "git_log", "adapter_type": "cli", "cli": {"command": command, "actions": {"default": {}}}}
    path.write_text(json.dumps({"version": 1, "tools": {"git_log": entry}}))
    return path


def test_the_project_file_is_trusted_as_shown_and_revoked(tmp_path: Path, env: dict[str, str]) -> None:
    from tools.store import RegistryStore

    path = _project_file(tmp_path, ["git", "log"])
    store = RegistryStore.from_env(env, project_dir=tmp_path / "project")
    sources = SettingsSources(file=SettingsFile.from_env(env), approvals=ApprovalsStore.from_env(env), env=env,
                              registry_files=store)  # fmt: skip
    entries, project, problem = sources.trusted_files()
    assert (entries, problem) == ([], None)
    assert project is not None
    assert (project.status, project.tools) == ("untrusted", [("git_log", "cli", "runs git log")])
    assert store.load_project().tools == {}  # not used until trusted
    shown = project.sha256
    assert shown is not None
    path.write_text(path.read_text().replace('"log"', '"push"'))  # changed after it was shown
    assert "changed since it was shown" in (sources.trust_project(shown) or "")
    assert store.load_project().tools == {}
    _, project, _ = sources.trusted_files()
    assert project is not None
    assert project.sha256 is not None
    assert sources.trust_project(project.sha256) is None
    assert list(store.load_project().tools) == ["git_log"]
    entries, _, _ = sources.trusted_files()
    assert [(e.path, e.status) for e in entries] == [(str(path.resolve()), "trusted")]
    assert sources.revoke_trust(entries[0].path) is None
    assert store.load_project().tools == {}
    assert "was not trusted" in (sources.revoke_trust(entries[0].path) or "")
