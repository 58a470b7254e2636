"""The Tools page over the stores ``tooldeck ui`` opens (`console_sources`): adopted tools from the
user's registry file, their readiness checked on request, and each tool's figures from the
project's metrics store (success rate coloured, p50/p95, last error)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from orchestrator.ui import ConsoleSecurity, create_app
from orchestrator.ui._compose import console_sources
from orchestrator.ui._render import duration
from tools import ToolResult
from tools.telemetry import MetricsStore

TOKEN = "a-token-of-thirty-two-characters"
ORIGIN = "http://127.0.0.1:8777"
#: (successes, failures) per adopted tool: above 80 %, between 50 and 80 %, below 50 %.
CALLS = {"list_files": (9, 1), "say_hello": (3, 2), "gone_tool": (1, 3)}


def _cli(command: list[str]) -> dict[str, object]:
    return {"adapter_type": "cli", "cli": {"command": command, "actions": {"default": {}}}}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, MetricsStore]]:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    project = tmp_path / "project"
    user_file = tmp_path / "config" / "tooldeck" / "registry.json"
    user_file.parent.mkdir(parents=True)
    tools = {
        "list_files": _cli(["ls"]),
        "say_hello": _cli(["echo", "hello"]),
        "gone_tool": _cli([str(tmp_path / "nowhere" / "prog")]),
    }
    user_file.write_text(json.dumps({"version": 1, "tools": {k: {"id": k, **v} for k, v in tools.items()}}))
    metrics = MetricsStore(project / ".tooldeck" / "metrics.json", flush_interval=None)  # another writer
    for name, (good, bad) in CALLS.items():
        for i in range(good):
            metrics.record(ToolResult.success("ok", metadata={"tool_name": name, "duration_ms": 10.0 * (i + 1)}))
        for _ in range(bad):
            failed = ToolResult.failure("execution_error", f"{name} <b>broke</b>", metadata={"tool_name": name})
            metrics.record(failed)
    metrics.flush()
    setup = console_sources(env, project)
    try:
        with TestClient(create_app(setup.sources, ConsoleSecurity(TOKEN, 8777)), base_url=ORIGIN) as test_client:
            test_client.get(f"/?token={TOKEN}")
            yield test_client, metrics
    finally:
        setup.close()
        metrics.close()


def _row(page: str, name: str) -> list[str]:
    """The cells of ``name``'s row of the Tools table (inner HTML)."""
    match = re.search(rf'<tr data-filter-text="{name} .*?</tr>', page, re.S)
    assert match is not None, name
    return re.findall(r"<td[^>]*>(.*?)</td>", match.group(0), re.S)


def test_every_adopted_tool_is_listed_with_its_figures(client: tuple[TestClient, MetricsStore]) -> None:
    test_client, metrics = client
    page = test_client.get("/tools").text
    since = datetime.now(timezone.utc) - timedelta(days=7)
    expected_class = {"list_files": "rate-good", "say_hello": "rate-fair", "gone_tool": "rate-poor"}
    for name, (good, bad) in CALLS.items():
        cells = _row(page, name)
        assert "user registry file" in cells[4]
        assert expected_class[name] in cells[5]
        assert f"{round(100 * good / (good + bad))} %" in cells[5]
        assert cells[6] == str(good + bad)
        summary = metrics.summary(name, since=since)
        assert summary.p50_ms is not None
        assert (cells[7], cells[8]) == (duration(summary.p50_ms), duration(summary.p95_ms))
        assert f"<code>execution_error</code> {name} &lt;b&gt;broke&lt;/b&gt;" in cells[9]  # escaped
        assert f'href="/tools/{name}?check=1#readiness"' in cells[10]


def test_readiness_is_checked_on_request(client: tuple[TestClient, MetricsStore]) -> None:
    test_client, _ = client
    unchecked = test_client.get("/tools/gone_tool").text
    assert "Check now" in unchecked
    assert "not ready" not in unchecked
    ready = test_client.get("/tools/list_files?check=1").text
    assert '<p class="ok">ready</p>' in ready
    missing = test_client.get("/tools/gone_tool?check=1").text
    assert '<p class="bad">not ready</p>' in missing
    assert "nowhere/prog does not exist; install it or fix the path in the registry" in missing
