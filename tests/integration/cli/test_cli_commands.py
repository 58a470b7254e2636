"""The real ``tooldeck`` command in a subprocess: secrets never shown, pipes, exit codes,
the binary executor's status, and serving the adopted tools over MCP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.store.conftest import SECRET, WORKTREE, Tooldeck, WeatherAPI, base_env, weather_manual


def _adopt_weather(tooldeck: Tooldeck, project: Path, api: WeatherAPI) -> None:
    (project / "apis.json").write_text(json.dumps(weather_manual(api.url)))
    assert tooldeck("catalog", "sync", "--manuals", "apis.json").code == 0
    assert tooldeck("adopt", "apis:weather").code == 0
    assert tooldeck("approve", "weather").code == 0  # moderate (a remote API): asks at medium until approved


def test_no_output_ever_contains_the_secret(
    tooldeck: Tooldeck, project: Path, weather_api: WeatherAPI, tmp_path: Path
) -> None:
    _adopt_weather(tooldeck, project, weather_api)
    outputs = [
        tooldeck("list", "--json"),
        tooldeck("list"),
        tooldeck("list", "--status", "--json"),
        tooldeck("describe", "weather", "--json"),
        tooldeck("describe", "weather"),
        tooldeck("check", "weather", "--json"),
        tooldeck("run", "weather", "--arg", f"city={SECRET}", "--artifact", "--json"),
        tooldeck("run", "weather", "--arg", "city=", "--artifact"),
        tooldeck("run", "weather", "--arg", "city=Lisbon", "--json", "-v", "-v"),
        tooldeck("schema"),
    ]
    wrong = base_env(tmp_path / "home", WEATHER_KEY="wrong-" + SECRET)
    outputs.append(tooldeck("run", "weather", "--arg", "city=Lisbon", env=wrong))
    for outcome in outputs:
        assert SECRET not in outcome.out + outcome.err
    assert outputs[6].json()["data"]["city"] == "***"
    assert outputs[7].code == 1 and "city is required" in outputs[7].err
    assert outputs[-1].code == 1 and "permission_denied" in outputs[-1].err
    artifacts = list((project / ".tooldeck" / "runs").glob("*.json"))
    assert len(artifacts) == 2 and all(SECRET not in a.read_text() for a in artifacts)


def test_broken_pipe_into_head_is_silent(tooldeck: Tooldeck, project: Path, tmp_path: Path) -> None:
    tools = {
        f"t{i}": {"adapter_type": "cli", "cli": {"command": ["echo"], "actions": {"say": {"args": ["{x}"]}}}}
        for i in range(3000)
    }
    (project / ".tooldeck").mkdir()
    (project / ".tooldeck" / "registry.json").write_text(json.dumps({"version": 1, "tools": tools}))
    assert tooldeck("trust").code == 0
    done = subprocess.run(
        f"{sys.executable} -m tools.cli list --json | head -n 1",
        shell=True,
        cwd=project,
        env=base_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout == "[\n"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_usage_errors_are_one_line_without_traceback(tooldeck: Tooldeck) -> None:
    for args in (["nope"], ["run"], ["describe", "x" * 5000], ["catalog", "search", "--limit", "0"]):
        outcome = tooldeck(*args)
        assert outcome.code == 2, args
        assert "Traceback" not in outcome.err
        assert outcome.err.startswith("tooldeck: error: ") and outcome.err.count("\n") == 1, outcome.err


def test_executor_status(tooldeck: Tooldeck, project: Path, binaries: Path) -> None:
    from tools import ToolResult
    from tools.telemetry import MetricsStore

    with MetricsStore(project / ".tooldeck" / "metrics.json", flush_interval=None) as store:
        for duration, ok in ((10.0, True), (12.0, True), (15.5, True), (3.0, False)):
            meta = {"tool_name": "word_count", "duration_ms": duration}
            store.record(
                ToolResult.success(1, meta) if ok else ToolResult.failure("upstream_error", "x", metadata=meta)
            )
    outcome = tooldeck("executor", "status", str(binaries), "--json")
    assert outcome.code == 0, outcome.err
    rows = {row["name"]: row for row in outcome.json()}
    assert rows["word_count"]["status"] == "ready"
    metrics = rows["word_count"]["metrics"]
    assert (metrics["calls"], metrics["successes"], metrics["failures"]) == (4, 3, 1)
    assert metrics["success_rate"] == 0.75 and metrics["avg_duration_ms"] == 12.5
    assert rows["shout"]["status"] == "schema-unknown" and rows["shout"]["metrics"] is None
    table = tooldeck("executor", "status", str(binaries))
    assert "word_count" in table.out and "75%" in table.out and "schema-unknown" in table.out
    assert tooldeck("executor", "status", str(binaries / "missing")).code == 2


@pytest.mark.mcp
def test_serve_mcp_serves_the_adopted_tools(tooldeck: Tooldeck, project: Path, binaries: Path, tmp_path: Path) -> None:
    from tools.external.mcp import MCPToolset

    assert tooldeck("catalog", "sync", "--binaries", f"bin={binaries}").code == 0
    # The operator declares it read-only: serve-mcp applies the freedom level (medium) too.
    assert tooldeck("adopt", "bin:word_count", "--risk", "safe", "--read-only").code == 0
    env = base_env(tmp_path / "home")
    command = [sys.executable, "-m", "tools.cli", "--project-dir", str(project), "serve-mcp"]
    with MCPToolset(
        command, env={"PYTHONPATH": str(WORKTREE), **{k: env[k] for k in ("HOME", "XDG_CONFIG_HOME")}}
    ) as ts:
        names = {t.name for t in ts.tools()}
        assert {"word_count", "math_solver"} <= names
        result = ts.call("word_count", {"text": "a b c d"})
    assert result.ok and json.loads(result.data) == {"words": 4}


def test_run_feeds_the_learning_loop_and_stats_reports_it(
    tooldeck: Tooldeck, project: Path, weather_api: WeatherAPI
) -> None:
    _adopt_weather(tooldeck, project, weather_api)
    empty = tooldeck("stats", "--json").json()
    assert [(row["tool"], row["calls"], row["success_rate"]) for row in empty] == [("weather", 0, None)]
    assert "no calls yet" in tooldeck("stats").out
    for city in ("Lisbon", "Porto", ""):
        tooldeck("run", "weather", "--arg", f"city={city}")
    (row,) = tooldeck("stats", "weather", "--json").json()
    assert (row["calls"], row["successes"], row["failures"]) == (3, 2, 1)
    assert row["last_error_type"] == "validation_error"
    assert SECRET not in json.dumps(row)
    degraded = tooldeck("stats", "--degraded", "--min-calls", "3", "--threshold", "0.9", "--json").json()
    assert [r["tool"] for r in degraded] == ["weather"]
    missing = tooldeck("stats", "nope")
    assert missing.code == 2 and "no tool 'nope'" in missing.err
