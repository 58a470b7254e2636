"""Every page over hostile text: it renders, and what tools, models and files wrote is escaped."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from orchestrator.stored_settings import SettingsFile
from orchestrator.ui import ConsoleSecurity, ConsoleSources, SettingsSources, create_app
from tools import LocalToolRegistry, ToolResult
from tools.approvals import ApprovalPolicy, ApprovalsStore
from tools.manual import ToolManual
from tools.telemetry import MetricsStore

TOKEN = "a-token-of-thirty-two-characters"
ORIGIN = "http://127.0.0.1:8777"
SCRIPT = "<script>alert('x')</script>"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    approvals = ApprovalsStore(tmp_path / "approvals.json")
    metrics = MetricsStore(tmp_path / "metrics.json", flush_interval=None)
    registry = LocalToolRegistry(policy=ApprovalPolicy(None, approvals), metrics=metrics)

    def lookup(query: str) -> dict[str, str]:
        """Look something up."""
        return {"found": SCRIPT, "query": query}

    description = f'Finds things {SCRIPT} and "quotes" & <b>bold</b>'
    registry.register(lookup, description=description, manual=ToolManual(name="lookup", capabilities=(SCRIPT,)))
    metrics.record(ToolResult.failure("upstream_error", f"upstream said {SCRIPT}", metadata={"tool_name": "lookup"}))
    metrics.flush()
    settings = SettingsSources(file=SettingsFile(tmp_path / "settings.json"), approvals=approvals)
    sources = ConsoleSources(registry=registry, metrics=metrics, settings=settings)
    with TestClient(create_app(sources, ConsoleSecurity(token=TOKEN, port=8777)), base_url=ORIGIN) as test_client:
        test_client.get(f"/?token={TOKEN}")
        yield test_client
    metrics.close()


PAGES = [
    "/tools",
    "/tools/lookup",
    "/routing",
    "/routing/reviewer",
    "/metrics",
    "/metrics?window=30d",
    "/metrics/lookup?window=24h",
    "/settings",
    "/runs",
    "/approvals",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_escaped_with_only_the_console_script(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, response.text[-2000:]
    page = response.text
    assert "<script>alert" not in page
    assert "<b>bold</b>" not in page
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/console.js" defer>']
    assert TOKEN not in page  # the token never appears in a page (only its CSRF derivative)


def test_hostile_text_is_shown_as_text(client: TestClient) -> None:
    tools = client.get("/tools").text
    assert "Finds things &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in tools
    assert "upstream said &lt;script&gt;" in tools
    tool = client.get("/tools/lookup").text
    assert "&lt;b&gt;bold&lt;/b&gt;" in tool
    called = client.post(
        "/tools/lookup/call",
        data={"arg.query": SCRIPT, "csrf_token": _csrf(client)},
        headers={"Origin": ORIGIN},
    )
    assert called.status_code == 200
    assert "needs your approval" in called.text  # undeclared: moderate, held at the default level


def _csrf(client: TestClient) -> str:
    match = re.search(r'name="csrf-token" content="([0-9a-f]{64})"', client.get("/tools").text)
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize(
    ("path", "said"),
    [("/tools/nothing", "No tool named"), ("/routing/nobody", "No agent type"), ("/runs/run_x", "is recorded")],
)
def test_what_does_not_exist_is_a_404_page(client: TestClient, path: str, said: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert said in response.text


def test_an_untrusted_project_file_and_unavailable_tools_are_said(tmp_path: Path) -> None:
    from tools.store import RegistryService, RegistryStore

    project = tmp_path / "project" / ".tooldeck" / "registry.json"
    project.parent.mkdir(parents=True)
    project.write_text('{"version": 1, "tools": {}}')
    env = {"HOME": str(tmp_path / "home")}
    adopted = RegistryService(RegistryStore.from_env(env, project_dir=tmp_path / "project"), env=env)
    sources = ConsoleSources(
        registry=LocalToolRegistry(), adopted=adopted, unavailable={"web": "install the web extra: <pip>"}
    )
    with TestClient(create_app(sources, ConsoleSecurity(token=TOKEN, port=8777)), base_url=ORIGIN) as client:
        page = client.get(f"/tools?token={TOKEN}").text
    assert f"{project} is not trusted" in page
    assert "<b>web</b>: install the web extra: &lt;pip&gt;" in page
    adopted.close()


def test_stored_approvals_are_listed_with_their_status_and_revoked(tmp_path: Path) -> None:
    store = ApprovalsStore(tmp_path / "approvals.json")
    registry = LocalToolRegistry(policy=ApprovalPolicy(None, store))

    def lookup(query: str) -> str:
        """Look something up."""
        return query

    registry.register(lookup)
    version = registry.tool_version_hash("lookup")
    assert version is not None
    store.approve("lookup", version, risk="moderate")
    store.approve("gone_tool", "0" * 64)
    app = create_app(ConsoleSources(registry=registry), ConsoleSecurity(token=TOKEN, port=8777))
    with TestClient(app, base_url=ORIGIN) as client:
        page = client.get(f"/approvals?token={TOKEN}").text
        rows = re.findall(r"<tr><td>(\w+)</td>.*?<td>(current|changed|not registered)</td>", page, re.S)
        assert rows == [("gone_tool", "not registered"), ("lookup", "current")]
        form = {"tool": "lookup", "csrf_token": _csrf(client)}
        done = client.post("/approvals/revoke", data=form, headers={"Origin": ORIGIN})
        assert done.status_code == 200
        assert "Revoked the approval of lookup" in done.text
        again = client.post("/approvals/revoke", data=form, headers={"Origin": ORIGIN})
        assert again.status_code == 409
        assert "is not approved" in again.text
    assert list(store.approvals()) == ["gone_tool"]


def test_secrets_never_reach_a_page(tmp_path: Path) -> None:
    """Known secret values and secret-looking ones are masked like traces: results, errors, runs."""
    from datetime import datetime, timezone

    from tools.runs import FileRunStore, RecordedToolCall, RunRecord

    known = "correct-horse-battery-staple"
    shaped = "sk-proj-" + "Z" * 40
    metrics = MetricsStore(tmp_path / "metrics.json", flush_interval=None)
    registry = LocalToolRegistry(policy=ApprovalPolicy("high", ApprovalsStore(tmp_path / "a.json")), metrics=metrics)

    def whoami(name: str) -> dict[str, str]:
        """Who am I."""
        return {"password": known, "note": f"key {shaped}", "name": name}

    registry.register(whoami, manual=ToolManual(name="whoami", risk="safe", mutating=False))
    metrics.record(ToolResult.failure("upstream_error", f"denied for {known}", metadata={"tool_name": "whoami"}))
    metrics.flush()
    runs = FileRunStore(tmp_path / "runs")
    now = datetime.now(timezone.utc)
    call = RecordedToolCall(call_id="c", name="whoami", arguments={"token": known}, status="success", result=shaped)
    runs.save(RunRecord(id="run_" + "a" * 32, status="answered", question=f"use {known}", started_at=now,
                        updated_at=now, tool_calls=[call], answer=f"done with {shaped}"))  # fmt: skip
    sources = ConsoleSources(registry=registry, metrics=metrics, runs=runs, secrets=(known,))
    with TestClient(create_app(sources, ConsoleSecurity(token=TOKEN, port=8777)), base_url=ORIGIN) as client:
        pages = [client.get(f"/tools?token={TOKEN}").text, client.get("/metrics/whoami").text]
        pages.append(client.get(f"/runs/run_{'a' * 32}").text)
        called = client.post(
            "/tools/whoami/call", data={"arg.name": "me", "csrf_token": _csrf(client)}, headers={"Origin": ORIGIN}
        )
        pages.append(called.text)
    assert "&#34;name&#34;: &#34;me&#34;" in called.text  # the call ran and its result is shown...
    for page in pages:
        assert known not in page  # ...without the secret the console knows
        assert shaped not in page  # ...or one that looks like a key
        assert "***" in page
    metrics.close()


def test_the_runs_page_lists_newest_first_and_filters_by_status_and_kind(tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    from tools.runs import FileRunStore, RunRecord

    runs = FileRunStore(tmp_path / "runs")
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    for i, (kind, status) in enumerate([("agent", "answered"), ("agent", "paused"), ("pipeline", "rejected")]):
        at = start + timedelta(minutes=i)
        runs.save(RunRecord(id=f"run_{i}", kind=kind, status=status, question=f"q{i}", started_at=at, updated_at=at))  # type: ignore[arg-type]
    sources = ConsoleSources(registry=LocalToolRegistry(), runs=runs)
    with TestClient(create_app(sources, ConsoleSecurity(token=TOKEN, port=8777)), base_url=ORIGIN) as client:
        listed = re.findall(r'class="run-link">(run_\d)<', client.get(f"/runs?token={TOKEN}").text)
        assert listed == ["run_2", "run_1", "run_0"]
        assert re.findall(r'class="run-link">(run_\d)<', client.get("/runs?status=paused").text) == ["run_1"]
        assert re.findall(r'class="run-link">(run_\d)<', client.get("/runs?kind=pipeline").text) == ["run_2"]
        assert re.findall(r'class="run-link">(run_\d)<', client.get("/runs?status=bogus").text) == listed


def test_the_project_file_is_trusted_and_revoked_from_the_settings_page(tmp_path: Path) -> None:
    from tools.store import RegistryStore

    project = tmp_path / "project" / ".tooldeck" / "registry.json"
    project.parent.mkdir(parents=True)
    entry = {"id": "git_log", "adapter_type": "cli", "cli": {"command": ["git", "log"], "actions": {"default": {}}}}
    project.write_text(json.dumps({"version": 1, "tools": {"git_log": entry}}))
    env = {"HOME": str(tmp_path / "home")}
    store = RegistryStore.from_env(env, project_dir=tmp_path / "project")
    settings = SettingsSources(file=SettingsFile.from_env(env), approvals=ApprovalsStore.from_env(env), env=env,
                               registry_files=store)  # fmt: skip
    app = create_app(ConsoleSources(registry=LocalToolRegistry(), settings=settings), ConsoleSecurity(TOKEN, 8777))
    with TestClient(app, base_url=ORIGIN) as client:
        page = client.get(f"/settings?token={TOKEN}").text
        assert "runs git log" in page
        match = re.search(r'name="sha256" value="([0-9a-f]{64})"', page)
        assert match is not None
        csrf, origin = _csrf(client), {"Origin": ORIGIN}
        stale = client.post("/settings/trust", data={"sha256": "0" * 64, "csrf_token": csrf}, headers=origin)
        assert stale.status_code == 409
        assert "changed since it was shown" in stale.text
        assert store.load_project().tools == {}
        done = client.post("/settings/trust", data={"sha256": match.group(1), "csrf_token": csrf}, headers=origin)
        assert done.status_code == 200
        assert "Trusted: its tools are used" in done.text
        assert list(store.load_project().tools) == ["git_log"]
        where = str(project.resolve())
        revoked = client.post("/settings/untrust", data={"path": where, "csrf_token": csrf}, headers=origin)
        assert revoked.status_code == 200
        assert f"No longer trusted: {where}" in revoked.text
        assert store.load_project().tools == {}
        again = client.post("/settings/untrust", data={"path": where, "csrf_token": csrf}, headers=origin)
        assert again.status_code == 409
        assert "was not trusted" in again.text
