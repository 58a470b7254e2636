"""What ``tooldeck`` prints is written for people, and never drives their terminal.

Issue 21 items 8 and 10, issue 20 item 14: a missing credential is named with the command
that shows how to set it; a connection failure names the URL and the cause; rich markup
never eats text (``[mcp]`` vanished from a fix command); ``--action`` reaches a
multi-action tool of ``--registry``; tool output with terminal control sequences (OSC 52
clipboard writes, cursor moves, bidi overrides) is printed as visible escapes, and
``--json`` keeps the exact values.
"""

from __future__ import annotations

import json
import socket
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.integration.store.conftest import Tooldeck, base_env

HOSTILE = "\x1b]52;c;aGVsbG8=\x07 done \x1b[2J\x1b[1;1H\x9b31m\u202eevil\r"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")

APP = textwrap.dedent(
    '''
    from typing import Any
    from pydantic import BaseModel
    from tools import ActionStrategy, CompositeTool, LocalToolRegistry, ToolError

    HOSTILE = {hostile!r}

    class Empty(BaseModel):
        pass

    class Shout(ActionStrategy[Empty]):
        action_name = "shout"
        description = "Shout."
        def execute(self, request: Empty) -> Any:
            return "LOUD"

    class Whisper(ActionStrategy[Empty]):
        action_name = "whisper"
        description = "Whisper."
        def execute(self, request: Empty) -> Any:
            return "quiet"

    class Voice(CompositeTool):
        name = "voice"
        description = "Say things."
        def __init__(self) -> None:
            super().__init__([Shout(), Whisper()])

    def build() -> LocalToolRegistry:
        registry = LocalToolRegistry()
        registry.register(Voice())

        @registry.tool
        def hostile() -> str:
            """Return text full of terminal control sequences."""
            return HOSTILE

        @registry.tool
        def hostile_error() -> str:
            """Fail with control sequences in the message."""
            raise ToolError("broken " + HOSTILE)

        return registry
    '''
)


@pytest.fixture
def run(tooldeck: Tooldeck, tmp_path: Path) -> Tooldeck:
    """``tooldeck`` at freedom level high: these tests are about what is printed, not approvals."""

    def go(*args: str, env: dict[str, str] | None = None) -> Any:
        return tooldeck(*args, env={**(env or base_env(tmp_path / "home")), "TOOLDECK_FREEDOM": "high"})

    return go


def write_app(project: Path) -> None:
    (project / "hostileapp.py").write_text(APP.format(hostile=HOSTILE))


def assert_no_raw_controls(text: str) -> None:
    found = [repr(ch) for ch in RAW if ch in text]
    assert not found, f"raw control characters reached the terminal: {found}"


def test_tool_output_cannot_drive_the_terminal(run: Tooldeck, project: Path) -> None:
    write_app(project)
    shown = run("run", "hostile", "--registry", "hostileapp:build")
    assert shown.code == 0, shown.err
    assert_no_raw_controls(shown.out + shown.err)
    assert "\\x1b]52;c;aGVsbG8=\\x07 done \\x1b[2J" in shown.out
    assert "\\x9b31m\\u202eevil\\x0d" in shown.out

    failed = run("run", "hostile_error", "--registry", "hostileapp:build")
    assert failed.code == 1
    assert_no_raw_controls(failed.out + failed.err)
    assert "broken \\x1b]52" in failed.err


def test_json_output_escapes_controls_and_keeps_the_exact_value(run: Tooldeck, project: Path) -> None:
    write_app(project)
    shown = run("run", "hostile", "--registry", "hostileapp:build", "--json")
    assert shown.code == 0, shown.err
    assert_no_raw_controls(shown.out)
    assert shown.json()["data"] == HOSTILE


def test_action_reaches_a_multi_action_tool_of_a_registry(run: Tooldeck, project: Path) -> None:
    write_app(project)
    whisper = run("run", "voice", "--registry", "hostileapp:build", "--action", "whisper")
    assert (whisper.code, whisper.out) == (0, "quiet\n"), whisper.err
    shout = run("run", "voice", "--registry", "hostileapp:build", "--action", "shout")
    assert (shout.code, shout.out) == (0, "LOUD\n"), shout.err


