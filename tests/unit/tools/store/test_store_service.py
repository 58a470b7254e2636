"""RegistryService, ToolBuilder manuals and ToolCatalog (manual files, search), without network."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tools.errors import ToolDefinitionError
from tools.routing import ToolCategory
from tools.store import (
    AdoptedTool,
    AlreadyAdoptedError,
    CatalogError,
    ManualFileSource,
    ManualOverrides,
    RegistryService,
    RegistryStore,
    ToolCatalog,
    ToolConfig,
    ToolNotAdoptedError,
    UnknownCatalogEntryError,
    derive_capabilities,
    manual_for,
)

from .conftest import http_config

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture
def catalog(tmp_path: Path) -> ToolCatalog:
    manual = {
        "tools": [
            {
                "name": "weather",
                "description": "Current weather for a city.",
                "tags": ["weather"],
                "inputs": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                "tool_call_template": {
                    "call_template_type": "http",
                    "url": "http://127.0.0.1:9/v1/weather",
                    "http_method": "GET",
                    "auth": {"auth_type": "api_key", "api_key": "${WEATHER_KEY}", "var_name": "X-Api-Key"},
                },
            },
            {
                "id": "say",
                "adapter_type": "cli",
                "description": "Print a text.",
                "cli": {"command": ["echo"], "actions": {"say": {"args": ["{text}"]}}},
            },
        ]
    }
    (tmp_path / "manual.json").write_text(json.dumps(manual))
    found = ToolCatalog(tmp_path / "catalog.sqlite3")
    found.add_source(ManualFileSource(name="apis", path=str(tmp_path / "manual.json")))
    assert found.sync().ok
    return found


@pytest.fixture
def service(store: RegistryStore, catalog: ToolCatalog) -> Any:
    svc = RegistryService(store, catalog=catalog, clock=lambda: NOW)
    yield svc
    svc.close()


def test_utcp_manual_becomes_an_http_template(catalog: ToolCatalog) -> None:
    entry = catalog.get("apis:weather")
    template = entry.template
    assert template.http is not None and template.http.base_url == "http://127.0.0.1:9"
    endpoint = template.http.endpoints["call"]
    assert (endpoint.method, endpoint.path, endpoint.query) == ("GET", "/v1/weather", ["city"])
    assert template.auth is not None and template.auth.model_dump(exclude_none=True) == {
        "env_var": "WEATHER_KEY",
        "kind": "header",
        "header": "X-Api-Key",
    }
    assert entry.capabilities == ("weather",)


def test_search_ranks_and_falls_back_to_any_word(catalog: ToolCatalog) -> None:
    assert [e.catalog_id for e in catalog.search("weather city")] == ["apis:weather"]
    assert [e.catalog_id for e in catalog.search("weather nonsense")] == ["apis:weather"]
    assert catalog.search("zzz") == []
    assert len(catalog.search("")) == 2
    assert catalog.search('"; DROP TABLE entries; --') == []
    assert len(catalog.entries()) == 2


def test_unknown_catalog_id_suggests_a_search(catalog: ToolCatalog) -> None:
    with pytest.raises(UnknownCatalogEntryError, match="tooldeck catalog search 'nope'"):
        catalog.get("apis:nope")


def test_failed_source_keeps_its_entries(catalog: ToolCatalog, tmp_path: Path) -> None:
    (tmp_path / "manual.json").write_text("[1, 2")
    report = catalog.sync()
    assert not report.ok and report.sources[0].entries == 2
    assert "manual.json:1: not valid JSON" in (report.sources[0].error or "")
    assert len(catalog.entries()) == 2


@pytest.mark.parametrize(
    ("manual", "problem"),
    [
        ({"tools": "x"}, "expected"),
        ({"tools": [5]}, "tools[0]: each tool manual must be a JSON object"),
        ({"tools": [{"name": "x", "tool_call_template": {"call_template_type": "grpc"}}]}, "only 'tool_call_template'"),
        (
            {"tools": [{"name": "x", "tool_call_template": {"call_template_type": "http", "url": "file:///etc"}}]},
            "must be an http(s) URL",
        ),
        (
            {
                "tools": [
                    {
                        "name": "x",
                        "tool_call_template": {
                            "call_template_type": "http",
                            "url": "http://h/x",
                            "auth": {"auth_type": "api_key", "api_key": "literal-secret"},
                        },
                    }
                ]
            },
            "must name an environment variable",
        ),
    ],
)
def test_bad_manual_files(tmp_path: Path, manual: Any, problem: str) -> None:
    (tmp_path / "m.json").write_text(json.dumps(manual))
    with pytest.raises(CatalogError) as info:
        ManualFileSource(name="m", path=str(tmp_path / "m.json")).collect({})
    assert problem in str(info.value)
    assert "literal-secret" not in str(info.value)


def test_a_manual_files_claims_stay_hints_and_never_trust_its_own_server(tmp_path: Path) -> None:
    # A catalog file is a third party's: its "manual" and an MCP server it calls "trusted"
    # must not make an innocently named tool safe or read-only when a person adopts it.
    entry = {
        "id": "tidy",
        "adapter_type": "mcp",
        "remote_tool": "tidy_up",
        "mcp": {"command": ["/nonexistent/server"], "trusted": True},
        "hints": {"read_only": True, "destructive": False},
        "manual": {"risk": "safe", "mutating": False, "category": "file-read"},
    }
    (tmp_path / "claims.json").write_text(json.dumps({"tools": [entry]}))
    catalog = ToolCatalog(tmp_path / "catalog.sqlite3")
    catalog.add_source(ManualFileSource(name="claims", path=str(tmp_path / "claims.json")))
    assert catalog.sync().ok
    store = RegistryStore(tmp_path / "user.json", tmp_path / ".tooldeck" / "registry.json")
    service = RegistryService(store, catalog=catalog, clock=lambda: NOW)
    try:
        adopted = service.adopt("claims:tidy")
    finally:
        service.close()
    assert adopted.mcp is not None and adopted.mcp.trusted is False
    assert adopted.manual.is_empty() and adopted.hints is not None and adopted.hints.risk == "safe"
    manual = manual_for(adopted)
    assert (manual.risk, manual.mutating, manual.origin.risk) == ("moderate", True, "default")
    assert not manual.read_only_declared
    assert "the server claims it is safe; ignored: the server is not trusted" in manual.origin.notes


def test_adopt_from_catalog_records_provenance_and_hash(service: RegistryService) -> None:
    adopted = service.adopt("apis:weather", tool_id="forecast", capabilities=["Local Weather"])
    assert adopted.id == "forecast"
    assert adopted.adopted_from == "apis:weather" and adopted.adopted_at == NOW
    assert adopted.capabilities == ("weather", "local_weather")
    assert adopted.version_hash == adopted.compute_version_hash()
    assert service.store.load_project().tools["forecast"] == adopted
    assert service.is_approved("forecast") and not service.needs_reapproval("forecast")
    with pytest.raises(AlreadyAdoptedError, match="--replace"):
        service.adopt("apis:weather", tool_id="forecast")
    service.adopt("apis:weather", tool_id="forecast", replace=True)


def test_edited_entry_needs_reapproval(service: RegistryService) -> None:
    service.adopt("apis:say")

    def edit(registry: Any) -> Any:
        config = registry.tools["say"]
        return registry.with_tool(config.model_copy(update={"description": "Something else."}))

    service.store.update_project(edit)
    assert service.needs_reapproval("say") and not service.is_approved("say")
    service.store.update_project(lambda r: r.with_tool(r.tools["say"].model_copy(update={"version_hash": None})))
    assert service.is_approved("say")  # hand-written entries are approved by declaration
    assert not service.is_approved("missing") and not service.needs_reapproval("missing")


def test_adopt_refuses_a_config_that_cannot_work(service: RegistryService) -> None:
    bad_schema = ToolConfig.model_validate(
        {"id": "bad", "adapter_type": "binary", "binary": {"path": "/bin/true"}, "parameters": {"properties": 5}}
    )
    with pytest.raises(ToolDefinitionError, match="not a valid JSON schema"):
        service.adopt(bad_schema)
    assert service.list_tools() == []


def test_remove_and_not_adopted_messages(service: RegistryService) -> None:
    service.adopt("apis:weather")
    assert service.remove("weather").id == "weather"
    with pytest.raises(ToolNotAdoptedError) as info:
        service.get("weather")
    assert info.value.adopt_command == "tooldeck adopt apis:weather"
    service.store.update_user(lambda r: r.with_tool(http_config("mine")))
    with pytest.raises(ToolNotAdoptedError, match="declared in the user registry"):
        service.remove("mine")


def test_find_by_capability_prefers_adopted(service: RegistryService) -> None:
    match = service.find_by_capability("weather")
    assert not match.has_tool and [e.catalog_id for e in match.suggested] == ["apis:weather"]
    service.adopt("apis:weather")
    match = service.find_by_capability("WEATHER")
    assert match.has_tool and [c.id for c in match.available] == ["weather"] and match.suggested == []
    assert service.find_by_capability("teleport").suggested == []


def test_build_tools_with_manuals_and_overrides(service: RegistryService) -> None:
    service.adopt("apis:weather")
    service.adopt(
        http_config("delete_city", manual=ManualOverrides(category=ToolCategory.WEB, risk="dangerous", mutating=True))
    )
    tools = {t.name: t for t in service.build_tools()}
    assert sorted(tools) == ["delete_city", "weather"]
    weather = tools["weather"]
    assert isinstance(weather, AdoptedTool)
    assert weather.parameters == {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    manual = weather.get_manual()
    assert (manual.source, manual.server, manual.category, manual.capabilities) == (
        "http",
        "127.0.0.1:9",
        ToolCategory.UNCLASSIFIED,
        ("weather",),
    )
    assert (manual.risk, manual.mutating, manual.origin.risk) == ("moderate", True, "default")
    risky = tools["delete_city"].get_manual()
    assert (risky.category, risky.risk, risky.mutating) == (ToolCategory.WEB, "dangerous", True)
    assert (risky.origin.category, risky.origin.risk, risky.origin.mutating) == ("operator",) * 3
    derived = manual_for(http_config("delete_city"))
    assert (derived.category, derived.risk, derived.mutating) == (ToolCategory.UNCLASSIFIED, "dangerous", True)
    assert derived.origin.risk == "name"


def test_build_tools_skips_what_cannot_be_built(service: RegistryService, monkeypatch: pytest.MonkeyPatch) -> None:
    service.adopt(http_config("a"))
    service.adopt(http_config("b"))
    real = service.builder.build

    def flaky(config: ToolConfig, **kw: Any) -> Any:
        if config.id == "a":
            raise ToolDefinitionError("a is broken")
        return real(config, **kw)

    monkeypatch.setattr(service.builder, "build", flaky)
    skipped: dict[str, str] = {}
    assert [t.name for t in service.build_tools(skipped=skipped)] == ["b"]
    assert skipped == {"a": "a is broken"}
    with pytest.raises(ToolDefinitionError):
        service.build_tools()


def test_derive_capabilities() -> None:
    assert derive_capabilities("get_current_time") == ("get_current_time", "current_time")
    assert derive_capabilities("convert-time", ["Time Zones"]) == ("time_zones", "convert_time", "time")
    assert derive_capabilities("weather") == ("weather",)
