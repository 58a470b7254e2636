"""The freedom dial over MCP, driven by the SDK's own ClientSession against real server
processes (``python -m tools.external.mcp`` and ``tooldeck serve-mcp``): a call that needs a
person's approval never runs on the client's word. Without elicitation it is an isError
result saying how a person approves it; with elicitation the client's user is asked, and
only "yes" runs that one call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.mcp

Elicit = ElicitationFnT


@pytest.fixture
def env(mcp_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The servers' environment with a configuration directory of this test's own."""
    return {**mcp_env, "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "note.txt"
    path.write_text("my dentist is Dr. Lee")
    return path


def _module_server(*extra: str) -> list[str]:
    return ["-m", "tools.external.mcp", "--registry", "approvals_factory:build", *extra]


def _tooldeck_server(servers_dir: Path) -> list[str]:
    return ["-m", "tools.cli", "serve-mcp", "approvals_factory:build", "--app-dir", str(servers_dir)]


async def _session(
    args: list[str], env: dict[str, str], cwd: Path, calls: list[tuple[str, dict[str, Any]]], elicit: Elicit | None
) -> list[Any]:
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=cwd)
    results: list[Any] = []
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    return results


def _call(
    args: list[str], env: dict[str, str], cwd: Path, *calls: tuple[str, dict[str, Any]], elicit: Elicit | None = None
) -> list[Any]:
    return anyio.run(_session, args, env, cwd, list(calls), elicit)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_without_elicitation_a_held_call_is_an_error_saying_how_to_approve_it(
    env: dict[str, str], servers_dir: Path, note: Path
) -> None:
    read, delete = _call(
        _module_server(), env, servers_dir, ("read_note", {"path": str(note)}), ("delete_note", {"path": str(note)})
    )
    assert (read.is_error, _text(read)) == (False, "my dentist is Dr. Lee")  # safe: runs at the default level
    assert delete.is_error is True
    text = _text(delete)
    assert "The tool 'delete_note' needs a person's approval before it can run" in text
    assert "at freedom level medium" in text
    details = delete.meta["tooldeck/approval"]
    assert details["reason"] == "approval_required" and details["risk"] == "dangerous"
    assert details["approve_command"] == f"tooldeck approve delete_note --version-hash {details['version_hash']}"
    assert f"`{details['approve_command']}`" in text
    assert "you must not run that command yourself" in text
    assert note.exists()  # nothing ran


