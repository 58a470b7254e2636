"""Issue 21, "done when": from an empty directory a user writes ``mytools.py``, runs ``python -m
orchestrator --registry mytools:build --model test "try my tools"``, sees every tool called, then
``tooldeck runs show`` of that run. Real subprocesses, a private HOME and data directory.

Also: paused runs listed and resumed by id, ``--no-record``, secrets kept out of records,
terminal-safe output, and the refusal of an agent type left with no tools.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

MYTOOLS = textwrap.dedent(
    '''
    """My first tools."""
    from tools import LocalToolRegistry, ToolCategory, ToolManual

    # Pure functions that change nothing: declared safe, so no approval is needed to run them.
    SAFE = {"risk": "safe", "mutating": False, "category": ToolCategory.COMPUTE}


    def build() -> LocalToolRegistry:
        registry = LocalToolRegistry()

        @registry.tool(manual=ToolManual(name="add", **SAFE))
        def add(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: The first number.
                b: The second number.
            """
            return a + b

        @registry.tool(manual=ToolManual(name="greet", **SAFE))
        def greet(name: str, excited: bool = False) -> str:
            """Greet someone by name.

            Args:
                name: Who to greet.
                excited: Add an exclamation mark.
            """
            return f"Hello, {name}" + ("!" if excited else ".")

        @registry.tool(manual=ToolManual(name="banner", **SAFE))
        def banner() -> str:
            """A banner with terminal control sequences in it."""
            return "\\x1b]52;c;aGk=\\x07BANNER\\x1b[2J"

        return registry
    '''
)
KEY = "sk-e2e-" + "K" * 40


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "empty-project"
    folder.mkdir()
    (folder / "mytools.py").write_text(MYTOOLS)
    return folder


def private_env(tmp_path: Path) -> dict[str, str]:
    """This environment without tooldeck's settings, with a private HOME and data directory."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLDECK_", "XDG_", "OPENAI_"))}
    return {
        **keep,
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "XDG_DATA_HOME": str(tmp_path / "home" / ".local" / "share"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
    }


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**private_env(tmp_path), "OPENAI_API_KEY": KEY}


def sh(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def orchestrator(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return sh(cwd, env, "-m", "orchestrator", *args)


def tooldeck(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return sh(cwd, env, "-m", "tools.cli", *args)


def recorded_id(stdout: str) -> str:
    match = re.search(r"^run (run_[0-9a-f]{32}) recorded: tooldeck runs show \1$", stdout, re.MULTILINE)
    assert match, stdout
    return match.group(1)


def test_write_a_tool_try_it_with_the_test_model_then_see_the_run_again(project: Path, env: dict[str, str]) -> None:
    tried = orchestrator(project, env, "--registry", "mytools:build", "--model", "test", "try my tools")
    assert tried.returncode == 0, tried.stderr
    assert tried.stderr == ""  # no terminal: no progress display, and the library prints nothing
    answer = tried.stdout.split("\n\ntrace:")[0]
    assert answer.splitlines() == [
        "I called 3 tool(s):",
        '- add({"a": 1, "b": 1}) -> success: 2',
        '- greet({"name": "name-example"}) -> success: Hello, name-example.',
        "- banner({}) -> success: \\x1b]52;c;aGk=\\x07BANNER\\x1b[2J",  # shown, never run by the terminal
    ]
    assert "\x1b" not in tried.stdout + tried.stderr and "\x07" not in tried.stdout
    trace = tried.stdout.split("\n\ntrace:")[1]
    assert "TestModel (calls every tool once, then summarises); 2 model turn(s), 3 tool call(s)" in trace
    assert re.search(r'1\. add \{"a": 1, "b": 1\} -> success', trace)
    run_id = recorded_id(tried.stdout)

    shown = tooldeck(project, env, "runs", "show", run_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"run {run_id} (main agent): answered"
    assert lines[1] == "model: TestModel (calls every tool once, then summarises)"
    assert "question: try my tools" in lines
    assert lines[lines.index("tool calls:") + 1].startswith('  1. add {"a": 1, "b": 1} -> success, ')
    assert lines[lines.index("answer:") + 1] == "  I called 3 tool(s):"
    assert "\x1b" not in shown.stdout

    latest = tooldeck(project, env, "runs", "show")  # no id: the latest run
    assert latest.stdout == shown.stdout
    by_prefix = tooldeck(project, env, "runs", "show", run_id[:12], "--json")
    record = json.loads(by_prefix.stdout)
    assert (record["id"], record["status"], record["turns"]) == (run_id, "answered", 2)
    assert [c["name"] for c in record["tool_calls"]] == ["add", "greet", "banner"]
    listed = tooldeck(project, env, "runs", "list")
    assert listed.stdout.startswith(f"{run_id}\tanswered\t")
    assert "try my tools" in listed.stdout


def test_a_paused_run_is_listed_and_resumed_by_its_id(project: Path, env: dict[str, str]) -> None:
    base = ["--registry", "mytools:build", "--model", "test"]
    paused = orchestrator(project, env, *base, "--freedom", "low", "--approve", "pause", "try my tools")
    assert paused.returncode == 5, paused.stderr
    run_id = recorded_id(paused.stdout)
    waiting = tooldeck(project, env, "runs", "list", "--status", "paused")
    assert waiting.stdout.startswith(f"{run_id}\tpaused\t")
    assert tooldeck(project, env, "runs", "list", "--status", "answered").stdout.startswith("No runs with status")
    shown = tooldeck(project, env, "runs", "show", run_id).stdout
    assert "approvals:\n  call_test_0: add (risk safe): pending\n" in shown
    assert f"python -m orchestrator --resume {run_id} --approve-call call_test_0" in shown

    resumed = orchestrator(
        project, env, *base, "--freedom", "low", "--resume", run_id,
        "--approve-call", "call_test_0", "--deny-call", "call_test_1", "--deny-call", "call_test_2",
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert recorded_id(resumed.stdout) == run_id  # one run, one record
    record = json.loads(tooldeck(project, env, "runs", "show", run_id, "--json").stdout)
    assert record["status"] == "answered"
    decisions = {a["call_id"]: (a["decision"], a["decided_by"]) for a in record["approvals"]}
    assert decisions == {
        "call_test_0": ("approved", "resume"),
        "call_test_1": ("denied", "resume"),
        "call_test_2": ("denied", "resume"),
    }
    assert tooldeck(project, env, "runs", "list", "--status", "paused").stdout.startswith("No runs with status")

    unknown = orchestrator(project, env, *base, "--resume", "run_0123456789ab", "--approve-call", "x")
    assert unknown.returncode == 2
    assert "no paused run with that id" in unknown.stderr and "tooldeck runs list --status paused" in unknown.stderr


def test_no_record_and_no_secret_in_records(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    quiet = orchestrator(project, env, "--registry", "mytools:build", "--model", "test", "--no-record", "hi")
    assert quiet.returncode == 0 and "recorded" not in quiet.stdout
    runs = tmp_path / "home" / ".local" / "share" / "tooldeck" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []
    leaky = orchestrator(project, env, "--registry", "mytools:build", "--model", "test", f"my key is {KEY}, add 1+1")
    assert leaky.returncode == 0
    (record,) = list(runs.iterdir())
    text = record.read_text()
    assert KEY not in text and "my key is ***" in text
    assert record.stat().st_mode & 0o777 == 0o600


def test_without_builtins_only_your_tools_and_a_bad_spec_is_a_usage_error(project: Path, env: dict[str, str]) -> None:
    only = orchestrator(project, env, "--registry", "mytools:build", "--no-builtins", "--json", "What is 2+3?")
    run = json.loads(only.stdout)
    assert run["tool_results"] == []  # the offline model's math tool is not there
    assert "The tools offered to me: add, greet, banner." in run["answer"]
    bad = orchestrator(project, env, "--registry", "mytools:nothing", "hi")
    assert bad.returncode == 2
    assert "error: configuration: registry 'mytools:nothing': module 'mytools' has no attribute 'nothing'" in bad.stderr


def test_an_agent_left_without_tools_is_refused_saying_why(project: Path, env: dict[str, str]) -> None:
    routing = project / "routing.toml"
    routing.write_text('[profiles.explore]\ndeny_tools = ["read", "glob", "grep"]\n')
    refused = orchestrator(project, env, "--agent", "explore", "--routing-config", str(routing), "look around")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: configuration: the 'explore' agent would get no tools")
    assert "1. profile: 'explore'" in refused.stderr
    assert "read" in refused.stderr and "deny" in refused.stderr
