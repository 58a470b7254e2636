"""The user's settings.json: validated like the environment, under the environment and flags."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orchestrator import Settings, SettingsError
from orchestrator.stored_settings import SettingsFile, SettingsFileError, StoredSettings


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home"), **more}


def test_a_stored_setting_applies_under_the_environment_and_flags(tmp_path: Path) -> None:
    env = _env(tmp_path)
    file = SettingsFile.from_env(env)
    assert file.path == tmp_path / "config" / "tooldeck" / "settings.json"
    file.store(max_subagent_iterations=7, routing_config=str(tmp_path / "routing.toml"))
    assert Settings.from_env(env).max_subagent_iterations == 7
    assert Settings.from_env(env).routing_config == tmp_path / "routing.toml"
    assert Settings.from_env({**env, "TOOLDECK_MAX_SUBAGENT_ITERATIONS": "2"}).max_subagent_iterations == 2
    assert Settings.from_env(env, max_subagent_iterations=4).max_subagent_iterations == 4
    assert os.stat(file.path).st_mode & 0o777 == 0o600


def test_storing_validates_with_the_settings_field_and_writes_nothing_when_wrong(tmp_path: Path) -> None:
    file = SettingsFile(tmp_path / "settings.json")
    with pytest.raises(SettingsError, match=r"max_subagent_iterations.*from 1 to 10"):
        file.store(max_subagent_iterations=11)
    assert not file.path.exists()
    with pytest.raises(TypeError, match="not stored settings: api_key"):
        file.store(api_key="sk-nope")


def test_none_removes_a_stored_setting(tmp_path: Path) -> None:
    file = SettingsFile(tmp_path / "settings.json")
    file.store(max_subagent_iterations=5)
    assert file.store(max_subagent_iterations=None) == StoredSettings()
    assert json.loads(file.path.read_text()) == {"version": 1}


def test_an_edited_file_out_of_range_is_named_with_the_setting(tmp_path: Path) -> None:
    env = _env(tmp_path)
    path = SettingsFile.from_env(env).path
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "max_subagent_iterations": 40}\n')
    with pytest.raises(SettingsFileError, match=r"settings\.json:1: max_subagent_iterations"):
        Settings.from_env(env)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):  # entry points catch ValueError
        Settings.from_env(env)


def test_an_environment_without_a_home_reads_no_user_file(tmp_path: Path) -> None:
    assert Settings.from_env({}).max_subagent_iterations == 3
