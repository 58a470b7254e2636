"""``tooldeck approve | revoke | configure freedom | configure show`` and ``run --approve``,
in-process: one-line errors with exit code 2, --json for scripts, examples in --help, and the
freedom dial applied to ``tooldeck run``."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools.approvals import ApprovalsStore, FreedomLevel
from tools.cli import main

FACTORY = textwrap.dedent(
    '''
    from tools import LocalToolRegistry
    from tools.routing import ToolCategory, ToolManual

    RAN = []

    def build():
        registry = LocalToolRegistry()
        for risk, category in (("safe", "file-read"), ("moderate", "file-write"), ("dangerous", "execution")):
            name = f"{risk}_tool"

            def work(path: str, _name: str = name) -> str:
                """Work on a path.

                Args:
                    path: The path.
                """
                RAN.append(_name)
                return f"{_name}:{path}"

            registry.register(work, name=name, manual=ToolManual(name=name, category=category, risk=risk))
        return registry
    '''
)
HTTP_TOOL = {
    "id": "weather",
    "adapter_type": "http",
    "description": "Current weather for a city.",
    "http": {"base_url": "http://127.0.0.1:9", "endpoints": {"current": {"path": "/w", "query": ["city"]}}},
    "manual": {"risk": "moderate"},
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin"}


@pytest.fixture
def spec(tmp_path: Path) -> Iterator[list[str]]:
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "approvals_factory_mod.py").write_text(FACTORY)
    yield ["--registry", "approvals_factory_mod:build", "--app-dir", str(folder)]
    sys.modules.pop("approvals_factory_mod", None)
    if str(folder) in sys.path:
        sys.path.remove(str(folder))


def store_of(env: dict[str, str]) -> ApprovalsStore:
    return ApprovalsStore.from_env(env)


def run(capsys: pytest.CaptureFixture[str], env: dict[str, str], *args: str) -> tuple[int, str, str]:
    code = main(list(args), env=env)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str) -> str:
    assert err.startswith("tooldeck: error: ")
    assert err.count("\n") == 1
    return err


def adopt_weather(env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "weather.json"
    config.write_text(json.dumps(HTTP_TOOL))
    code, _, err = run(capsys, env, "adopt", "--from-file", str(config))
    assert code == 0, err


def test_configure_freedom_and_show(capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    code, out, _ = run(capsys, env, "configure", "show")
    assert code == 0
    assert out.startswith(  # the same default every entry point applies (python -m orchestrator too)
        "freedom level: medium (only safe tools run freely), from the default: no level is stored, and tooldeck, "
        "python -m orchestrator and serve-mcp all apply medium then\n"
    )
    code, out, _ = run(capsys, env, "configure", "freedom", "HIGH")
    assert code == 0
    assert out.startswith("freedom level: high (only dangerous tools need approval); stored in ")
    assert store_of(env).freedom() is FreedomLevel.HIGH
    code, out, _ = run(capsys, env, "configure", "show", "--json")
    shown = json.loads(out)
    assert (shown["freedom"], shown["source"], shown["stored_freedom"]) == ("high", "file", "high")
    assert shown["file"] == str(store_of(env).path)
    assert shown["approvals"] == []
    code, out, _ = run(capsys, {**env, "TOOLDECK_FREEDOM": "low"}, "configure", "show", "--json")
    assert (json.loads(out)["freedom"], json.loads(out)["source"]) == ("low", "TOOLDECK_FREEDOM")
    code, out, _ = run(capsys, {**env, "TOOLDECK_FREEDOM": "low"}, "configure", "freedom", "medium")
    assert "note: TOOLDECK_FREEDOM=low overrides it in this environment" in out
    code, out, _ = run(capsys, env, "configure", "freedom", "low", "--json")
    assert json.loads(out) == {
        "freedom": "low",
        "in_force": "low",
        "meaning": "nothing runs without approval",
        "file": str(store_of(env).path),
    }


def test_configure_freedom_unset_removes_the_stored_level(
    capsys: pytest.CaptureFixture[str], env: dict[str, str]
) -> None:
    assert run(capsys, env, "configure", "freedom", "high")[0] == 0
    code, out, _ = run(capsys, env, "configure", "freedom", "unset")
    assert code == 0
    assert out == (
        f"freedom level unset in {store_of(env).path}; the default applies: medium (only safe tools run freely)\n"
    )
    assert store_of(env).freedom() is None
    assert '"freedom"' not in store_of(env).path.read_text()
    code, out, _ = run(capsys, env, "configure", "show", "--json")
    assert (json.loads(out)["freedom"], json.loads(out)["source"], json.loads(out)["stored_freedom"]) == (
        "medium",
        "default",
        None,
    )
    code, out, _ = run(capsys, env, "configure", "freedom", " UNSET ", "--json")
    assert json.loads(out)["freedom"] is None and json.loads(out)["in_force"] == "medium"


@pytest.mark.parametrize("bad", ["max", "", "h i g h", "x" * 5000])
def test_invalid_levels_are_one_line_errors_listing_the_allowed_values(
    capsys: pytest.CaptureFixture[str], env: dict[str, str], bad: str
) -> None:
    code, _, err = run(capsys, env, "configure", "freedom", bad)
    assert code == 2
    assert "is not a freedom level; use one of: low (nothing runs without approval); medium" in one_line_error(err)
    assert len(err) < 400
    assert not store_of(env).path.exists()
    code, _, err = run(capsys, {**env, "TOOLDECK_FREEDOM": bad or "?"}, "configure", "show")
    assert code == 2
    assert "TOOLDECK_FREEDOM=" in one_line_error(err)


def test_approve_a_builtin_an_adopted_tool_and_a_registry_tool(
    capsys: pytest.CaptureFixture[str], env: dict[str, str], spec: list[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, env, "approve", "math_solver")
    assert code == 0
    assert out.startswith("approved math_solver (version ")
    assert "undo with: tooldeck revoke math_solver" in out
    adopt_weather(env, capsys, tmp_path)
    code, out, _ = run(capsys, env, "approve", "weather", "--json")
    record = json.loads(out)
    assert record["tool"] == "weather"
    assert record["risk"] == "moderate"
    from tools.store import RegistryStore

    config = RegistryStore.from_env(env).load_merged().tools["weather"]
    assert record["version_hash"] == config.compute_version_hash() == config.version_hash
    code, out, _ = run(capsys, env, "approve", "dangerous_tool", *spec, "--json")
    assert code == 0
    assert json.loads(out)["risk"] == "dangerous"
    assert sorted(store_of(env).approvals()) == ["dangerous_tool", "math_solver", "weather"]
    code, out, _ = run(capsys, env, "configure", "show", "--json")
    statuses = {row["tool"]: row["status"] for row in json.loads(out)["approvals"]}
    assert statuses == {"dangerous_tool": "", "math_solver": "", "weather": "current"}


def test_an_edited_adopted_tool_shows_as_changed(
    capsys: pytest.CaptureFixture[str], env: dict[str, str], tmp_path: Path
) -> None:
    adopt_weather(env, capsys, tmp_path)
    assert run(capsys, env, "approve", "weather")[0] == 0
    registry = Path.cwd() / ".tooldeck" / "registry.json"
    doc = json.loads(registry.read_text())
    doc["tools"]["weather"]["description"] = "Weather, and now something else too."
    registry.write_text(json.dumps(doc))
    assert run(capsys, env, "trust")[0] == 0  # the user reviews the edit and trusts the file again
    _, out, _ = run(capsys, env, "configure", "show", "--json")
    assert json.loads(out)["approvals"][0]["status"] == "changed"
    _, out, _ = run(capsys, env, "configure", "show")
    assert "changed: approve again" in out


def test_approve_errors_are_one_line_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], env: dict[str, str], spec: list[str]
) -> None:
    cases: list[tuple[list[str], str]] = [
        (["approve", "../../etc/passwd"], "is not a tool name"),
        (["approve", "x" * 10_000], "is not a tool name"),
        (["approve", "tool\nname"], "is not a tool name"),
        (["approve", "nothing_here"], "no tool 'nothing_here' is adopted or built in"),
        (["approve", "nothing_here", *spec], "has no tool 'nothing_here' (its tools: safe_tool, moderate_tool"),
        (["approve", "cli_thing", "--version-hash", "abc"], "is not a SHA-256 hex digest"),
        (["approve", "safe_tool", *spec, "--version-hash", "0" * 64], "changed since that version was refused"),
        (["approve"], "Missing argument"),
        (["revoke", "nothing_here"], "tool 'nothing_here' is not approved"),
        (["revoke", "a/b"], "is not a tool name"),
        (["configure"], ""),
        (["configure", "freedom"], "Missing argument"),
        (["configure", "nope"], "No such command"),
    ]
    for args, expected in cases:
        code, out, err = run(capsys, env, *args)
        assert code == 2, (args, out, err)
        if expected:
            assert expected in one_line_error(err), (args, err)
            assert len(err) < 600
    assert not store_of(env).path.exists()


def test_approve_with_the_refusals_version_hash(capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
    code, _, _ = run(capsys, env, "approve", "app_tool", "--version-hash", "d" * 64)
    assert code == 0
    approval = store_of(env).get("app_tool")
    assert approval is not None
    assert approval.version_hash == "d" * 64
    code, out, _ = run(capsys, env, "revoke", "app_tool", "--json")
    assert json.loads(out) == {"revoked": "app_tool", "version_hash": "d" * 64}
    assert store_of(env).get("app_tool") is None


def test_a_corrupt_approvals_file_is_a_one_line_error_naming_it(
    capsys: pytest.CaptureFixture[str], env: dict[str, str], spec: list[str]
) -> None:
    path = store_of(env).path
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "freedom": "ultra"}')
    for args in (
        ["configure", "show"],
        ["configure", "freedom", "low"],
        ["approve", "math_solver"],
        ["revoke", "math_solver"],
        ["run", "safe_tool", *spec, "--arg", "path=a"],
    ):
        code, _, err = run(capsys, env, *args)
        assert code == 2, (args, err)
        assert f"approvals file {path}" in one_line_error(err)
    assert path.read_text() == '{"version": 1, "freedom": "ultra"}'


def _ran() -> list[str]:
    module: Any = sys.modules["approvals_factory_mod"]
    return list(module.RAN)


def test_run_applies_the_freedom_dial(capsys: pytest.CaptureFixture[str], env: dict[str, str], spec: list[str]) -> None:
    code, out, _ = run(capsys, env, "run", "safe_tool", *spec, "--arg", "path=a")
    assert (code, out) == (0, "safe_tool:a\n")
    code, out, err = run(capsys, env, "run", "moderate_tool", *spec, "--arg", "path=b", "--approve", "deny")
    assert code == 1
    assert out == ""
    said = " ".join(err.split())  # said for the person at the terminal, not for a model
    assert said.startswith(
        "tooldeck: moderate_tool failed (permission_denied): moderate_tool needs your approval before it runs (risk "
        "moderate, freedom level medium); approve it with: tooldeck approve moderate_tool --version-hash "
    )
    code, out, _ = run(capsys, env, "run", "moderate_tool", *spec, "--arg", "path=b", "--json")
    envelope = json.loads(out)
    assert code == 1
    assert envelope["error_type"] == "permission_denied"
    assert "stdin is not a terminal" in envelope["error"]  # --approve ask without a terminal: denied
    assert "tooldeck approve moderate_tool" in envelope["error"]
    assert _ran() == ["safe_tool"]
    assert run(capsys, env, "approve", "moderate_tool", *spec)[0] == 0
    code, out, _ = run(capsys, env, "run", "moderate_tool", *spec, "--arg", "path=b")
    assert (code, out) == (0, "moderate_tool:b\n")
    code, out, _ = run(capsys, {**env, "TOOLDECK_FREEDOM": "low"}, "run", "safe_tool", *spec, "--arg", "path=c")
    assert code == 1
    high = {**env, "TOOLDECK_FREEDOM": "high"}
    code, out, _ = run(capsys, high, "call", spec[1], "dangerous_tool", '{"path": "d"}', "--app-dir", spec[3])
    assert code == 1
    assert json.loads(out)["error_type"] == "permission_denied"
    assert _ran() == ["safe_tool", "moderate_tool"]


def test_run_an_adopted_tool_needs_approval_too(
    capsys: pytest.CaptureFixture[str], env: dict[str, str], tmp_path: Path
) -> None:
    adopt_weather(env, capsys, tmp_path)
    code, _, err = run(capsys, env, "run", "weather", "--arg", "city=Lisbon", "--approve", "deny")
    assert code == 1
    assert "weather needs your approval before it runs" in " ".join(err.split())
    code, _, err = run(capsys, env, "run", "weather", "--arg", "city=Lisbon", "--approve", "maybe")
    assert code == 2
    assert "'maybe' is not one of 'ask', 'deny'" in one_line_error(err)


@pytest.mark.parametrize(
    "command",
    [["approve"], ["revoke"], ["configure", "freedom"], ["configure", "show"], ["run"]],
)
def test_help_has_examples(capsys: pytest.CaptureFixture[str], env: dict[str, str], command: list[str]) -> None:
    code, out, _ = run(capsys, env, *command, "--help")
    assert code == 0
    assert "Examples" in out
    assert f"tooldeck {' '.join(command)}" in out
