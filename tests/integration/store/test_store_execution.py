"""ExecutionService with real components: a local HTTP API, real CLI programs, real tool
binaries and real MCP servers; readiness checks; artifacts; secrets never leak."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tools.store import (
    BinaryDirSource,
    ExecutionService,
    ManualFileSource,
    RegistryService,
    RegistryStore,
    ToolCatalog,
    ToolConfig,
)

from .conftest import SECRET, WeatherAPI, weather_manual


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    import os

    return {"PATH": os.environ.get("PATH", ""), "WEATHER_KEY": SECRET, "HOME": str(tmp_path)}


@pytest.fixture
def service(tmp_path: Path, env: dict[str, str]) -> Any:
    catalog = ToolCatalog(tmp_path / "catalog.sqlite3", env=env)
    svc = RegistryService(RegistryStore(tmp_path / "u.json", tmp_path / "p.json"), catalog=catalog, env=env)
    yield svc
    svc.close()


def _adopt_weather(service: RegistryService, api: WeatherAPI, tmp_path: Path) -> None:
    manual = tmp_path / "apis.json"
    manual.write_text(json.dumps(weather_manual(api.url)))
    assert service.catalog is not None
    service.catalog.add_source(ManualFileSource(name="apis", path=str(manual)))
    assert service.catalog.sync().ok
    service.adopt("apis:weather")


def test_http_tool_runs_with_its_secret_and_artifacts_mask_it(
    service: RegistryService, weather_api: WeatherAPI, tmp_path: Path
) -> None:
    _adopt_weather(service, weather_api, tmp_path)
    execution = ExecutionService(service, artifacts_dir=tmp_path / "runs")
    result = execution.execute("weather", params={"city": "Lisbon"})
    assert result.ok, result.error
    assert result.data == {"city": "Lisbon", "temp_c": 21.5, "sky": "clear"}
    assert weather_api.requests[-1]["key"] == SECRET
    bad = execution.execute("weather", params={"city": SECRET})  # the secret echoed back by the API
    assert bad.ok and bad.data["city"] == "***"
    artifacts = sorted((tmp_path / "runs").glob("*-weather.json"))
    assert len(artifacts) == 2
    text = "".join(a.read_text() for a in artifacts)
    assert SECRET not in text and '"city": "Lisbon"' in text
    assert not list((tmp_path / "runs").glob(".*.tmp"))


def test_http_errors_never_show_the_secret(service: RegistryService, weather_api: WeatherAPI, tmp_path: Path) -> None:
    _adopt_weather(service, weather_api, tmp_path)
    missing_city = ExecutionService(service).execute("weather", params={})
    assert missing_city.error is not None and missing_city.error.type == "validation_error"
    other = RegistryService(service.store, env={"WEATHER_KEY": "wrong-key-value"})
    denied = ExecutionService(other).execute("weather", params={"city": "Lisbon"})
    assert denied.error is not None and denied.error.type == "permission_denied"
    assert "wrong-key-value" not in json.dumps(denied.to_dict())
    other.close()


def test_not_adopted_names_the_exact_command(service: RegistryService, weather_api: WeatherAPI, tmp_path: Path) -> None:
    _adopt_weather(service, weather_api, tmp_path)
    service.remove("weather")
    result = ExecutionService(service).execute("weather", params={"city": "x"})
    assert result.error is not None and result.error.type == "unknown_tool"
    assert result.error.message == "tool 'weather' is not adopted; adopt it with: tooldeck adopt apis:weather"
    assert result.error.details == {"reason": "not_adopted", "adopt_command": "tooldeck adopt apis:weather"}
    unknown = ExecutionService(service).execute("nothing_like_it")
    assert unknown.error is not None and "tooldeck catalog search nothing_like_it" in unknown.error.message


def test_cli_tool_real_program_and_secret_masking(service: RegistryService, env: dict[str, str]) -> None:
    service.adopt(
        ToolConfig.model_validate(
            {
                "id": "say",
                "adapter_type": "cli",
                "cli": {"command": ["echo"], "actions": {"say": {"args": ["{text}"]}}},
            }
        )
    )
    service.adopt(
        ToolConfig.model_validate(
            {
                "id": "show_env",
                "adapter_type": "cli",
                "cli": {"command": ["env"], "actions": {"dump": {"args": [], "output": "lines"}}},
                "auth": {"env_var": "WEATHER_KEY"},
            }
        )
    )
    execution = ExecutionService(service)
    said = execution.execute("say", action="say", params={"text": "hello world"})
    assert (said.status, said.data) == ("success", "hello world")
    dumped = execution.execute("show_env")
    assert dumped.ok and "WEATHER_KEY=***" in dumped.data
    assert SECRET not in json.dumps(dumped.to_dict())
    hostile = execution.execute("say", params={"text": "--help"})
    assert hostile.error is not None and hostile.error.type == "validation_error"


def test_readiness_lists_what_is_missing(service: RegistryService, env: dict[str, str]) -> None:
    service.adopt(
        ToolConfig.model_validate(
            {
                "id": "ghost",
                "adapter_type": "cli",
                "cli": {"command": ["no-such-program-xyz"], "actions": {"go": {"args": []}}},
                "auth": {"env_var": "GHOST_TOKEN", "signup_url": "https://example.invalid/keys"},
            }
        )
    )
    service.adopt(
        ToolConfig.model_validate(
            {
                "id": "dead_server",
                "adapter_type": "mcp",
                "mcp": {"command": [sys.executable, "-c", "import sys; sys.exit(3)"]},
                "remote_tool": "anything",
            }
        )
    )
    execution = ExecutionService(service, server_check_timeout=20)
    ghost = execution.check_ready("ghost")
    assert not ghost.ready
    assert ghost.missing == [
        "environment variable GHOST_TOKEN is not set (get one at https://example.invalid/keys); export it and retry",
        "command 'no-such-program-xyz' is not on PATH; install it or put its directory on PATH",
    ]
    dead = execution.check_ready("dead_server")
    assert not dead.ready and dead.missing[0].startswith("the MCP server does not start")
    assert execution.check_ready("nope").missing[0].startswith("tool 'nope' is not adopted")


def test_binaries_from_a_directory(service: RegistryService, binaries: Path) -> None:
    assert service.catalog is not None
    service.catalog.add_source(BinaryDirSource(name="bin", path=str(binaries)))
    report = service.catalog.sync()
    assert report.ok and report.sources[0].entries == 2
    service.adopt("bin:word_count")
    service.adopt("bin:shout")
    execution = ExecutionService(service)
    assert execution.check_ready("word_count").ready
    counted = execution.execute("word_count", params={"text": "one two three"})
    assert (counted.status, counted.data) == ("success", {"words": 3})
    failed = execution.execute("word_count", params={"text": "fail"})
    assert failed.error is not None and "cannot count 'fail'" in failed.error.message
    refused = execution.execute("word_count", params={"text": "x", "extra": 1})
    assert refused.error is not None and refused.error.type == "validation_error"
    shouted = execution.execute("shout", params={"text": "hi"})
    assert (shouted.status, shouted.data) == ("success", "HI")
    (binaries / "word_count").unlink()
    gone = execution.check_ready("word_count")
    assert not gone.ready and "does not exist" in gone.missing[0]


@pytest.mark.mcp
def test_mcp_tools_share_one_server_and_find_by_capability(service: RegistryService) -> None:
    from tools.store import MCPServerSource

    assert service.catalog is not None
    service.catalog.add_source(MCPServerSource(name="time", command=[sys.executable, "-m", "mcp_server_time"]))
    assert service.catalog.sync().ok
    suggested = service.find_by_capability("current_time")
    assert suggested.available == [] and [e.catalog_id for e in suggested.suggested] == ["time:get_current_time"]
    service.adopt("time:get_current_time")
    service.adopt("time:convert_time")
    match = service.find_by_capability("Current-Time")
    assert [c.id for c in match.available] == ["get_current_time"] and match.suggested == []
    execution = ExecutionService(service)
    now = execution.execute("get_current_time", params={"timezone": "UTC"})
    assert now.ok and now.data["timezone"] == "UTC"
    converted = execution.execute(
        "convert_time", params={"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Lisbon"}
    )
    assert converted.ok, converted.error
    bad = execution.execute("get_current_time", params={"timezone": 5})
    assert bad.error is not None and bad.error.type == "validation_error"
