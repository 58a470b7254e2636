"""CLIAdapter: children get a minimal environment, never the whole parent's (real ``env``)."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest

from tools.external import CLIAdapter, ToolConfig

pytestmark = pytest.mark.skipif(shutil.which("env") is None or shutil.which("echo") is None, reason="coreutils")

OPENAI_KEY = "sk-proj-Abc123Def456Ghi789Jkl012"
DECLARED_SECRET = "declared-secret-value-42"
PARENT_SECRETS = {
    "OPENAI_API_KEY": OPENAI_KEY,
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GITHUB_TOKEN": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    "DB_PASSWORD": "correct-horse-battery",
    "DATABASE_URL": "postgres://app:s3cr3t-pw@db.internal:5432/app",
}


@pytest.fixture
def parent(monkeypatch: pytest.MonkeyPatch) -> os._Environ[str]:
    """The real ``os.environ`` of the entry point, with API keys and other secrets set."""
    for name in list(os.environ):
        if name.startswith("LC_") or name == "LANGUAGE":
            monkeypatch.delenv(name)
    for name, value in {
        **PARENT_SECRETS,
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "TZ": "UTC",
        "HOME": "/home/tester",
        "UNRELATED_SETTING": "visible-only-if-passed",
        "TOOL_TOKEN": DECLARED_SECRET,
    }.items():
        monkeypatch.setenv(name, value)
    return os.environ


def _config(args: list[str], **cli: Any) -> ToolConfig:
    program = os.path.basename(args[0])
    return ToolConfig.model_validate(
        {
            "id": program,
            "name": program,
            "adapter_type": "cli",
            "config": {"command": args, "actions": {"run": {"args": ["{*rest}"], "output": "lines"}}, **cli},
        }
    )


def _child_env(adapter: CLIAdapter) -> dict[str, str]:
    result = adapter.execute("env", None, {})
    assert result.ok, result
    return dict(line.split("=", 1) for line in result.data)


def test_child_gets_base_declared_and_secret_variables_only(parent: os._Environ[str]) -> None:
    config = _config(["env"], env={"MODE": "fast"}, secret_env=["TOOL_TOKEN"])
    adapter = CLIAdapter([config], env=parent)  # as documented: os.environ at the entry point
    seen = _child_env(adapter)
    assert seen == {
        "PATH": os.environ["PATH"],
        "HOME": "/home/tester",
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "TZ": "UTC",
        "MODE": "fast",
        "TOOL_TOKEN": "***",  # the child has it; the output shows it masked
    }
    dumped = json.dumps(adapter.execute("env", None, {}).to_dict())
    for name, value in PARENT_SECRETS.items():
        assert name not in dumped
        assert value not in dumped
    assert "UNRELATED_SETTING" not in dumped
    assert DECLARED_SECRET not in dumped


def test_pass_env_adds_named_variables(parent: os._Environ[str]) -> None:
    adapter = CLIAdapter([_config(["env"])], env=parent, pass_env=["UNRELATED_SETTING", "MISSING_ONE"])
    seen = _child_env(adapter)
    assert seen["UNRELATED_SETTING"] == "visible-only-if-passed"
    assert "MISSING_ONE" not in seen
    assert "OPENAI_API_KEY" not in seen


def test_secret_looking_parent_values_are_redacted_from_output_anyway(parent: os._Environ[str]) -> None:
    # The child never gets OPENAI_API_KEY, but a value can reach its output other ways
    # (a config file, an argument): the parent's secret-looking values are masked.
    adapter = CLIAdapter([_config(["echo"])], env=parent)
    secrets = list(PARENT_SECRETS.values())
    result = adapter.execute("echo", None, {"rest": secrets})
    assert result.ok, result
    assert result.data == ["*** *** *** *** ***"]


def test_declared_variables_are_passed_as_they_are(parent: os._Environ[str]) -> None:
    adapter = CLIAdapter([_config(["env"], env={"GREETING": "hello there"})], env=parent)
    assert _child_env(adapter)["GREETING"] == "hello there"


def test_without_a_parent_environment_the_child_gets_only_declared_variables() -> None:
    adapter = CLIAdapter([_config([shutil.which("env") or "env"], env={"ONLY": "this"})])
    seen = _child_env(adapter)
    assert seen == {"ONLY": "this"}
