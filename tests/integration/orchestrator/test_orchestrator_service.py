"""OrchestratorService: explicit registration of every builtin tool, aliases, model choice."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from orchestrator import OfflineModel, OpenAIChatModel, OrchestratorService, ServiceConfigError, Settings
from tools.builtin.modules import MODULE_ALIASES

MODULE_OLD_NAMES = [alias.name for alias in MODULE_ALIASES]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({}, data_dir=str(tmp_path / "data"), context_url=f"http://127.0.0.1:{closed_port()}")


def test_registers_every_builtin_tool_and_the_old_names(settings: Settings) -> None:
    with OrchestratorService(settings) as service:
        assert service.registry.names() == [
            "math_solver",
            "store_knowledge",
            "search_knowledge",
            "execute_code",
            "web",
            "web_search",
            "load_web_page",
            "module_pipeline",
            "module_admin",
            *MODULE_OLD_NAMES,
            "user_context",
            "get_user_context",
            "get_daily_briefing",
            "get_commute_time",
            "query_finance",
        ]
        assert isinstance(service.model, OfflineModel)
        assert service.model_description == "offline model (embedded, deterministic)"
        commute = service.registry.call_tool("get_commute_time", destination="office")
        assert commute.ok, commute.error
        assert commute.data["categories"]["commute"]["status"] == "unavailable"
        assert "cannot connect" in commute.data["categories"]["commute"]["reason"]
        assert (settings.data_dir / "knowledge.sqlite3").exists()
    service.close()  # closing twice is harmless


def test_base_url_selects_the_openai_compatible_client(settings: Settings) -> None:
    remote = Settings.from_env(
        {"KEY": "sk-x"},
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="KEY",
        data_dir=str(settings.data_dir),
        context_url=settings.context_url,
    )
    with OrchestratorService(remote) as service:
        assert isinstance(service.model, OpenAIChatModel)
        assert service.model_description == "m at http://127.0.0.1:9/v1/chat/completions"
        assert service.graph.max_iterations == 10


def test_unusable_data_dir_is_a_config_error_naming_the_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ServiceConfigError, match="TOOLDECK_DATA_DIR"):
        OrchestratorService(Settings.from_env({}, data_dir=str(blocker / "data")))


def test_an_agent_type_gets_only_its_tools(settings: Settings, tmp_path: Path) -> None:
    reviewer = settings.model_copy(update={"agent": "reviewer"})
    with OrchestratorService(reviewer, workspace=tmp_path) as service:
        assert service.tools.names() == ["read", "glob", "grep", "skill"]  # the workspace, read-only; no builtin
        offered = service.graph.tool_definitions()
        assert [t["function"]["name"] for t in offered] == ["read", "glob", "grep", "skill"]
        run = service.ask("What is 12*(3+4)?")
        assert run.tool_results == []
        denied = service.tools.call_tool("math_solver", expression="1+1")
        assert denied.error is not None and denied.error.type == "permission_denied"
        assert "reviewer" in denied.error.message
    researcher = settings.model_copy(update={"agent": "researcher"})
    with OrchestratorService(researcher, workspace=tmp_path) as service:
        assert service.tools.names() == ["web", "web_search", "load_web_page", "read", "glob", "grep", "skill"]
        names = [t["function"]["name"] for t in service.graph.tool_definitions()]
        assert names == ["web", "read", "glob", "grep", "skill"]  # old names: callable, not offered


def test_routing_overrides_come_from_a_file_and_bad_files_are_config_errors(settings: Settings, tmp_path: Path) -> None:
    config = tmp_path / "routing.toml"
    config.write_text('[profiles.reviewer]\nadd_categories = ["compute"]\n')
    reviewer = settings.model_copy(update={"agent": "reviewer", "routing_config": config})
    with OrchestratorService(reviewer, workspace=tmp_path) as service:
        assert service.tools.names() == ["math_solver", "read", "glob", "grep", "skill"]
        assert service.ask("What is 12*(3+4)?").answer.startswith("12 * (3 + 4) = 84")
    config.write_text('[profiles.reviewer]\nadd_categories = ["telepathy"]\n')
    with pytest.raises(
        ServiceConfigError, match=r"(?s)routing.toml.*add_categories\[0\]: .telepathy. is not a category"
    ):
        OrchestratorService(settings.model_copy(update={"agent": "reviewer", "routing_config": config}))