def test_the_command_the_error_names_approves_the_tool(env: dict[str, str], servers_dir: Path, note: Path) -> None:
    (refused,) = _call(_module_server(), env, servers_dir, ("delete_note", {"path": str(note)}))
    command = refused.meta["tooldeck/approval"]["approve_command"].split()
    assert command[:2] == ["tooldeck", "approve"]
    approve = subprocess.run(
        [sys.executable, "-m", "tools.cli", *command[1:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert approve.returncode == 0, approve.stderr
    (deleted,) = _call(_module_server(), env, servers_dir, ("delete_note", {"path": str(note)}))
    assert (deleted.is_error, _text(deleted)) == (False, f"deleted {note}")
    assert not note.exists()


def test_with_elicitation_the_clients_user_is_asked_and_yes_runs_that_call(
    env: dict[str, str], servers_dir: Path, note: Path
) -> None:
    asked: list[mcp_types.ElicitRequestParams] = []

    async def yes(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params)
        return mcp_types.ElicitResult(action="accept", content={"approve": True})

    (deleted,) = _call(_module_server(), env, servers_dir, ("delete_note", {"path": str(note)}), elicit=yes)
    assert (deleted.is_error, _text(deleted)) == (False, f"deleted {note}")
    assert not note.exists()
    (question,) = asked
    assert isinstance(question, mcp_types.ElicitRequestFormParams)
    assert question.message.startswith("The tool 'delete_note' needs your approval to run (risk: dangerous).")
    assert json.dumps({"path": str(note)}, indent=2) in question.message
    assert question.requested_schema["required"] == ["approve"]
    assert question.requested_schema["properties"]["approve"]["type"] == "boolean"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (mcp_types.ElicitResult(action="accept", content={"approve": False}), "the user said no"),
        (mcp_types.ElicitResult(action="decline"), "the user declined"),
        (mcp_types.ElicitResult(action="cancel"), "the user cancelled the request"),
        (mcp_types.ElicitResult(action="accept", content={"approve": "yes"}), "the user said no"),
    ],
    ids=["no", "decline", "cancel", "not a boolean"],
)
def test_anything_but_yes_is_a_refusal(
    env: dict[str, str], servers_dir: Path, note: Path, answer: mcp_types.ElicitResult, said: str
) -> None:
    async def reply(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return answer

    (refused,) = _call(_module_server(), env, servers_dir, ("delete_note", {"path": str(note)}), elicit=reply)
    assert refused.is_error is True
    assert f"The call of 'delete_note' was not approved: {said}. It was not run" in _text(refused)
    assert note.exists()


def test_a_client_whose_elicitation_fails_gets_the_approval_instructions(
    env: dict[str, str], servers_dir: Path, note: Path
) -> None:
    async def broken(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ErrorData:
        return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message="no UI here")

    (refused,) = _call(_module_server(), env, servers_dir, ("delete_note", {"path": str(note)}), elicit=broken)
    assert refused.is_error is True
    assert _text(refused).startswith("Asking the user for approval failed. The tool 'delete_note' needs a person's")
    assert note.exists()


def test_the_elicitation_shows_what_an_install_changes(env: dict[str, str], servers_dir: Path) -> None:
    asked: list[str] = []

    async def no(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="decline")

    _call(_module_server(), env, servers_dir, ("install_plugin", {"plugin": "greet"}), elicit=no)
    assert (
        "What it changes:\nnew plugin greet\n--- /dev/null\n+++ b/greet.py\n@@ -0,0 +1 @@\n+print('hello')" in asked[0]
    )


def test_the_level_comes_from_the_flag_the_environment_or_the_stored_one(
    env: dict[str, str], servers_dir: Path, note: Path
) -> None:
    (low,) = _call(_module_server("--freedom", "low"), env, servers_dir, ("read_note", {"path": str(note)}))
    assert low.is_error is True and "at freedom level low" in _text(low)
    (from_env,) = _call(
        _module_server(), {**env, "TOOLDECK_FREEDOM": "low"}, servers_dir, ("read_note", {"path": str(note)})
    )
    assert from_env.is_error is True
    stored = subprocess.run(
        [sys.executable, "-m", "tools.cli", "configure", "freedom", "low"],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert stored.returncode == 0
    (from_file,) = _call(_module_server(), env, servers_dir, ("read_note", {"path": str(note)}))
    assert from_file.is_error is True and "at freedom level low" in _text(from_file)
    (high,) = _call(_module_server("--freedom", "high"), env, servers_dir, ("delete_note", {"path": str(note)}))
    assert high.is_error is True and note.exists()  # dangerous asks at every level


def test_an_applications_own_policy_is_kept(env: dict[str, str], servers_dir: Path, note: Path) -> None:
    args = ["-m", "tools.external.mcp", "--registry", "approvals_factory:build_strict", "--freedom", "high"]
    (read,) = _call(args, env, servers_dir, ("read_note", {"path": str(note)}))
    assert read.is_error is True and "at freedom level low" in _text(read)


def test_tooldeck_serve_mcp_applies_the_same_policy(env: dict[str, str], servers_dir: Path, note: Path) -> None:
    read, delete = _call(
        _tooldeck_server(servers_dir),
        env,
        servers_dir,
        ("read_note", {"path": str(note)}),
        ("delete_note", {"path": str(note)}),
    )
    assert read.is_error is False
    assert delete.is_error is True and "needs a person's approval" in _text(delete)
    assert note.exists()

    async def yes(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"approve": True})

    (deleted,) = _call(
        _tooldeck_server(servers_dir), env, servers_dir, ("delete_note", {"path": str(note)}), elicit=yes
    )
    assert deleted.is_error is False and not note.exists()
