"""CLIAdapter with real child processes: outputs, exit codes, redaction, timeouts, injection."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry, ToolDefinitionError
from tools.external import CLIAdapter, CLIConfig, ExternalTool, ToolConfig

SECRET = "hunter2-VERY-secret"

TOOL_SCRIPT = r"""
import json, os, sys, time, subprocess
cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "echo":
    print(json.dumps({"argv": args, "mode": os.environ.get("EXTRA")}))
elif cmd == "lines":
    print("one\n\ntwo\nthree")
elif cmd == "fail":
    sys.stderr.write("cannot open: token=" + os.environ.get("API_TOKEN", "") + "\n")
    sys.exit(3)
elif cmd == "leak":
    print("the token is " + os.environ["API_TOKEN"])
elif cmd == "hang":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", args[0]])
    time.sleep(60)
elif cmd == "flood":
    while True:
        sys.stdout.write("x" * 65536)
elif cmd == "garbage":
    print("{not json")
"""


@pytest.fixture
def cli_tool(make_script: Any) -> ToolConfig:
    script = make_script("fake_cli.py", TOOL_SCRIPT)
    return ToolConfig.model_validate(
        {
            "id": "fake",
            "name": "fake",
            "adapter_type": "cli",
            "config": {
                "command": [str(script)],
                "timeout": 10,
                "env": {"EXTRA": "on"},
                "secret_env": ["API_TOKEN"],
                "max_output_bytes": 100_000,
                "actions": {
                    "echo": {"args": ["echo", ["-n", "{count}"], "{name}"], "output": "json"},
                    "rm": {"args": ["echo", "--", "{*paths}"], "output": "json"},
                    "lines": {"args": ["lines"], "output": "lines"},
                    "fail": {"args": ["fail"]},
                    "leak": {"args": ["leak"]},
                    "hang": {"args": ["hang", "{marker}"]},
                    "flood": {"args": ["flood"]},
                    "garbage": {"args": ["garbage"], "output": "json"},
                },
            },
        }
    )


@pytest.fixture
def adapter(cli_tool: ToolConfig) -> Any:
    env = {"PATH": os.environ.get("PATH", ""), "API_TOKEN": SECRET}
    made = CLIAdapter([cli_tool], env=env)
    yield made
    made.close()


def test_json_output_with_env(adapter: CLIAdapter) -> None:
    result = adapter.execute("fake", "echo", {"name": "a b; rm -rf /", "count": 2})
    assert result.ok, result
    assert result.data == {"argv": ["-n", "2", "a b; rm -rf /"], "mode": "on"}
    assert result.metadata["exit_code"] == 0


def test_lines_output(adapter: CLIAdapter) -> None:
    assert adapter.execute("fake", "lines", {}).data == ["one", "two", "three"]


def test_option_injection_never_reaches_the_program(adapter: CLIAdapter) -> None:
    result = adapter.execute("fake", "echo", {"name": "--config=/etc/passwd"})
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert "must not start with '-'" in result.error.message
    after = adapter.execute("fake", "rm", {"paths": ["-rf", "x"]})
    assert after.data == {"argv": ["--", "-rf", "x"], "mode": "on"}


def test_nonzero_exit_reports_redacted_stderr(adapter: CLIAdapter) -> None:
    result = adapter.execute("fake", "fail", {})
    assert result.error is not None
    assert result.error.type == "execution_error"
    assert "exit status 3" in result.error.message
    assert "cannot open: token=***" in result.error.message
    assert SECRET not in json.dumps(result.to_dict())


def test_secret_in_stdout_is_redacted(adapter: CLIAdapter) -> None:
    assert adapter.execute("fake", "leak", {}).data == "the token is ***"


def test_timeout_kills_the_process_group(adapter: CLIAdapter, live_pids: Any) -> None:
    marker = f"grandchild-{uuid.uuid4().hex}"
    result = adapter.execute("fake", "hang", {"marker": marker}, timeout=0.5)
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == ("timeout", True)
    assert live_pids(marker) == []


def test_output_cap_kills_the_process(adapter: CLIAdapter) -> None:
    result = adapter.execute("fake", "flood", {})
    assert result.error is not None
    assert "more than 100000 bytes" in result.error.message


def test_garbage_json(adapter: CLIAdapter) -> None:
    result = adapter.execute("fake", "garbage", {})
    assert result.error is not None
    assert "not valid JSON" in result.error.message


def test_allow_list(cli_tool: ToolConfig) -> None:
    with pytest.raises(ToolDefinitionError, match="allowed_commands"):
        CLIAdapter([cli_tool], allowed_commands={"git"})
    allowed = CLIAdapter([cli_tool], allowed_commands={"fake_cli.py"}, env={"PATH": ""})
    assert allowed.is_available(cli_tool)
    assert allowed.execute("fake", "lines", {}).ok


def test_missing_program(tmp_path: Path) -> None:
    config = ToolConfig.model_validate(
        {
            "id": "gone",
            "name": "gone",
            "adapter_type": "cli",
            "config": {"command": ["definitely-not-a-program-xyz"], "actions": {"run": {}}},
        }
    )
    adapter = CLIAdapter([config], env={"PATH": str(tmp_path)})
    assert not adapter.is_available(config)
    result = adapter.execute("gone", None, {})
    assert result.error is not None
    assert "not installed" in result.error.message


def test_build_command_for_inspection(adapter: CLIAdapter, cli_tool: ToolConfig) -> None:
    argv = adapter.build_command("fake", "echo", {"name": "x"})
    assert isinstance(cli_tool.config, CLIConfig)
    assert argv == [cli_tool.config.command[0], "echo", "x"]


def test_through_the_registry(adapter: CLIAdapter, cli_tool: ToolConfig) -> None:
    registry = LocalToolRegistry()
    registry.register(ExternalTool(cli_tool, adapter=adapter, action="echo", name="fake_echo"))
    assert registry("fake_echo", name="hi")["data"]["argv"] == ["hi"]
    bad = registry("fake_echo", name="-x")
    assert bad["error_type"] == "validation_error"


def test_python_module_as_program() -> None:
    config = ToolConfig.model_validate(
        {
            "id": "py",
            "name": "py",
            "adapter_type": "cli",
            "config": {
                "command": [sys.executable, "-c", "import sys; print(sys.argv[1:])"],
                "actions": {"run": {"args": ["{x}"]}},
            },
        }
    )
    assert CLIAdapter([config]).execute("py", None, {"x": "1"}).data == "['1']"
