"""The tooldeck CLI in-process: registries given as module:attribute, schema export, adopted
tools, argument parsing, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools.cli import main
from tools.cli.app import COMMAND_MODULES
from tools.registry import LocalToolRegistry

FACTORY = textwrap.dedent(
    '''
    from tools import LocalToolRegistry, ToolManual

    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    def build():
        registry = LocalToolRegistry()
        # declared safe: an undeclared tool is moderate and asks at the default level
        registry.register(add, manual=ToolManual(name="add", category="compute", risk="safe", mutating=False))
        return registry

    REGISTRY = build()

    def not_a_registry():
        return 42
    '''
)

HTTP_TOOL = {
    "id": "weather",
    "adapter_type": "http",
    "description": "Current weather for a city.",
    "capabilities": ["weather"],
    "http": {"base_url": "http://127.0.0.1:9", "endpoints": {"current": {"path": "/w", "query": ["city"]}}},
    "auth": {"env_var": "WEATHER_KEY"},
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Run in an empty project with a private config directory."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin"}


@pytest.fixture
def app_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "cli_factory_mod.py").write_text(FACTORY)
    yield folder
    sys.modules.pop("cli_factory_mod", None)
    if str(folder) in sys.path:
        sys.path.remove(str(folder))


def run(capsys: pytest.CaptureFixture[str], env: dict[str, str], *args: str) -> tuple[int, str, str]:
    code = main(list(args), env=env)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_schema_from_module_factory_and_object(
    env: dict[str, str], app_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, env, "schema", "cli_factory_mod:build", "--app-dir", str(app_dir), "--strict")
    assert code == 0
    tool = json.loads(out)[0]["function"]
    assert tool["strict"] is True and tool["parameters"]["required"] == ["a", "b"]
    code, out, _ = run(capsys, env, "schema", "cli_factory_mod:REGISTRY", "--app-dir", str(app_dir), "-f", "mcp")
    assert code == 0 and json.loads(out)[0]["inputSchema"]["required"] == ["a"]
    code, out, _ = run(capsys, env, "schema", "cli_factory_mod:build", "--app-dir", str(app_dir), "-f", "anthropic")
    assert json.loads(out)[0]["input_schema"]["required"] == ["a"]


def test_default_schema_has_builtins_and_adopted_tools(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tool.json").write_text(json.dumps(HTTP_TOOL))
    assert run(capsys, env, "adopt", "--from-file", str(tmp_path / "tool.json"))[0] == 0
    code, out, _ = run(capsys, env, "schema", "--format", "openai")
    names = [t["function"]["name"] for t in json.loads(out)]
    assert code == 0 and names == ["math_solver", "weather"]


@pytest.mark.skipif(not hasattr(LocalToolRegistry, "for_agent"), reason="needs the routing branch")
def test_schema_for_an_agent(env: dict[str, str], app_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, env, "schema", "cli_factory_mod:build", "--app-dir", str(app_dir), "--agent", "main")
    assert code == 0 and isinstance(json.loads(out), list)


def test_strict_with_other_format_is_a_usage_error(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, env, "schema", "--format", "mcp", "--strict")
    assert (code, out) == (2, "")
    assert err == "tooldeck: error: --strict applies to --format openai only; drop --strict or use --format openai\n"


def test_run_against_a_registry(env: dict[str, str], app_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = ["--registry", "cli_factory_mod:build", "--app-dir", str(app_dir)]
    code, out, _ = run(capsys, env, "run", "add", *spec, "--params", '{"a": 2}', "--arg", "b:=3")
    assert (code, out) == (0, "5\n")
    code, out, _ = run(capsys, env, "run", "add", *spec, "--arg", "a=two", "--json")
    assert code == 1 and json.loads(out)["error_type"] == "validation_error"
    code, _, err = run(capsys, env, "run", "add", *spec, "--arg", "a:=2")
    assert code == 0 and err == ""


def test_call_keeps_the_old_form(env: dict[str, str], app_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, env, "call", "cli_factory_mod:build", "add", '{"a": 2, "b": 3}', "--app-dir", str(app_dir)
    )
    assert code == 0 and json.loads(out)["data"] == 5
    code, out, _ = run(capsys, env, "call", "cli_factory_mod:build", "add", "{not json", "--app-dir", str(app_dir))
    assert code == 1 and json.loads(out)["error_type"] == "validation_error"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("no_colon", "expected 'module:attribute'"),
        ("missing_mod_xyz:build", "cannot import 'missing_mod_xyz'"),
        ("cli_factory_mod:nothing", "has no attribute 'nothing'"),
        ("cli_factory_mod:not_a_registry", "is (or returned) int, not a LocalToolRegistry"),
    ],
)
def test_bad_registry_specs(
    env: dict[str, str], app_dir: Path, capsys: pytest.CaptureFixture[str], spec: str, expected: str
) -> None:
    code, out, err = run(capsys, env, "schema", spec, "--app-dir", str(app_dir))
    assert (code, out) == (2, "")
    assert expected in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--params", "{not json"], "--params is not valid JSON"),
        (["--params", "[1]"], "--params must be a JSON object, got list"),
        (["--arg", "novalue"], "expected key=value (a string) or key:=json"),
        (["--arg", "n:=nope"], "the value after ':=' must be JSON"),
        (["--timeout", "0"], "Invalid value for '--timeout'"),
        (["--bogus"], "No such option: --bogus"),
    ],
)
def test_bad_run_arguments_are_one_line(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, out, err = run(capsys, env, "run", "x", *args)
    assert (code, out) == (2, "")
    assert err.startswith("tooldeck: error: ") and expected in err and err.count("\n") == 1


def test_adopted_tool_lifecycle(env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tool.json").write_text(json.dumps(HTTP_TOOL))
    code, out, _ = run(capsys, env, "adopt", "--from-file", str(tmp_path / "tool.json"), "--json")
    assert code == 0 and json.loads(out)["id"] == "weather"
    code, _, err = run(capsys, env, "adopt", "--from-file", str(tmp_path / "tool.json"))
    assert code == 2 and "already adopted; pass --replace" in err
    listed = json.loads(run(capsys, env, "list", "--json")[1])
    assert listed[0]["adopted_from"].endswith("tool.json")
    assert listed[0] | {"adopted_at": None, "adopted_from": None} == {
        "id": "weather",
        "name": "weather",
        "adapter_type": "http",
        "description": "Current weather for a city.",
        "capabilities": ["weather"],
        "scope": "project",
        "adopted_from": None,
        "adopted_at": None,
        "auth_env": "WEATHER_KEY",
        "approved": True,
    }
    described = json.loads(run(capsys, env, "describe", "weather", "--json")[1])
    assert described["manual"]["source"] == "http" and described["manual"]["capabilities"] == ["weather"]
    assert described["needs_reapproval"] is False
    code, out, _ = run(capsys, env, "check", "weather", "--json")
    assert code == 2 and json.loads(out)["missing"][0].startswith("environment variable WEATHER_KEY is not set")
    assert json.loads(run(capsys, env, "list", "-c", "weather", "--json")[1])["available"][0]["id"] == "weather"
    code, out, _ = run(capsys, env, "remove", "weather", "--json")
    assert (code, json.loads(out)) == (0, {"removed": "weather"})
    code, _, err = run(capsys, env, "remove", "weather")
    assert code == 2 and "is not adopted in this project" in err


def test_edited_entry_needs_reapproval(env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tool.json").write_text(json.dumps(HTTP_TOOL))
    run(capsys, env, "adopt", "--from-file", str(tmp_path / "tool.json"))
    path = Path(".tooldeck/registry.json")
    doc = json.loads(path.read_text())
    doc["tools"]["weather"]["http"]["base_url"] = "http://127.0.0.1:10"
    path.write_text(json.dumps(doc))
    assert run(capsys, env, "trust")[0] == 0  # the user reviews the edit and trusts the file again
    described = json.loads(run(capsys, env, "describe", "weather", "--json")[1])
    assert described["needs_reapproval"] is True and described["approved"] is False


def test_run_of_a_tool_that_is_not_adopted(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, env, "run", "weather", "--arg", "city=Lisbon")
    assert (code, out) == (2, "")
    assert "tool 'weather' is not adopted" in err and "tooldeck catalog search weather" in err


def test_corrupt_registry_is_a_setup_error(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    Path(".tooldeck").mkdir()
    Path(".tooldeck/registry.json").write_text('{\n  "version": 1,\n  "tools": {\n    "x": }\n}\n')
    code, out, err = run(capsys, env, "list", "--json")  # not trusted: never read, only named
    assert (code, out) == (0, "[]\n")
    assert "registry.json is not trusted" in err
    code, out, err = run(capsys, env, "trust")  # a file that is not a registry cannot be trusted
    assert (code, out) == (2, "")
    assert ".tooldeck/registry.json:4: is not valid JSON" in err
    assert Path(".tooldeck/registry.json").read_text().endswith('"x": }\n}\n')
    user = Path(env["XDG_CONFIG_HOME"]) / "tooldeck" / "registry.json"  # the user's own file is read:
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{"version": 1, "tools": {"x": }}')
    code, out, err = run(capsys, env, "list")
    assert (code, out) == (2, "")  # a corrupt one is an error
    assert f"{user}:1: is not valid JSON" in err


def test_adopt_needs_exactly_one_source(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, env, "adopt")
    assert code == 2 and "give a CATALOG_ID or --from-file FILE" in err
    code, _, err = run(capsys, env, "adopt", "nope:tool")
    assert code == 2 and "no catalog is configured" in err


def test_adopt_from_a_bad_file(env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({**HTTP_TOOL, "adapter_type": "ftp"}))
    code, _, err = run(capsys, env, "adopt", "-f", str(tmp_path / "bad.json"))
    assert code == 2 and "adapter_type" in err and err.count("\n") == 1
    code, _, err = run(capsys, env, "adopt", "-f", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_catalog_without_sources(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, env, "catalog", "sync")
    assert code == 2 and "the catalog has no sources" in err
    code, _, err = run(capsys, env, "catalog", "sync", "--mcp", "nocommand")
    assert code == 2 and "expected NAME=COMMAND" in err
    assert json.loads(run(capsys, env, "catalog", "search", "x", "--json")[1]) == []


def test_catalog_from_a_manual_file(env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manual = {"tools": [{**HTTP_TOOL, "id": "weather", "tags": ["forecast"]}]}
    (tmp_path / "m.json").write_text(json.dumps(manual))
    code, out, _ = run(capsys, env, "catalog", "sync", "--manuals", f"apis={tmp_path / 'm.json'}", "--json")
    assert code == 0 and json.loads(out)["sources"][0]["entries"] == 1
    found = json.loads(run(capsys, env, "catalog", "search", "weather city", "--json")[1])
    assert [f["catalog_id"] for f in found] == ["apis:weather"]
    (tmp_path / "m.json").write_text("{broken")
    code, out, _ = run(capsys, env, "catalog", "sync", "--json")
    report: dict[str, Any] = json.loads(out)
    assert code == 2 and report["sources"][0]["entries"] == 1 and "not valid JSON" in report["sources"][0]["error"]


def test_help_of_every_command_has_examples(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    commands = [["list"], ["describe"], ["check"], ["adopt"], ["remove"], ["run"], ["schema"], ["serve-mcp"]]
    commands += [["catalog", "sync"], ["catalog", "search"], ["executor", "status"], []]
    for command in commands:
        code, out, _ = run(capsys, env, *command, "--help")
        assert code == 0 and "Examples" in out, command


def test_no_arguments_shows_help_and_exit_2(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, env)
    assert code == 2 and "Usage" in out + err


def test_one_module_per_command_group() -> None:
    assert COMMAND_MODULES == (
        "tools.cli.registry_cmds",
        "tools.cli.run_cmds",
        "tools.cli.catalog_cmds",
        "tools.cli.schema_cmds",
        "tools.cli.executor_cmds",
        "tools.cli.stats_cmds",
        "tools.cli.approve_cmds",
        "tools.cli.trust_cmds",
        "tools.cli.runs_cmds",
    )
    import importlib

    for name in COMMAND_MODULES:
        assert callable(importlib.import_module(name).register)


def test_console_script_entry_point() -> None:
    setup = (Path(__file__).resolve().parents[3] / "setup.cfg").read_text()
    assert "tooldeck = tools.cli:main" in setup