def test_a_missing_action_is_explained_with_the_flag_to_use(run: Tooldeck, project: Path) -> None:
    write_app(project)
    missing = run("run", "voice", "--registry", "hostileapp:build")
    assert missing.code == 1
    assert missing.err == (
        "tooldeck: voice failed (unknown_action): voice has several actions: shout, whisper; choose one with "
        "--action, e.g. tooldeck run voice --action shout\n"
    )


def adopt(project: Path, tools: dict[str, object], tooldeck: Tooldeck) -> None:
    """Write the project's registry file and trust it (``tooldeck trust``: an untrusted project
    file is not used)."""
    (project / ".tooldeck").mkdir(exist_ok=True)
    (project / ".tooldeck" / "registry.json").write_text(json.dumps({"version": 1, "tools": tools}))
    trusted = tooldeck("trust")
    assert trusted.code == 0, trusted.err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def weather_config(url: str) -> dict[str, object]:
    return {
        "adapter_type": "http",
        "http": {"base_url": url, "endpoints": {"default": {"method": "GET", "path": "/weather"}}},
        "auth": {"env_var": "WEATHER_KEY", "header": "X-Api-Key"},
    }


def test_a_missing_credential_is_named_with_the_command_that_shows_how(
    run: Tooldeck, project: Path, tmp_path: Path
) -> None:
    adopt(project, {"weather": weather_config("http://127.0.0.1:9")}, run)
    env = base_env(tmp_path / "home")
    del env["WEATHER_KEY"]
    result = run("run", "weather", env=env)
    assert result.code == 1
    assert result.err == (
        "tooldeck: weather failed (execution_error): WEATHER_KEY is not set; tooldeck check weather shows how to "
        "set it\n"
    )
    assert "tell the user" not in result.err
    as_json = run("run", "weather", "--json", env=env)
    assert "tell the user it cannot be used right now" in as_json.json()["error"]  # the model's words, unchanged


def test_a_connection_failure_names_the_url_and_the_cause(run: Tooldeck, project: Path) -> None:
    port = free_port()  # nothing listens there once the probe is closed
    adopt(project, {"weather": weather_config(f"http://127.0.0.1:{port}")}, run)
    result = run("run", "weather", "--arg", "city=Lisbon")
    assert result.code == 1
    assert result.err == (
        f"tooldeck: weather failed (upstream_error): could not reach http://127.0.0.1:{port}/weather: connection "
        "refused (nothing is listening on that port)\n"
    )


def test_markup_never_eats_text_from_tools_and_configs(tooldeck: Tooldeck, project: Path) -> None:
    adopt(
        project,
        {
            "ghost": {
                "adapter_type": "cli",
                "description": "Reads [mcp] and [red]styled[/] text \x1b[31m",
                "cli": {"command": ["no-such-program[mcp]"], "actions": {"go": {"args": []}}},
            }
        },
        tooldeck,
    )
    check = tooldeck("check", "ghost")
    assert check.code == 2
    assert "command 'no-such-program[mcp]' is not on PATH" in check.out
    listed = tooldeck("list")
    assert "Reads [mcp] and [red]styled[/] text \\x1b[31m" in listed.out
    assert_no_raw_controls(listed.out)


def test_trust_shows_what_a_cloned_registry_runs_without_letting_it_drive_the_terminal(
    tooldeck: Tooldeck, project: Path
) -> None:
    """``tooldeck trust`` prints the commands of a registry file that came with a repository:
    the file's text reaches the terminal through the same safe helpers as everything else."""
    (project / ".tooldeck").mkdir()
    hostile = {"adapter_type": "cli", "cli": {"command": ["rm" + HOSTILE], "actions": {"go": {"args": []}}}}
    (project / ".tooldeck" / "registry.json").write_text(json.dumps({"version": 1, "tools": {"tidy": hostile}}))
    untrusted = tooldeck("list")
    assert "tooldeck trust" in untrusted.err
    assert_no_raw_controls(untrusted.out + untrusted.err)
    trusted = tooldeck("trust")
    assert trusted.code == 0, trusted.err
    assert "tidy (cli): runs 'rm\\x1b]52;c;aGVsbG8=\\x07 done" in trusted.out
    assert_no_raw_controls(trusted.out + trusted.err)
